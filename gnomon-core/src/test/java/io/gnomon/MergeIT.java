package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gnomon.merge.DeleteRule;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Merges in the database: strategies, conflicts as results, resolutions, dry runs, every direction, concurrency. */
class MergeIT extends GnomonIT {
  private static final ObjectMapper JSON = new ObjectMapper();

  private void items() throws SQLException {
    sql("create table item (id int primary key, name text, qty bigint not null default 0, price numeric(8,2),"
            + " tags text[] default '{}', doc jsonb default '{}', body text)",
        "insert into item select g, 'item' || g, 10, 1.50, '{a}', '{\"x\": 1}', e'l1\\nl2\\nl3\\n' from generate_series(1, 8) g");
    gnomon().track("public.item");
  }


  /** id -> the row as text, at a point. */
  private TreeMap<Integer, String> state(String point) throws SQLException {
    TreeMap<Integer, String> out = new TreeMap<>();
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select id, to_jsonb(x) - 'id' from gnomon_t.item_at(" + point + ") x")) {
      while (rs.next()) {
        out.put(rs.getInt(1), rs.getString(2));
      }
    }
    return out;
  }

  private String cell(int id, String column) throws SQLException {
    return one("select " + column + "::text from item where id = " + id);
  }

  @Test
  void aResolutionValueThatDoesNotFitTheColumnIsRefusedWhenDeclared() throws Exception {
    // it was accepted, and the next merge of the pair then failed with a raw 22P02 until it was declared again
    sql("create table rv (id int primary key, bal int)", "insert into rv values (1, 10)");
    gnomon().track("public.rv");
    gnomon().branches().create("rvb");
    try (var c = connect();
        var st = c.createStatement()) {
      st.execute("select gnomon.branch_use('rvb')");
      st.executeUpdate("update rv set bal = 20");
    }
    sql("update rv set bal = 30");
    String id = one("select (gnomon.merge('rvb', 'main')).merge_id");
    for (String bad : new String[] {"'\"abc\"'", "'99999999999'"}) {
      java.sql.SQLException e = org.junit.jupiter.api.Assertions.assertThrows(java.sql.SQLException.class,
          () -> one("select gnomon.merge_resolve(" + id + ", 'public.rv', '{\"id\":1}', 'bal', 'value', " + bad + ")"));
      assertEquals("GN021", e.getSQLState(), e.getMessage());
      assertTrue(e.getMessage().contains("bal"), e.getMessage());
    }
    one("select gnomon.merge_resolve(" + id + ", 'public.rv', '{\"id\":1}', 'bal', 'value', '25')");
    assertEquals("applied", one("select (gnomon.merge('rvb', 'main')).status"));
    assertEquals("25", one("select bal from rv"));
  }

  @Test
  void reviewedEdgesWideTablesAColumnNamedXPartialMergesUniqueViolationsAndNullArguments() throws Exception {
    // 51 non-key columns (jsonb_build_object took up to 200 arguments: 54023), a column named x (it shadowed the
    // merge's row alias: 42804), a UNIQUE column (ON CONFLICT without a target swallowed the violation and the merge
    // retried into 40001 forever), and a merge of some tables that would have marked the others' changes as merged
    StringBuilder wide = new StringBuilder("create table wide (id int primary key");
    for (int i = 1; i <= 51; i++) {
      wide.append(", c").append(i).append(" int default ").append(i);
    }
    sql(wide.append(")").toString(), "insert into wide (id) values (1)",
        "create table nx (id int primary key, x int, other int)", "insert into nx values (1, 1, 1)",
        "create table uq (id int primary key, note text unique)", "insert into uq values (1, 'a')");
    gnomon().track("public.wide");
    gnomon().track("public.nx");
    gnomon().track("public.uq");
    gnomon().branches().create("edges");
    try (var c = connect();
        var st = c.createStatement()) {
      st.execute("select gnomon.branch_use('edges')");
      st.executeUpdate("update wide set c51 = 100");
      st.executeUpdate("update nx set x = 5");
      st.executeUpdate("insert into uq values (2, 'dup')");
    }
    sql("update nx set other = 9", "insert into uq values (3, 'dup')");
    java.sql.SQLException partial = org.junit.jupiter.api.Assertions.assertThrows(java.sql.SQLException.class,
        () -> one("select (gnomon.merge('edges', 'main', tables => array['public.wide'])).status"));
    assertEquals("GN060", partial.getSQLState(), partial.getMessage());
    assertTrue(partial.getMessage().contains("public.nx") && partial.getMessage().contains("public.uq"), partial.getMessage());
    assertEquals("dry_run", one("select (gnomon.merge('edges', 'main', dry_run => true, tables => array['public.wide'])).status"));
    assertEquals("GN021", org.junit.jupiter.api.Assertions.assertThrows(java.sql.SQLException.class,
        () -> one("select (gnomon.merge('edges', 'main', dry_run => null)).status")).getSQLState());
    java.sql.SQLException unique = org.junit.jupiter.api.Assertions.assertThrows(java.sql.SQLException.class,
        () -> one("select (gnomon.merge('edges', 'main')).status"));
    assertEquals("23505", unique.getSQLState(), "the target's UNIQUE constraint, not a retry: " + unique.getMessage());
    sql("delete from uq where id = 3");
    assertEquals("applied", one("select (gnomon.merge('edges', 'main')).status"));
    assertEquals("100", one("select c51 from wide"));
    assertEquals("5|9", one("select x || '|' || other from nx"));
    assertEquals("dup", one("select note from uq where id = 2"));
  }

  @Test
  void everyStrategyMergesBothSidesChanges() throws Exception {
    items();
    Merges merges = gnomon().merges();
    merges.setStrategy("public.item", "qty", "counter");
    merges.setStrategy("public.item", "price", "max");
    merges.setStrategy("public.item", "tags", "union");
    merges.setStrategy("public.item", "doc", "json");
    merges.setStrategy("public.item", "body", "text");
    merges.setStrategy("public.item", "name", "theirs");
    gnomon().branches().create("f");
    onBranch("f", "update item set qty = qty + 5, price = 2.00, tags = tags || '{b}', doc = doc || '{\"y\": 2}',"
        + " body = e'l1 (f)\\nl2\\nl3\\n', name = 'branch' where id = 1");
    sql("update item set qty = qty - 3, price = 1.75, tags = tags || '{c}', doc = doc || '{\"z\": 3}',"
        + " body = e'l1\\nl2\\nl3 (main)\\n', name = 'main' where id = 1");
    MergeResult r = merges.merge("f", "main");
    assertEquals("applied", r.status(), r.toString());
    assertEquals(1, r.modifications());
    assertEquals("12", cell(1, "qty"), "counter: 10 + 5 - 3");
    assertEquals("2.00", cell(1, "price"));
    assertEquals("{a,c,b}", cell(1, "tags"));
    assertEquals("{\"x\": 1, \"y\": 2, \"z\": 3}", cell(1, "doc"));
    assertEquals("l1 (f)\nl2\nl3 (main)\n", cell(1, "body"));
    assertEquals("branch", cell(1, "name"));
    // the merge is history: main's versions of the merge's transaction
    assertEquals("1", one("select count(*) from gnomon_t.item_h h join gnomon.merge m on m.merge_xid = h.g_xid where m.merge_id = " + r.mergeId()));
  }

  @Test
  void unionOnAMultiDimensionalArrayIsAConflictNotAFlattenedArray() throws Exception {
    sql("create table grid (id int primary key, m int[])", "insert into grid values (1, '{{1,2},{3,4}}'), (2, '{1,2}')");
    gnomon().track("public.grid");
    gnomon().merges().setStrategy("public.grid", "m", "union");
    gnomon().branches().create("g");
    onBranch("g", "update grid set m = m || '{{5,6}}' where id = 1", "update grid set m = m || 3 where id = 2");
    sql("update grid set m = m || '{{7,8}}' where id = 1", "update grid set m = m || 4 where id = 2");
    MergeResult r = gnomon().merges().merge("g", "main");
    assertEquals("conflicts", r.status(), r.toString());
    assertEquals("union merges one-dimensional arrays only, and ours has 2 dimensions",
        one("select c.reason from gnomon.merge_conflict c where c.merge_id = " + r.mergeId() + " and c.column_name = 'm'"));
    // (before: {1,2,3,4,7,8,5,6}, one dimension, in main)
    assertEquals("{{1,2},{3,4},{7,8}}", one("select m::text from grid where id = 1"), "the merge changed nothing");
    assertEquals("{1,2,4}", one("select m::text from grid where id = 2"));
  }

  @Test
  void conflictsChangeNothingUntilResolved() throws Exception {
    items();
    gnomon().branches().create("f");
    onBranch("f", "update item set name = 'b2' where id = 2", "update item set name = 'b3', qty = 1 where id = 3",
        "delete from item where id = 4", "insert into item (id, name) values (9, 'new')");
    sql("update item set name = 'm2' where id = 2", "update item set qty = 2 where id = 3", "update item set name = 'm4' where id = 4");
    TreeMap<Integer, String> mainBefore = state("gnomon.point()");
    long historyBefore = Long.parseLong(one("select count(*) from gnomon_t.item_h"));

    Merges merges = gnomon().merges();
    MergeResult dry = merges.dryRun("f", "main");
    assertEquals("dry_run", dry.status());
    List<MergeStep> preview = merges.preview("f", "main");
    assertEquals(List.of("conflict", "conflict", "conflict", "insert"), preview.stream().map(MergeStep::action).toList());

    MergeResult r = merges.merge("f", "main");
    assertEquals("conflicts", r.status());
    assertEquals(3, r.conflicts(), "name of 2, qty of 3, and 4 deleted there but updated here");
    assertEquals(mainBefore, state("gnomon.point()"), "a merge with conflicts changes nothing");
    assertEquals(historyBefore, Long.parseLong(one("select count(*) from gnomon_t.item_h")));
    List<MergeConflict> conflicts = merges.conflicts(r.mergeId());
    assertEquals(List.of("name", "qty", ""), conflicts.stream().map(MergeConflict::column).toList());
    MergeConflict row = conflicts.get(2);
    assertEquals("delete_vs_update", row.kind());

    merges.resolve(r.mergeId(), "public.item", conflicts.get(0).key(), "name", "value", JSON.readTree("\"both\""));
    merges.resolve(r.mergeId(), "public.item", conflicts.get(1).key(), "qty", "ours", null);
    merges.resolve(r.mergeId(), "public.item", row.key(), "", "theirs", null);
    MergeResult again = merges.merge("f", "main");
    assertEquals("applied", again.status(), again.toString());
    assertEquals("both", cell(2, "name"));
    assertEquals("2", cell(3, "qty"));
    assertEquals("b3", cell(3, "name"), "the non-conflicting column of the same row merged");
    assertEquals("0", one("select count(*) from item where id = 4"), "the delete won, as resolved");
    assertEquals("new", cell(9, "name"));
    // nothing new: nothing written
    assertEquals("nothing", merges.merge("f", "main").status());
  }

  @Test
  void mergesRunInEveryDirectionWithoutSpuriousConflicts() throws Exception {
    items();
    gnomon().branches().create("a");
    gnomon().branches().create("b", "a", Optional.empty(), false);
    onBranch("a", "update item set name = 'a1' where id = 1");
    onBranch("b", "update item set name = 'b2' where id = 2");
    sql("update item set name = 'm3' where id = 3");
    Merges merges = gnomon().merges();
    // branch into branch (child into parent), then parent into child, then into main, then main into the branches
    assertEquals("applied", merges.merge("b", "a").status());
    assertEquals("applied", merges.merge("a", "b").status());
    assertEquals("nothing", merges.merge("b", "a").status(), "merging back and forth raises nothing new");
    assertEquals("applied", merges.merge("a", "main").status());
    MergeResult refresh = merges.merge("main", "b");
    assertEquals("applied", refresh.status(), refresh.toString());
    assertEquals(0, refresh.conflicts());
    assertEquals(state("gnomon.point()"), state("gnomon.point('b')"), "b refreshed from main equals main");
    assertEquals(List.of(), gnomon().diff("public.item", Point.main(), Point.branch("b")));
    // siblings: a new branch of main and b merge through their common ancestor
    gnomon().branches().create("c");
    onBranch("c", "update item set qty = 99 where id = 5");
    onBranch("b", "update item set qty = 77 where id = 6");
    assertEquals("applied", merges.merge("c", "b").status());
    assertEquals("99", one("select qty::text from gnomon_t.item_at(gnomon.point('b')) where id = 5"));
    assertEquals("77", one("select qty::text from gnomon_t.item_at(gnomon.point('b')) where id = 6"));
  }

  @Test
  void deleteRulesAreConfigurable() throws Exception {
    items();
    gnomon().branches().create("d");
    onBranch("d", "delete from item where id = 1", "update item set name = 'upd' where id = 2");
    sql("update item set name = 'main' where id = 1", "delete from item where id = 2");
    Merges merges = gnomon().merges();
    assertEquals(2, merges.merge("d", "main").conflicts());
    merges.setDeleteRule("public.item", DeleteRule.UPDATE_WINS);
    MergeResult r = merges.merge("d", "main");
    assertEquals("applied", r.status());
    assertEquals("main", cell(1, "name"), "the target's update won over the source's delete");
    assertEquals("upd", cell(2, "name"), "the source's update won over the target's delete");
  }

  @Test
  void aConcurrentWriterIsNeverOverwrittenBlindly() throws Exception {
    items();
    gnomon().branches().create("w");
    onBranch("w", "update item set name = 'branch' where id = 1");
    try (Connection writer = connect()) {
      writer.setAutoCommit(false);
      try (Statement st = writer.createStatement()) {
        st.execute("update item set qty = 42 where id = 1");
      }
      // the merge waits for the writer's row lock (no table lock: other rows stay writable meanwhile)
      CompletableFuture<MergeResult> merge = CompletableFuture.supplyAsync(() -> gnomon().merges().merge("w", "main"));
      Thread.sleep(300);
      assertTrue(!merge.isDone(), "the merge waits for the row it must merge");
      sql("update item set qty = 7 where id = 2");
      writer.commit();
      MergeResult r = merge.get(30, TimeUnit.SECONDS);
      assertEquals("applied", r.status());
    }
    assertEquals("42", cell(1, "qty"), "the concurrent write survived");
    assertEquals("branch", cell(1, "name"), "and the branch's change merged next to it");
  }

  /**
   * A merge of a few keys of a large table (under a twentieth of its rows) writes by an index probe per key: into main
   * without a sequential scan of main's table, with the same result as any merge, into a branch as well, and with the
   * caller's join settings as they were.
   */
  @Test
  void smallMergesOfALargeTableWriteByKey() throws Exception {
    sql("create table big (id int primary key, name text, qty bigint not null default 0)",
        "insert into big select g, 'n' || g, g from generate_series(1, 40000) g", "analyze big");
    gnomon().track("public.big");
    gnomon().branches().create("s");
    gnomon().branches().create("t");
    // 1,000 updates, a delete and an insert: a plan large enough to be analyzed, which the planner once hashed
    // against a sequential scan of the whole table
    onBranch("s", "update big set qty = qty + 1000 where id % 40 = 7", "delete from big where id = 42",
        "insert into big values (40001, 'new', 1)");
    sql("update big set name = 'main' where id = 7");
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("set enable_mergejoin = off");
      c.setAutoCommit(false);
      try (ResultSet rs = st.executeQuery("select status, adds, modifications, deletes from gnomon.merge('s', 'main')")) {
        rs.next();
        assertEquals("applied 1 1000 1", rs.getString(1) + " " + rs.getLong(2) + " " + rs.getLong(3) + " " + rs.getLong(4));
      }
      try (ResultSet rs = st.executeQuery("select pg_stat_get_xact_numscans('public.big'::regclass),"
          + " current_setting('enable_hashjoin'), current_setting('enable_mergejoin')")) {
        rs.next();
        assertEquals("0 on off", rs.getLong(1) + " " + rs.getString(2) + " " + rs.getString(3),
            "no sequential scan of main's table, and the caller's settings kept");
      }
      c.commit();
    }
    assertEquals("main 1007", one("select name || ' ' || qty from big where id = 7"));
    assertEquals("2487", one("select qty::text from big where id = 1487"));
    assertEquals("0", one("select count(*) from big where id = 42"));
    assertEquals("new 1", one("select name || ' ' || qty from big where id = 40001"));
    assertEquals("40000", one("select count(*) from big"));
    // main into a branch forked before: the same few keys written into the branch's rows
    assertEquals("applied", gnomon().merges().merge("main", "t").status());
    assertEquals(List.of(), gnomon().diff("public.big", Point.main(), Point.branch("t")));
    assertEquals("main 1007", one("select name || ' ' || qty from gnomon_t.big_at(gnomon.point('t')) where id = 7"));
  }

  @Test
  void aTableTrackedAfterTheForkIsLeftOutOfAMergeOfEveryTable() throws Exception {
    sql("create table early (id int primary key, v int)", "insert into early values (1, 1), (2, 2)");
    gnomon().track("public.early");
    gnomon().branches().create("before_late");
    sql("create table late (id int primary key, v int)", "insert into late values (1, 1)");
    gnomon().track("public.late");
    sql("update late set v = 10 where id = 1");
    onBranch("before_late", "update early set v = 20 where id = 2");
    MergeResult r = gnomon().merges().merge("before_late", "main");
    assertEquals("applied", r.status());
    assertEquals("20", one("select v::text from early where id = 2"));
    assertEquals("10", one("select v::text from late where id = 1"), "the later table is left as main has it");
    // main into the branch: the branch cannot hold the later table, and its other tables are refreshed
    sql("update early set v = 30 where id = 1");
    assertEquals("applied", gnomon().merges().merge("main", "before_late").status());
    // naming the table is refused: the branch cannot read it
    CoordinateTooOldException named = assertThrows(CoordinateTooOldException.class,
        () -> sqlTranslated("select gnomon.merge('before_late', 'main', false, array['public.late'])"));
    assertTrue(named.getMessage().contains("tracked later"), named.getMessage());
  }

  @Test
  void badInputIsRefusedAndChangesNothing() throws Exception {
    items();
    gnomon().branches().create("x");
    Merges merges = gnomon().merges();
    MergeException self = assertThrows(MergeException.class, () -> merges.merge("x", "x"));
    assertEquals("GN060", self.sqlState());
    assertThrows(BranchNotFoundException.class, () -> merges.merge("nope", "main"));
    MergeException unknown = assertThrows(MergeException.class, () -> merges.setStrategy("public.item", "qty", "average"));
    assertEquals("GN061", unknown.sqlState());
    MergeException mismatch = assertThrows(MergeException.class, () -> merges.setStrategy("public.item", "name", "counter"));
    assertEquals("GN062", mismatch.sqlState());
    assertThrows(MergeException.class, () -> merges.setStrategy("public.item", "qty", "json"));
    assertThrows(InvalidArgumentException.class, () -> merges.setStrategy("public.item", "id", "max"));
    assertThrows(InvalidArgumentException.class, () -> merges.setStrategy("public.item", "nope", "max"));
    // the json strategy's options are checked when declared (a bad one failed the next merge instead)
    for (String bad : new String[] {"{\"max_depth\": \"x\"}", "{\"max_depth\": -1}", "{\"max_nodes\": 0}", "{\"arrays_as_sets\": \"yes\"}"}) {
      java.sql.SQLException e = assertThrows(java.sql.SQLException.class,
          () -> one("select gnomon.set_merge_strategy('public.item', 'doc', 'json', '" + bad + "')"), bad);
      assertEquals("GN021", e.getSQLState(), bad);
    }
    MergeException noMerge = assertThrows(MergeException.class, () -> merges.conflicts(12345));
    assertEquals("GN063", noMerge.sqlState());
    assertEquals("0", one("select count(*) from gnomon.merge_strategy"));
    assertEquals("0", one("select count(*) from gnomon.merge"));
  }
}
