package io.gnomon.merge;

import java.util.Objects;

/**
 * A merged column: its name (reported in conflicts) and its type (which bounds, for example, what {@code counter}
 * may produce).
 *
 * @param name the column's name
 * @param type the column's type
 */
public record Column(String name, ColumnType type) {
  /** Checks that both are given. */
  public Column {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
  }

  /** A column. */
  public static Column of(String name, ColumnType type) {
    return new Column(name, type);
  }
}
