package io.gnomon.merge;

import io.gnomon.merge.internal.Values;
import java.util.Objects;

/**
 * The per-column rule of a three-way merge. For one column: if ours and theirs are the same, that value (the same
 * change on both sides converges); else if ours is the base, theirs (a one-sided change wins); else if theirs is the
 * base, ours; else the column's strategy decides.
 *
 * <p>"The same" is {@link #same(Object, Object)}: numbers by value ({@code 1.0} and {@code 1.00} are the same, as
 * PostgreSQL's {@code =} says), lists element by element, JSON by value (object keys in any order, numbers by value).
 */
public final class Merge {
  private Merge() {}

  /**
   * Merges one column.
   *
   * @param column the column (its name goes into conflicts, its type bounds counters)
   * @param strategy the column's strategy, consulted only when both sides changed the value differently
   * @return the resolved value, or a conflict
   */
  public static Resolution column(Column column, Strategy strategy, Object base, Object ours, Object theirs) {
    Objects.requireNonNull(column, "column");
    Objects.requireNonNull(strategy, "strategy");
    if (Values.same(ours, theirs)) {
      return new Resolved(ours);
    }
    if (Values.same(ours, base)) {
      return new Resolved(theirs);
    }
    if (Values.same(theirs, base)) {
      return new Resolved(ours);
    }
    Resolution r = strategy.resolve(column, base, ours, theirs);
    if (r == null) {
      throw new IllegalStateException("strategy " + strategy.name() + " returned null for column " + column.name());
    }
    return r;
  }

  /**
   * Whether two values are the same for merging: both null; numbers of equal value ({@code Long}, {@code Integer},
   * {@code Short}, {@code BigDecimal}); lists of the same length whose elements are the same; JSON values equal as
   * {@code jsonb} compares them (numbers by value, object keys in any order); otherwise {@code equals}.
   */
  public static boolean same(Object a, Object b) {
    return Values.same(a, b);
  }
}
