package io.gnomon.merge;

/**
 * A conflict, reported as a value: the column (null for a row-level conflict such as delete against update), the
 * three inputs, the strategy that could not merge them, and why, in one sentence a user can act on.
 *
 * @param column the column's name, or null for a row-level conflict
 * @param base the common ancestor's value (for a row-level conflict: the base row as a map, or null when absent)
 * @param ours the target's value
 * @param theirs the source's value
 * @param strategy the strategy's name ({@code fail}, {@code counter}, …, or {@code delete-vs-update} for rows)
 * @param reason why the strategy could not merge, e.g. {@code counter: 32767 + 1 is out of the range of int2}
 */
public record Conflict(String column, Object base, Object ours, Object theirs, String strategy, String reason)
    implements Resolution {}
