package io.gnomon.bench;

import io.gnomon.testkit.PgCluster;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * CPU time of a whole throwaway cluster (its postmaster, every live child process, and the children that exited:
 * pgbench's backends, a consumer's, the ticker's) and of this JVM (every thread: JIT compilers and GC included), read
 * from {@code /proc}. What a measurement's writers and consumers cost the machine, counted apart from other load.
 */
final class ClusterCpu {
  private static final long MICROS_PER_TICK = 10_000; // getconf CLK_TCK = 100 on Linux

  private final long postmaster;

  private ClusterCpu(long postmaster) {
    this.postmaster = postmaster;
  }

  /** The cluster's CPU reader, when its data directory and postmaster.pid are readable. */
  static ClusterCpu of(PgCluster pg) {
    try {
      Path dir = pg.dataDirectory().orElse(null);
      if (dir == null) {
        return new ClusterCpu(-1);
      }
      String first = Files.readAllLines(dir.resolve("postmaster.pid")).get(0).trim();
      return new ClusterCpu(Long.parseLong(first));
    } catch (IOException | RuntimeException e) {
      return new ClusterCpu(-1);
    }
  }

  /**
   * CPU microseconds the cluster has used so far (exited children included), when readable. A child that has exited
   * but that the postmaster has not yet reaped (a zombie, as pgbench's backend is for a moment after pgbench ends)
   * shows no CPU of its own and is not yet in the postmaster's children's total: the read waits (up to two seconds)
   * until no child is a zombie. (One read in that moment counted 9 µs of CPU per transaction instead of about 80.)
   */
  OptionalLong serverMicros() {
    if (postmaster < 0) {
      return OptionalLong.empty();
    }
    for (int i = 0; i < 100 && hasZombieChild(); i++) {
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        break;
      }
    }
    String[] own = stat(postmaster);
    if (own == null) {
      return OptionalLong.empty();
    }
    // utime, stime, cutime, cstime (fields 14-17)
    long ticks = Long.parseLong(own[11]) + Long.parseLong(own[12]) + Long.parseLong(own[13])
        + Long.parseLong(own[14]);
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      ticks += procs.map(p -> p.getFileName().toString()).filter(n -> n.chars().allMatch(Character::isDigit))
          .map(n -> stat(Long.parseLong(n)))
          .filter(f -> f != null && Long.parseLong(f[1]) == postmaster)
          .mapToLong(f -> Long.parseLong(f[11]) + Long.parseLong(f[12])).sum();
    } catch (IOException | RuntimeException e) {
      return OptionalLong.empty();
    }
    return OptionalLong.of(ticks * MICROS_PER_TICK);
  }

  private boolean hasZombieChild() {
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      return procs.map(p -> p.getFileName().toString()).filter(n -> n.chars().allMatch(Character::isDigit))
          .map(n -> stat(Long.parseLong(n)))
          .anyMatch(f -> f != null && Long.parseLong(f[1]) == postmaster && "Z".equals(f[0]));
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** CPU microseconds so far of each live process of the cluster (postmaster's children), by pid. */
  java.util.Map<Long, Long> perProcessMicros() {
    java.util.Map<Long, Long> out = new java.util.HashMap<>();
    if (postmaster < 0) {
      return out;
    }
    try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
      procs.map(p -> p.getFileName().toString()).filter(n -> n.chars().allMatch(Character::isDigit))
          .forEach(n -> {
            String[] f = stat(Long.parseLong(n));
            if (f != null && Long.parseLong(f[1]) == postmaster) {
              out.put(Long.parseLong(n), (Long.parseLong(f[11]) + Long.parseLong(f[12])) * MICROS_PER_TICK);
            }
          });
    } catch (IOException | RuntimeException e) {
      // unreadable: an empty map
    }
    return out;
  }

  /** CPU microseconds this JVM has used so far, every thread. */
  static long jvmMicros() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean sun) {
      return sun.getProcessCpuTime() / 1000;
    }
    return -1;
  }

  /** The fields of /proc/PID/stat after the command (state first), or null when the process is gone. */
  private static String[] stat(long pid) {
    try {
      String s = Files.readString(Path.of("/proc/" + pid + "/stat"));
      return s.substring(s.lastIndexOf(')') + 2).split(" ");
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }
}
