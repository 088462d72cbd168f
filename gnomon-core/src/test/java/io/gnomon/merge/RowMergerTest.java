package io.gnomon.merge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.InvalidArgumentException;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The row-level rules, in both directions. */
class RowMergerTest {
  private static final RowMerger ACCOUNTS = RowMerger.builder()
      .column("owner", ColumnType.text())
      .column("balance", ColumnType.int8(), Strategies.counter())
      .column("note", ColumnType.text(), Strategies.text())
      .build();

  private static Map<String, Object> row(String owner, long balance, String note) {
    Map<String, Object> m = new HashMap<>();
    m.put("owner", owner);
    m.put("balance", balance);
    m.put("note", note);
    return m;
  }

  /** merge(b,o,t) and merge(b,t,o). */
  private static RowResult[] both(RowMerger m, Map<String, ?> b, Map<String, ?> o, Map<String, ?> t) {
    return new RowResult[] {m.merge(b, o, t), m.merge(b, t, o)};
  }

  @Test
  void columnsMergeWithTheirStrategies() {
    for (RowResult r : both(ACCOUNTS, row("alice", 100, "a\nb\nc\n"), row("alice", 70, "A\nb\nc\n"),
        row("alice", 125, "a\nb\nC\n"))) {
      assertFalse(r.hasConflicts(), r.toString());
      assertEquals(95L, r.row().get("balance"));
      assertEquals("A\nb\nC\n", r.row().get("note"));
    }
  }

  @Test
  void conflictsLeaveOursUnchanged() {
    RowResult r = ACCOUNTS.merge(row("alice", 100, ""), row("ann", 110, ""), row("alicia", 100, ""));
    assertEquals(1, r.conflicts().size());
    Conflict c = r.conflicts().get(0);
    assertEquals("owner", c.column());
    assertEquals("fail", c.strategy());
    assertEquals(row("ann", 110, ""), r.row());
  }

  @Test
  void oneSidedChangesAndSameChanges() {
    Map<String, Object> b = row("alice", 100, "");
    Map<String, Object> x = row("alice", 50, "x");
    for (RowResult r : both(ACCOUNTS, b, x, b)) {
      assertEquals(x, r.row());
    }
    for (RowResult r : both(ACCOUNTS, b, null, b)) { // a one-sided delete
      assertNull(r.row());
      assertFalse(r.hasConflicts());
    }
    for (RowResult r : both(ACCOUNTS, null, x, null)) { // a one-sided insert
      assertEquals(x, r.row());
    }
    for (RowResult r : both(ACCOUNTS, b, null, null)) { // delete against delete converges
      assertFalse(r.present() || r.hasConflicts());
    }
    RowResult none = ACCOUNTS.merge(null, null, null);
    assertFalse(none.present() || none.hasConflicts());
    assertEquals(x, ACCOUNTS.merge(b, x, x).row());
  }

  @Test
  void deleteAgainstUpdate() {
    Map<String, Object> b = row("alice", 100, "");
    Map<String, Object> u = row("alice", 90, "");
    RowResult oursDeleted = ACCOUNTS.merge(b, null, u);
    assertTrue(oursDeleted.hasConflicts());
    Conflict c = oursDeleted.conflicts().get(0);
    assertNull(c.column());
    assertEquals("delete-vs-update", c.strategy());
    assertTrue(c.reason().contains("ours deleted"), c.reason());
    assertNull(oursDeleted.row());
    RowResult theirsDeleted = ACCOUNTS.merge(b, u, null);
    assertTrue(theirsDeleted.conflicts().get(0).reason().contains("theirs deleted"));
    assertEquals(u, theirsDeleted.row());

    RowMerger deleteWins = RowMerger.builder().column("owner", ColumnType.text())
        .column("balance", ColumnType.int8()).column("note", ColumnType.text())
        .deleteVsUpdate(DeleteRule.DELETE_WINS).build();
    for (RowResult r : both(deleteWins, b, null, u)) {
      assertFalse(r.present() || r.hasConflicts());
    }
    RowMerger updateWins = RowMerger.builder().column("owner", ColumnType.text())
        .column("balance", ColumnType.int8()).column("note", ColumnType.text())
        .deleteVsUpdate(DeleteRule.UPDATE_WINS).build();
    for (RowResult r : both(updateWins, b, null, u)) {
      assertEquals(u, r.row());
      assertFalse(r.hasConflicts());
    }
  }

  @Test
  void insertAgainstInsertIsAnUpdateOfAnEmptyBase() {
    for (RowResult r : both(ACCOUNTS, null, row("alice", 5, "x\n"), row("alice", 7, "x\n"))) {
      assertFalse(r.hasConflicts(), r.toString());
      assertEquals(12L, r.row().get("balance")); // both counted from zero
    }
    RowResult clash = ACCOUNTS.merge(null, row("alice", 5, ""), row("bob", 5, ""));
    assertEquals("owner", clash.conflicts().get(0).column());
    assertEquals(row("alice", 5, ""), ACCOUNTS.merge(null, row("alice", 5, ""), row("alice", 5, "")).row());
  }

  @Test
  void builderReportsEveryProblemAtOnce() {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> RowMerger.builder()
        .column("n", ColumnType.text(), Strategies.counter())
        .column("n", ColumnType.int4())
        .column("tags", ColumnType.text(), Strategies.union())
        .build());
    assertTrue(e.getMessage().contains("declared twice"), e.getMessage());
    assertTrue(e.getMessage().contains("tags: strategy union does not fit type text"), e.getMessage());
    assertEquals("GN021", e.sqlState());
    assertThrows(InvalidArgumentException.class, () -> RowMerger.builder().build());
    assertThrows(IllegalArgumentException.class, () -> ACCOUNTS.merge(Map.of("nope", 1), null, null));
  }
}
