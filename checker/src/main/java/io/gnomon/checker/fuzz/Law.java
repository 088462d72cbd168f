package io.gnomon.checker.fuzz;

/** The laws every merge must satisfy; docs/merge.md states each one. */
enum Law {
  /** merge(b, b, b) = b. */
  IDENTITY("identity"),
  /** merge(b, x, b) = x and merge(b, b, y) = y. */
  ONE_SIDED("one-sided"),
  /** merge(b, x, x) = x. */
  CONVERGENCE("convergence"),
  /** Symmetric strategies: merge(b, x, y) = merge(b, y, x) (union as a multiset; json and text when resolved). */
  SYMMETRY("symmetry"),
  /** ours(b, x, y) = theirs(b, y, x); fail conflicts both ways. */
  MIRRORING("mirroring"),
  /** Each side's change is in the result, or a conflict is reported (with the inputs); no spurious conflict. */
  NO_LOSS("no-loss"),
  /** counter: the exact base + (ours − base) + (theirs − base) when it fits the type, a conflict when not. */
  COUNTER_ARITHMETIC("counter-arithmetic"),
  /** The same inputs give the same answer. */
  DETERMINISM("determinism"),
  /** No strategy throws on values of its column type. */
  NO_ERROR("no-error");

  private final String label;

  Law(String label) {
    this.label = label;
  }

  String label() {
    return label;
  }
}
