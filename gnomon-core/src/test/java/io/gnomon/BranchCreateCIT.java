package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * The C module's gnomon.branch_create (gnomon-c/src/branch_create.c) writes the catalog row the PL/pgSQL function
 * writes, raises the same errors, hands every other case to gnomon.branch_create_sql, and is replaced by the PL/pgSQL
 * function again when the module is disabled.
 */
class BranchCreateCIT extends GnomonIT {
  @Override
  boolean cWritePath() {
    return true;
  }

  /**
   * The row's shape, with the ids and snapshots replaced by how they relate to each other: its point (through
   * gnomon.branch_point) against its parent's, and last whether it stores no point (a branch of main, catalog 12).
   */
  private String shape(String name) throws SQLException {
    return one("select concat_ws(' ', coalesce(p.branch_name, 'main'), (x.bp).chain = array[b.branch_id] || coalesce((x.pp).chain, '{}'),"
        + " cardinality((x.bp).snaps), (x.bp).snaps[1] is null, b.cutoff::text = coalesce((x.bp).snaps[2], (x.bp).main_snap)::text,"
        + " (x.bp).main_snap::text = coalesce((x.pp).main_snap, b.cutoff)::text,"
        + " pg_visible_in_snapshot(b.created_xid, b.cutoff), b.created_at is not null, b.branch_id > 0,"
        + " b.chain is null and b.snaps is null and b.main_snap is null)"
        + " from gnomon.branch b left join gnomon.branch p on p.branch_id = b.parent_id"
        + " cross join lateral (select gnomon.branch_point(b) as bp,"
        + " case when p.branch_id is not null then gnomon.branch_point(p) end as pp) x"
        + " where b.branch_name = '" + name + "'");
  }

  @Test
  void theCCreateWritesWhatTheSqlCreateWrites() throws Exception {
    sql("create table kv (k int primary key, v int)", "insert into kv values (1, 1)");
    gnomon().track("public.kv");
    assertEquals("t", one("select gnomon.branch_c_enabled()"));
    assertEquals("c", one("select l.lanname from pg_proc f join pg_language l on l.oid = f.prolang"
        + " where f.oid = 'gnomon.branch_create(text, text, text, boolean)'::regprocedure"));

    one("select gnomon.branch_create('by_c')");
    one("select gnomon.branch_create_sql('by_sql')");
    assertEquals(shape("by_sql"), shape("by_c"));
    assertEquals("main t 1 t t t f t t t", shape("by_c"));
    one("select gnomon.branch_create('by_c_main', 'main')");
    assertEquals(shape("by_sql"), shape("by_c_main"));

    // the cases the C function hands to the PL/pgSQL one
    one("select gnomon.branch_create('child', 'by_c')");
    one("select gnomon.branch_create_sql('child_sql', 'by_c')");
    assertEquals(shape("child_sql"), shape("child"));
    assertEquals("by_c t 2 t t t f t t f", shape("child"));
    assertTrue(Integer.parseInt(one("select gnomon.branch_create('scr', scratch => true)")) < 0);
    one("select gnomon.branch_create('ünïcode')");
    assertEquals(shape("by_sql"), shape("ünïcode"));

    // the same errors
    assertEquals("GN051", stateOf("select gnomon.branch_create('by_c')"));
    assertEquals("GN051", stateOf("select gnomon.branch_create('by_sql')"));
    assertEquals("GN021", stateOf("select gnomon.branch_create('main')"));
    assertEquals("GN021", stateOf("select gnomon.branch_create('')"));
    assertEquals("GN021", stateOf("select gnomon.branch_create('x' || chr(9))"));
    assertEquals("GN021", stateOf("select gnomon.branch_create(repeat('x', 201))"));
    assertEquals("GN021", stateOf("select gnomon.branch_create(null)"));
    assertEquals("GN050", stateOf("select gnomon.branch_create('orphan', 'no_such_branch')"));
    one("select gnomon.branch_create(repeat('y', 200))");

    // a read of a branch the C function created, through the C read
    sql("update kv set v = 2 where k = 1");
    try (var c = connect(); var st = c.createStatement()) {
      st.execute("select gnomon.branch_use('by_c')");
      try (var rs = st.executeQuery("select v from kv where k = 1")) {
        assertTrue(rs.next());
        assertEquals(1, rs.getInt(1), "the branch reads main as of its cutoff");
      }
    }

    // disabled: the PL/pgSQL function again, with the same behaviour
    sql("select gnomon.use_c_module(false)");
    leaveCPath();
    assertEquals("plpgsql", one("select l.lanname from pg_proc f join pg_language l on l.oid = f.prolang"
        + " where f.oid = 'gnomon.branch_create(text, text, text, boolean)'::regprocedure"));
    assertEquals("f", one("select gnomon.branch_c_enabled()"));
    one("select gnomon.branch_create('after')");
    assertEquals(shape("by_sql"), shape("after"));
    assertEquals("GN051", stateOf("select gnomon.branch_create('by_c')"));
  }

