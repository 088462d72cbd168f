package io.gnomon.checker.verify;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/** What the checks found: violations counted by kind with their first witnesses, and what was checked. */
final class Findings {
  /** Witnesses kept per kind; the first is the one the report shows. */
  static final int WITNESSES_PER_KIND = 3;

  private final Map<String, Long> counts = new LinkedHashMap<>();
  private final List<Violation> witnesses = new ArrayList<>();
  private final Map<String, Long> checked = new LinkedHashMap<>();
  private final List<Violation> losses = new ArrayList<>();

  /** Losses listed at most (each is also counted under its kind). */
  static final int LOSSES_LISTED = 200;

  /** Counts a violation; builds its witness only when it is among the first of its kind. */
  void violation(String kind, Supplier<String> witness) {
    long n = counts.merge(kind, 1L, Long::sum);
    if (n <= WITNESSES_PER_KIND) {
      witnesses.add(new Violation(kind, witness.get()));
    }
  }

  /**
   * A loss the run's design allows (a commit lost by an asynchronous failover, a scratch branch emptied by a crash):
   * counted under its kind among what was checked, and listed, but not a violation.
   */
  void lost(String kind, Supplier<String> what) {
    checked.merge(kind, 1L, Long::sum);
    if (losses.size() < LOSSES_LISTED) {
      losses.add(new Violation(kind, what.get()));
    }
  }

  /** Counts something checked, such as {@code reads replayed}. */
  void checked(String what, long n) {
    checked.merge(what, n, Long::sum);
  }

  Verification result() {
    return new Verification(Map.copyOf(counts), List.copyOf(witnesses), new LinkedHashMap<>(checked),
        List.copyOf(losses));
  }
}
