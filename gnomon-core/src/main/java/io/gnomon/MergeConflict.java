package io.gnomon;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One conflict of a merge run ({@code gnomon.merge_conflicts}).
 *
 * @param table the table's qualified name
 * @param key the row's key, as a JSON object
 * @param column the column, or {@code ""} for a row conflict (deleted on one side, updated on the other)
 * @param kind {@code column}, {@code delete_vs_update} (the source deleted, the target updated) or
 *     {@code update_vs_delete}
 * @param base the base value (a row image for a row conflict), as JSON
 * @param ours the target's value
 * @param theirs the source's value
 * @param strategy the column's strategy, or null for a row conflict
 * @param reason why, in one sentence
 */
public record MergeConflict(
    String table, JsonNode key, String column, String kind, JsonNode base, JsonNode ours, JsonNode theirs, String strategy,
    String reason) {}
