package io.gnomon;

import java.util.concurrent.ThreadLocalRandom;

/** Seeds for property tests: {@code -Dgnomon.seed=N} replays a run, otherwise a fresh seed is drawn and printed. */
final class Seeds {
  private Seeds() {}

  static long seed() {
    String s = System.getProperty("gnomon.seed");
    return s != null && !s.isBlank() ? Long.parseLong(s.trim()) : ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
  }
}
