package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.function.Supplier;

/**
 * The postmaster process of one cluster: started as a child of the JVM (never through {@code pg_ctl
 * start}) on a loopback port with a private socket directory, its output appended to the cluster's
 * log; ready when a JDBC connection succeeds. Also the signals that stop or kill it, and the
 * cleanup that makes a restart after a crash possible. Not thread-safe: {@link LocalCluster}
 * serialises calls.
 */
final class Postmaster {

  static final String HOST = "127.0.0.1";
  static final String USER = "postgres";
  static final String ADMIN_DATABASE = "postgres";

  private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
  private static final int PORT_ATTEMPTS = 5;

  private final Binaries binaries;
  private final RunAs runAs;
  private final ClusterDirectory dir;
  private final String clusterName;
  private final Duration startupTimeout;
  private final Supplier<String> description;
  private volatile int port;
  private volatile Process process;
  private boolean portSettled;

  /**
   * @param clusterName the {@code cluster_name} to run with (a standby's application name), or null
   * @param description describes the cluster for messages
   */
  Postmaster(
      Binaries binaries,
      RunAs runAs,
      ClusterDirectory dir,
      String clusterName,
      int port,
      Duration startupTimeout,
      Supplier<String> description) {
    this.binaries = binaries;
    this.runAs = runAs;
    this.dir = dir;
    this.clusterName = clusterName;
    this.port = port;
    this.startupTimeout = startupTimeout;
    this.description = description;
  }

  int port() {
    return port;
  }

  boolean isRunning() {
    Process p = process;
    return p != null && p.isAlive();
  }

  long pid() {
    return process.pid();
  }

  /** Returns a URL of the cluster's database, for the first port only after it is settled. */
  String jdbcUrl(String database) {
    return JdbcUrls.of(HOST, port, database, USER);
  }

  /**
   * Starts the postmaster and waits until it accepts connections. Until the first start succeeds,
   * a port taken by someone else is replaced by another free one.
   */
  void start() {
    cleanUpAfterPreviousRun();
    int attempts = portSettled ? 1 : PORT_ATTEMPTS;
    for (int attempt = 1; ; attempt++) {
      long offset = LogFiles.size(dir.log());
      launch();
      try {
        awaitReady(offset);
        portSettled = true;
        return;
      } catch (PortTakenException e) {
        if (attempt >= attempts) {
          throw new PgClusterException(
              "Port "
                  + port
                  + " is taken by another process, so "
                  + description.get()
                  + " cannot start"
                  + LogFiles.section("server log", LogFiles.tailFrom(dir.log(), offset, 20)));
        }
        port = FreePorts.pick();
      }
    }
  }

  /** Waits until a running postmaster accepts connections (after a crash cycle, say). */
  void awaitReady() {
    awaitReady(Math.max(0, LogFiles.size(dir.log()) - 16 * 1024));
  }

  /**
   * Asks for a fast shutdown (SIGINT: sessions are ended, open transactions rolled back) and
   * waits for the postmaster to exit.
   *
   * @return false if it did not exit within {@code timeout} (it is then killed)
   */
  boolean stopFast(Duration timeout) {
    return stopWith("INT", timeout);
  }

  /**
   * Asks for an immediate shutdown (SIGQUIT: quick, and unlike SIGKILL it releases shared
   * memory), then kills whatever is left.
   */
  void shutDownImmediately(Duration grace) {
    stopWith("QUIT", grace);
    ClusterProcesses.killAll(dir.root(), KILL_TIMEOUT);
  }

  private boolean stopWith(String signal, Duration timeout) {
    Process p = process;
    if (p == null || !p.isAlive()) {
      process = null;
      return true;
    }
    ClusterProcesses.signal(p.pid(), signal);
    if (!Poll.exited(p, timeout)) {
      kill();
      return false;
    }
    process = null;
    return true;
  }

  /** Sends SIGHUP so the server rereads its configuration. */
  void reload() {
    Process p = process;
    if (p != null && p.isAlive()) {
      ClusterProcesses.signal(p.pid(), "HUP");
    }
  }