  @Test
  void theCReadNeedsTheRightToReadTheTable() throws Exception {
    sql("create table kv (k int primary key, v int)", "insert into kv values (1, 1)",
        "create role gn_reader", "create role gn_nobody", "grant select on kv to gn_reader");
    gnomon().track("public.kv");
    String id = one("select gnomon.branch_create('b1')");
    String tid = one("select table_id from gnomon.tracked_table where table_name = 'kv'");
    try (var c = connect(); var st = c.createStatement()) {
      st.execute("select set_config('gnomon.branch', '" + id + "', false)");
      st.execute("set role gn_reader");
      try (var rs = st.executeQuery("select gnomon.branch_pick_c(" + tid + ", 0, 0, 0, false, 1)")) {
        assertTrue(rs.next());
        assertTrue(rs.getBoolean(1), "key 1 is main's live row on b1, for a role that may read the table");
      }
      st.execute("set role gn_nobody");
      SQLException e = assertThrows(SQLException.class,
          () -> st.executeQuery("select gnomon.branch_pick_c(" + tid + ", 0, 0, 0, false, 1)").close());
      assertEquals("42501", e.getSQLState(), "the C function alone tells nothing to a role that cannot read the table");
      st.execute("reset role");
    } finally {
      sql("drop owned by gn_reader", "drop owned by gn_nobody", "drop role gn_reader", "drop role gn_nobody");
    }
  }

  /**
   * The C create has no lookup before its insert: the name's unique index decides. A name another transaction is
   * inserting is waited for, as by an INSERT; then GN051 when that transaction committed, the branch when it rolled
   * back. A duplicate within one transaction is GN051 too.
   */
  @Test
  void aNameBeingCreatedElsewhereIsWaitedFor() throws Exception {
    sql("create table kv (k int primary key, v int)");
    gnomon().track("public.kv");
    try (var a = connect(); var sa = a.createStatement()) {
      a.setAutoCommit(false);
      sa.execute("select gnomon.branch_create('mine')");
      SQLException same = assertThrows(SQLException.class, () -> sa.execute("select gnomon.branch_create('mine')"));
      assertEquals("GN051", same.getSQLState());
      a.rollback();
    }
    for (boolean commit : new boolean[] {true, false}) {
      String name = "racing_" + commit;
      try (var a = connect(); var sa = a.createStatement(); var b = connect(); var sb = b.createStatement()) {
        a.setAutoCommit(false);
        sa.execute("select gnomon.branch_create('" + name + "')");
        int pidB;
        try (var rs = sb.executeQuery("select pg_backend_pid()")) {
          rs.next();
          pidB = rs.getInt(1);
        }
        var second = java.util.concurrent.CompletableFuture.supplyAsync(() -> {
          try (var rs = sb.executeQuery("select gnomon.branch_create('" + name + "')")) {
            rs.next();
            return "created " + (rs.getInt(1) > 0);
          } catch (SQLException e) {
            return e.getSQLState();
          }
        });
        // the second waits for the first's transaction (a lock wait), with a deadline instead of a sleep
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!"Lock".equals(one("select coalesce(wait_event_type, '') from pg_stat_activity where pid = " + pidB))) {
          assertFalse(second.isDone(), "the second create did not wait: " + (second.isDone() ? second.get() : ""));
          assertTrue(System.nanoTime() < deadline, "the second create never waited for the first");
          Thread.onSpinWait();
        }
        if (commit) {
          a.commit();
        } else {
          a.rollback();
        }
        assertEquals(commit ? "GN051" : "created true", second.get(60, java.util.concurrent.TimeUnit.SECONDS));
        assertEquals("1", one("select count(*) from gnomon.branch where branch_name = '" + name + "'"));
      }
    }
  }

  /**
   * The C create writes the two index entries a branch of main needs itself, and only while gnomon.branch has no
   * other index: an index added later (here by another session, after this session's first create) gets its entries
   * too, and the name's uniqueness still holds on either path.
   */
  @Test
  void anIndexAddedToTheCatalogGetsItsEntries() throws Exception {
    sql("create table kv (k int primary key, v int)");
    gnomon().track("public.kv");
    try (var a = connect(); var sa = a.createStatement()) {
      sa.execute("select gnomon.branch_create('before_index')");
      sql("create index branch_created_at_test on gnomon.branch (created_at)");
      try {
        sa.execute("select gnomon.branch_create('after_index')");
        SQLException same = assertThrows(SQLException.class, () -> sa.execute("select gnomon.branch_create('after_index')"));
        assertEquals("GN051", same.getSQLState());
        String counted;
        try (var c = connect(); var st = c.createStatement()) {
          st.execute("set enable_seqscan = off");
          st.execute("set enable_bitmapscan = off");
          try (var rs = st.executeQuery("explain select count(*) from gnomon.branch where created_at > '-infinity'")) {
            StringBuilder plan = new StringBuilder();
            while (rs.next()) {
              plan.append(rs.getString(1)).append('\n');
            }
            assertTrue(plan.toString().contains("branch_created_at_test"), plan.toString());
          }
          try (var rs = st.executeQuery("select count(*) from gnomon.branch where created_at > '-infinity'")) {
            rs.next();
            counted = rs.getString(1);
          }
        }
        // before_index was indexed by CREATE INDEX; after_index only if the create wrote the new index's entry
        assertEquals(one("select count(*) from gnomon.branch"), counted);
        assertEquals("1", one("select count(*) from gnomon.branch where branch_name = 'after_index'"));
      } finally {
        sql("drop index gnomon.branch_created_at_test");
      }
      // back to the three indexes: the same session's next create takes the direct path again, names still unique
      sa.execute("select gnomon.branch_create('after_drop')");
      SQLException same = assertThrows(SQLException.class, () -> sa.execute("select gnomon.branch_create('after_drop')"));
      assertEquals("GN051", same.getSQLState());
      assertEquals("1", one("select count(*) from gnomon.branch where branch_name = 'after_drop'"));
    }
  }

  private String stateOf(String query) {
    SQLException e = assertThrows(SQLException.class, () -> one(query), query);
    return e.getSQLState();
  }
}
