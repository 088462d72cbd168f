package io.gnomon.bench;

import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.internal.RunAs;
import io.gnomon.testkit.internal.Tools;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Instructions a backend executes, counted by valgrind's callgrind in a single-user backend ({@code postgres
 * --single}) of a stopped cluster: a server-side cost that does not move with the machine's load, for comparisons the
 * clock cannot settle on a busy machine. The cost of one iteration of a loop is the difference between a long run and a
 * short one of the same statement, divided by the difference in iterations: the backend's start, its catalog caches
 * and the statement's first planning cancel out.
 */
final class Callgrind {
  private Callgrind() {}

  /** Why it cannot measure here (no valgrind, or a cluster without local files), or empty when it can. */
  static Optional<String> unavailable(PgCluster pg) {
    if (valgrind().isEmpty()) {
      return Optional.of("valgrind is not installed (apt-get install valgrind; bench/run.sh installs it as root)");
    }
    if (pg.dataDirectory().isEmpty() || pg.binDirectory().isEmpty()) {
      return Optional.of("the cluster has no local data directory or binaries");
    }
    return Optional.empty();
  }

  /**
   * Instructions per iteration of {@code statement}: {@code statement.formatted(n, first)} is run for {@code small}
   * and {@code large} iterations, each in its own single-user backend, on {@code database} of the stopped cluster
   * {@code pg}; the {@code first} of the large run follows the small run's last.
   */
  static double perIteration(PgCluster pg, String database, String statement, int small, int large, int first) {
    long a = instructions(pg, database, statement.formatted(small, first));
    long b = instructions(pg, database, statement.formatted(large, first + small));
    return (b - a) / (double) (large - small);
  }

  /** The instructions of one single-user backend that runs {@code sql} on {@code database} and exits. */
  static long instructions(PgCluster pg, String database, String sql) {
    if (pg.isRunning()) {
      throw new IllegalStateException("callgrind runs a single-user backend: stop the cluster first");
    }
    Path data = pg.dataDirectory().orElseThrow();
    Path postgres = pg.binDirectory().orElseThrow().resolve("postgres");
    RunAs as = RunAs.forLocalBinaries();
    Path dir = null;
    try {
      dir = Files.createTempDirectory("gnomon-callgrind");
      as.chown(dir);
      Path out = dir.resolve("callgrind.out");
      Path log = dir.resolve("backend.log");
      List<String> command = new ArrayList<>(List.of(valgrind().orElseThrow().toString(), "--tool=callgrind",
          "--callgrind-out-file=" + out, postgres.toString(), "--single", "-D", data.toString(), database));
      Process p = new ProcessBuilder(as.wrap(command))
          .redirectErrorStream(true).redirectOutput(log.toFile()).start();
      p.getOutputStream().write((sql + "\n").getBytes(StandardCharsets.UTF_8));
      p.getOutputStream().close();
      if (!p.waitFor(30, TimeUnit.MINUTES)) {
        p.destroyForcibly();
        throw new IllegalStateException("callgrind of '" + sql + "' on " + database + " did not end in 30 minutes");
      }
      String output = Files.readString(log, StandardCharsets.UTF_8);
      // a failed statement does not end a single-user backend: its log says so
      if (p.exitValue() != 0 || output.contains("ERROR:") || !Files.exists(out)) {
        throw new IllegalStateException("callgrind of '" + sql + "' on " + database + " failed (exit "
            + p.exitValue() + "): " + output.strip());
      }
      for (String line : Files.readAllLines(out, StandardCharsets.UTF_8)) {
        if (line.startsWith("summary:") || line.startsWith("totals:")) {
          return Long.parseLong(line.substring(line.indexOf(':') + 1).trim().split("\\s+")[0]);
        }
      }
      throw new IllegalStateException("callgrind wrote no instruction total to " + out);
    } catch (IOException e) {
      throw new IllegalStateException("callgrind of '" + sql + "' on " + database + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while callgrind ran", e);
    } finally {
      if (dir != null) {
        try (var files = Files.walk(dir)) {
          files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException e) {
          // a temporary directory left behind is harmless
        }
      }
    }
  }

  private static Optional<Path> valgrind() {
    return Tools.onPath("valgrind");
  }
}