  /** SIGKILLs the postmaster and every process left in the cluster directory. */
  void kill() {
    Process p = process;
    if (p != null) {
      p.destroyForcibly();
      Poll.exited(p, KILL_TIMEOUT);
    }
    process = null;
    ClusterProcesses.killAll(dir.root(), KILL_TIMEOUT);
  }

  /** Opens a connection for probing, or returns null when the server refuses. */
  Connection tryConnect() {
    try {
      return Jdbc.connect(jdbcUrl(ADMIN_DATABASE), probeProperties());
    } catch (SQLException e) {
      return null;
    }
  }

  private void launch() {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                binaries.tool("postgres").toString(),
                "-D",
                dir.data().toString(),
                "-p",
                Integer.toString(port),
                "-k",
                dir.socketDir().toString(),
                "-c",
                "listen_addresses=" + HOST));
    if (clusterName != null) {
      // A standby's walreceiver uses cluster_name as its application_name.
      cmd.add("-c");
      cmd.add("cluster_name=" + clusterName);
    }
    ProcessBuilder pb = Commands.builder(runAs.wrap(cmd), dir.root());
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(dir.log().toFile()));
    try {
      process = pb.start();
    } catch (IOException e) {
      throw new PgClusterException(
          "Could not start " + String.join(" ", pb.command()) + ": " + e.getMessage(), e);
    }
  }

  private void awaitReady(long logOffset) {
    Process p = process;
    boolean ready = Poll.until(startupTimeout, () -> !p.isAlive() || canConnect());
    if (!p.isAlive()) {
      String log = LogFiles.tailFrom(dir.log(), logOffset, 30);
      process = null;
      ClusterProcesses.killAll(dir.root(), KILL_TIMEOUT);
      if (!portSettled
          && (log.contains("Address already in use")
              || log.contains("could not create any TCP/IP sockets"))) {
        throw new PortTakenException();
      }
      throw new PgClusterException(
          "PostgreSQL exited with code "
              + p.exitValue()
              + " while starting "
              + description.get()
              + LogFiles.section("server log " + dir.log(), log));
    }
    if (!ready) {
      String log = LogFiles.tailFrom(dir.log(), logOffset, 30);
      kill();
      throw new PgClusterException(
          description.get()
              + " did not accept connections within "
              + startupTimeout.toSeconds()
              + " s and was killed; raise ClusterOptions.startupTimeout on a slow machine"
              + LogFiles.section("server log " + dir.log(), log));
    }
  }

  private boolean canConnect() {
    try (Connection c = Jdbc.connect(jdbcUrl(ADMIN_DATABASE), probeProperties())) {
      return !c.isClosed();
    } catch (SQLException e) {
      return false;
    }
  }

  private static Properties probeProperties() {
    Properties p = new Properties();
    p.setProperty("connectTimeout", "5");
    p.setProperty("socketTimeout", "10");
    p.setProperty("ApplicationName", "gnomon-testkit");
    return p;
  }

  /**
   * Makes a restart after a crash possible: kills orphaned server processes (they would keep the
   * old shared memory attached) and removes lock files naming a live process that is not ours
   * (PID reuse), which would make the postmaster refuse to start. A lock file naming a dead
   * process is left alone: PostgreSQL then recycles the old shared-memory segment itself.
   */
  private void cleanUpAfterPreviousRun() {
    ClusterProcesses.killAll(dir.root(), KILL_TIMEOUT);
    removeLockIfForeign(dir.data().resolve("postmaster.pid"));
    removeLockIfForeign(dir.socketDir().resolve(".s.PGSQL." + port + ".lock"));
  }

  private static void removeLockIfForeign(Path lockFile) {
    String text = Commands.read(lockFile);
    if (text.isEmpty()) {
      return;
    }
    try {
      long pid = Long.parseLong(text.split("\n", 2)[0].trim());
      if (ProcessHandle.of(pid).isPresent()) {
        Files.deleteIfExists(lockFile);
      }
    } catch (NumberFormatException | IOException e) {
      try {
        Files.deleteIfExists(lockFile);
      } catch (IOException ignored) {
        // PostgreSQL will report the lock file itself
      }
    }
  }

  /** The postmaster could not bind its port; the first start retries with another one. */
  private static final class PortTakenException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PortTakenException() {
      super(null, null, false, false);
    }
  }
}
