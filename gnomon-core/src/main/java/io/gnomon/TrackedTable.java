package io.gnomon;

import java.time.OffsetDateTime;
import java.util.List;

/**
 * A table Gnomon tracks, as its catalog row {@code gnomon.tracked_table} describes it.
 *
 * @param id Gnomon's id for the table
 * @param schema the table's schema
 * @param name the table's name
 * @param keyColumns the primary-key columns, in key order
 * @param historyTable the history table, in schema {@code gnomon_t}
 * @param asOfFunction the generated as-of function, in schema {@code gnomon_t}: {@code gnomon_t.<fn>(coordinate text)}
 *     and {@code gnomon_t.<fn>(at timestamptz)}
 * @param trackedAt when tracking began; there is no history before it
 */
public record TrackedTable(
    int id,
    String schema,
    String name,
    List<String> keyColumns,
    String historyTable,
    String asOfFunction,
    OffsetDateTime trackedAt) {

  /** Copies the key list. */
  public TrackedTable {
    keyColumns = List.copyOf(keyColumns);
  }

  /** The table's qualified name as SQL, for example {@code "public"."accounts"}. */
  public String qualifiedName() {
    return quote(schema) + "." + quote(name);
  }

  /** The as-of function's qualified name as SQL, for example {@code gnomon_t."accounts_as_of"}. */
  public String asOfFunctionSql() {
    return "gnomon_t." + quote(asOfFunction);
  }

  static String quote(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }
}
