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
   * CPU microseconds the cluster has used so far (exited children included), when readable: the postmaster's own
   * and its reaped children's times, and each live child's. A child that exits between the read of the postmaster's
   * totals and the read of the children is in neither, so the postmaster's totals are read again after the children
   * and the whole read repeated when they moved; a read made while a child is a zombie (exited, not yet reaped) waits
   * for it first, up to two seconds. (Without both, one run in five lost pgbench's backend, about 5 of 7 CPU-seconds:
   * it exits right after pgbench ends.)
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
    for (int attempt = 0; attempt < 10; attempt++) {
      long before = ownAndReaped();
      if (before < 0) {
        return OptionalLong.empty();
      }
      long children;
      try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
        children = procs.map(p -> p.getFileName().toString()).filter(n -> n.chars().allMatch(Character::isDigit))
            .map(n -> stat(Long.parseLong(n)))
            .filter(f -> f != null && Long.parseLong(f[1]) == postmaster)
            .mapToLong(f -> Long.parseLong(f[11]) + Long.parseLong(f[12])).sum();
      } catch (IOException | RuntimeException e) {
        return OptionalLong.empty();
      }
      long after = ownAndReaped();
      if (after == before) {
        return OptionalLong.of((before + children) * MICROS_PER_TICK);
      }
    }
    return OptionalLong.empty();
  }

  /** The postmaster's utime, stime, cutime and cstime (fields 14-17), in ticks; -1 when unreadable. */
  private long ownAndReaped() {
    String[] own = stat(postmaster);
    if (own == null) {
      return -1;
    }
    return Long.parseLong(own[11]) + Long.parseLong(own[12]) + Long.parseLong(own[13]) + Long.parseLong(own[14]);
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
