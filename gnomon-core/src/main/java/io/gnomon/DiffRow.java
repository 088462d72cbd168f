package io.gnomon;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * One key whose state differs between two points ({@link Gnomon#diff}).
 *
 * @param op {@code insert} (only the second point has the key), {@code delete} (only the first), or {@code update}
 * @param key the key's columns, as a JSON object
 * @param before the row at the first point (null for an insert), as a JSON object of its columns
 * @param after the row at the second point (null for a delete)
 */
public record DiffRow(String op, JsonNode key, JsonNode before, JsonNode after) {}
