package io.gnomon.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.OptionalLong;

/**
 * CPU time (user + system) of a connection's server process, from {@code /proc/PID/stat}, in
 * microseconds. Available only when the server runs on this machine; resolution is one clock tick
 * (10 ms), so it is read around loops of thousands of statements.
 */
final class BackendCpu {
  private static final long MICROS_PER_TICK = 10_000; // getconf CLK_TCK = 100 on Linux

  private final int pid;

  BackendCpu(Connection c) {
    this.pid = (int) Db.number(c, "select pg_backend_pid()");
  }

  OptionalLong micros() {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      // fields after the command: state(3) ... utime(14) stime(15)
      long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]);
      return OptionalLong.of(ticks * MICROS_PER_TICK);
    } catch (IOException | RuntimeException e) {
      return OptionalLong.empty();
    }
  }

  /** The process's minor page faults so far (field 10 of {@code /proc/PID/stat}), when readable. */
  OptionalLong minorFaults() {
    try {
      String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      return OptionalLong.of(Long.parseLong(f[7]));
    } catch (IOException | RuntimeException e) {
      return OptionalLong.empty();
    }
  }
}
