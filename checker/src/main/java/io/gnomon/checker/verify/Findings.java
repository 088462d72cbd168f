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

  /** Counts a violation; builds its witness only when it is among the first of its kind. */
  void violation(String kind, Supplier<String> witness) {
    long n = counts.merge(kind, 1L, Long::sum);
    if (n <= WITNESSES_PER_KIND) {
      witnesses.add(new Violation(kind, witness.get()));
    }
  }

  /** Counts something checked, such as {@code reads replayed}. */
  void checked(String what, long n) {
    checked.merge(what, n, Long::sum);
  }

  Verification result() {
    return new Verification(Map.copyOf(counts), List.copyOf(witnesses), new LinkedHashMap<>(checked));
  }
}
