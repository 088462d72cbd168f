package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Finding and signalling the processes of a cluster. Every PostgreSQL server process changes its
 * working directory to the data directory, so the processes of a cluster are exactly those whose
 * {@code /proc/PID/cwd} lies inside the cluster's directory, including backends orphaned by a
 * killed postmaster.
 */
final class ClusterProcesses {

  private ClusterProcesses() {}

  /** Returns live processes whose working directory is {@code dir} or inside it. */
  static List<ProcessHandle> under(Path dir) {
    String prefix = dir.toAbsolutePath().normalize().toString();
    long self = ProcessHandle.current().pid();
    return ProcessHandle.allProcesses()
        .filter(h -> h.pid() != self)
        .filter(h -> cwdUnder(h.pid(), prefix))
        .collect(Collectors.toList());
  }

  private static boolean cwdUnder(long pid, String prefix) {
    try {
      String cwd = Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "cwd")).toString();
      return cwd.equals(prefix)
          || cwd.startsWith(prefix + "/")
          || cwd.startsWith(prefix + " (deleted)");
    } catch (IOException | UnsupportedOperationException | SecurityException e) {
      return false;
    }
  }

  /**
   * Sends a signal with {@code kill -s}; SIGKILL falls back to the JDK when {@code kill} fails.
   *
   * @param pid the process
   * @param signal the signal name without {@code SIG}: INT, QUIT, HUP, KILL
   * @return whether the signal was delivered
   */
  static boolean signal(long pid, String signal) {
    if (ProcessHandle.of(pid).isEmpty()) {
      return false;
    }
    Path kill = Tools.onPath("kill").orElse(Path.of("/bin/kill"));
    try {
      Commands.Result r =
          Commands.run(
              List.of(kill.toString(), "-s", signal, Long.toString(pid)),
              null,
              null,
              Duration.ofSeconds(10));
      if (r.exitCode() == 0) {
        return true;
      }
    } catch (PgClusterException e) {
      // fall through
    }
    return "KILL".equals(signal) && ProcessHandle.of(pid).map(ProcessHandle::destroyForcibly).orElse(false);
  }

  /**
   * SIGKILLs every process under {@code dir} until none is left.
   *
   * @throws PgClusterException if processes survive {@code timeout}
   */
  static void killAll(Path dir, Duration timeout) {
    boolean gone =
        Poll.until(
            timeout,
            () -> {
              List<ProcessHandle> alive = under(dir);
              alive.forEach(ProcessHandle::destroyForcibly);
              return alive.isEmpty();
            });
    if (!gone) {
      throw new PgClusterException(
          "PostgreSQL processes under "
              + dir
              + " survived SIGKILL for "
              + timeout.toSeconds()
              + " s: "
              + under(dir).stream().map(h -> Long.toString(h.pid())).collect(Collectors.joining(", ")));
    }
  }

  /**
   * Asks the postmasters under {@code dir} for an immediate shutdown (SIGQUIT, which also releases
   * shared memory), waits up to {@code grace}, then SIGKILLs whatever is left.
   */
  static void shutDownAll(Path dir, Duration grace) {
    List<ProcessHandle> all = under(dir);
    if (all.isEmpty()) {
      return;
    }
    List<Long> pids = all.stream().map(ProcessHandle::pid).collect(Collectors.toList());
    for (ProcessHandle h : all) {
      boolean childOfCluster = h.parent().map(p -> pids.contains(p.pid())).orElse(false);
      if (!childOfCluster) {
        signal(h.pid(), "QUIT");
      }
    }
    Poll.until(grace, () -> under(dir).isEmpty());
    killAll(dir, Duration.ofSeconds(10));
  }
}
