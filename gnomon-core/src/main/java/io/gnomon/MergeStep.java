package io.gnomon;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * What a merge would do to one key ({@link Merges#preview}).
 *
 * @param table the table's qualified name
 * @param key the row's key
 * @param action {@code insert}, {@code update}, {@code delete}, {@code none} (the target already has it) or
 *     {@code conflict}
 * @param ours the target's row now (null when it has none)
 * @param result the row the merge would write (null for delete, none and conflict)
 * @param conflicts per conflicting column, its reason and strategy (null when none)
 */
public record MergeStep(String table, JsonNode key, String action, JsonNode ours, JsonNode result, JsonNode conflicts) {}
