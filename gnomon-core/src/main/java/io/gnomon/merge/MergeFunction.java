package io.gnomon.merge;

/**
 * A user's merge function for {@link Strategies#custom(String, MergeFunction)}: {@code (base, ours, theirs) →}
 * a value or a conflict. It is called only when both sides changed the column differently; it must be deterministic.
 */
@FunctionalInterface
public interface MergeFunction {
  /**
   * Merges one column.
   *
   * @return {@link Resolution#resolved(Object)}, or a {@link Conflict} (build one with the column's name and the
   *     three values); never null
   */
  Resolution merge(Column column, Object base, Object ours, Object theirs);
}
