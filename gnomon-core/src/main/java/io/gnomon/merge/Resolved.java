package io.gnomon.merge;

/**
 * A column merged without conflict.
 *
 * @param value the merged value; {@code null} is SQL NULL
 */
public record Resolved(Object value) implements Resolution {}
