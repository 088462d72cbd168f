package io.gnomon;

import java.util.concurrent.ThreadLocalRandom;

/** Seeds for property tests: {@code -Dgnomon.seed=N} replays a run, otherwise a fresh seed is drawn and printed. */
final class Seeds {
  private Seeds() {}

  /** Draws (or reads) the seed and prints it with the way to replay it: {@code <what> seed=N (replay with ...)}. */
  static long seed(String what) {
    long seed = seed();
    System.out.println(what + " seed=" + seed + " (replay with -Dgnomon.seed=" + seed + ")");
    return seed;
  }

  static long seed() {
    String s = System.getProperty("gnomon.seed");
    return s != null && !s.isBlank() ? Long.parseLong(s.trim()) : ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
  }
}
