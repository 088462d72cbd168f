package io.gnomon.merge;

import java.util.List;
import java.util.Map;

/**
 * The merge of one row: the row (column name to value; null when the row is absent, i.e. deleted or never there) and
 * the conflicts. When there are conflicts, {@code row} is the target's row unchanged (ours): a merge with conflicts
 * changes nothing until they are resolved.
 *
 * @param row the merged row, or null when absent
 * @param conflicts the conflicts, empty when the row merged cleanly
 */
public record RowResult(Map<String, Object> row, List<Conflict> conflicts) {
  /** Copies the conflicts; the row map is kept as given (it may hold nulls). */
  public RowResult {
    conflicts = List.copyOf(conflicts);
  }

  /** Whether the merged row exists. */
  public boolean present() {
    return row != null;
  }

  /** Whether the row has at least one conflict. */
  public boolean hasConflicts() {
    return !conflicts.isEmpty();
  }
}
