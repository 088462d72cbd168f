/**
 * Three-way merges of column values and rows, as plain Java reference functions: {@link io.gnomon.merge.Merge} (the
 * per-column rule), {@link io.gnomon.merge.Strategies} (the strategies {@code fail}, {@code ours}, {@code theirs},
 * {@code counter}, {@code max}, {@code min}, {@code union}, {@code json}, {@code text} and custom ones), and {@link
 * io.gnomon.merge.RowMerger} (the row-level rules). A conflict is a result ({@link io.gnomon.merge.Conflict}), never
 * an exception.
 *
 * <p>Values are plain Java objects: {@code null} is SQL NULL, {@code Long} an {@code int2}/{@code int4}/{@code int8}
 * ({@code Integer} and {@code Short} are accepted), {@code BigDecimal} a {@code numeric}, {@code String} a {@code
 * text}, a {@code List} an array, and a Jackson {@code JsonNode} a {@code jsonb}. See docs/merge.md.
 */
package io.gnomon.merge;
