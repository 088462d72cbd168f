package io.gnomon.merge;

/**
 * The outcome of merging one column (or one row-level decision): a {@link Resolved} value, or a {@link Conflict}.
 * Conflicts are results, never exceptions.
 */
public sealed interface Resolution permits Resolved, Conflict {

  /** A resolved value ({@code null} is SQL NULL). */
  static Resolved resolved(Object value) {
    return new Resolved(value);
  }

  /** Whether this is a conflict. */
  default boolean isConflict() {
    return this instanceof Conflict;
  }
}
