package io.gnomon.merge;

/**
 * How a column merges when both sides changed it differently. Get the built-in strategies from {@link Strategies};
 * write your own with {@link Strategies#custom(String, MergeFunction)}.
 *
 * <p>{@link Merge#column} calls {@link #resolve} only after the per-column rule found no answer: ours and theirs
 * both differ from base, and from each other. A strategy must be deterministic and must not keep state.
 */
public interface Strategy {
  /** The strategy's name, as declared in SQL and reported in conflicts ({@code counter}, {@code json}, …). */
  String name();

  /** Whether the strategy can merge columns of this type (false, for example, for {@code counter} on text). */
  boolean supports(ColumnType type);

  /**
   * Merges a column that both sides changed differently.
   *
   * @return the resolved value, or a {@link Conflict}; never null
   */
  Resolution resolve(Column column, Object base, Object ours, Object theirs);
}
