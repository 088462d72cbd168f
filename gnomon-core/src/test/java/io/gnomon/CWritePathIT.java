package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.sql.GnomonSqlState;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The optional C write path writes exactly the history the PL/pgSQL trigger writes. A seeded random workload runs
 * every statement on two identical tables in the same transaction, {@code pl} behind the PL/pgSQL trigger and
 * {@code cc} behind {@code gnomon.write_c()}; their histories (xid, operation and image of every version, in version
 * order along each key) and their as-of reads must be identical. Run with {@code -Dgnomon.seed=N} to replay.
 */
class CWritePathIT extends GnomonIT {
  private static final int TRANSACTIONS = 160;

  @Override
  boolean cWritePath() {
    return true;
  }

  /** Creates pl and cc from one DDL template (%1$s is the name), tracks both, and puts pl back on PL/pgSQL. */
  private void twoTables(String... ddl) throws SQLException {
    for (String name : List.of("pl", "cc")) {
      for (String d : ddl) {
        sql(String.format(d, name));
      }
      gnomon().track(name);
    }
    sql("select gnomon.install_triggers(table_id, false) from gnomon.tracked_table where table_name = 'pl'");
    leaveCPath("pl");
    assertEquals("gnomon_t.pl_write()", one("select tgfoid::regprocedure::text from pg_trigger where tgname = 'gnomon_update'"
        + " and tgrelid = 'pl'::regclass"));
    assertEquals("gnomon.write_c()", one("select tgfoid::regprocedure::text from pg_trigger where tgname = 'gnomon_update'"
        + " and tgrelid = 'cc'::regclass"));
  }

  private static final String[] PLAIN = {
    "create table %1$s (id int, dropped int, v text, n numeric, j jsonb, d gnomon_test_pos, big text, primary key (id))",
    "alter table %1$s drop column dropped"
  };

  private static final String[] PARTITIONED = {
    "create table %1$s (id int, dropped int, v text, n numeric, j jsonb, d gnomon_test_pos, big text, primary key (id))"
        + " partition by range (id)",
    "alter table %1$s drop column dropped",
    "create table %1$s_low partition of %1$s for values from (minvalue) to (1000)",
    "create table %1$s_high partition of %1$s for values from (1000) to (maxvalue)"
  };

  @Test
  void aRandomWorkloadWritesTheSameHistoryThroughBothTriggers() throws Exception {
    sql("create domain gnomon_test_pos as int check (value > 0)");
    twoTables(PLAIN);
    runWorkload("plain", true);
  }

  @Test
  void partitionedTablesWriteTheSameHistoryThroughBothTriggers() throws Exception {
    sql("create domain gnomon_test_pos as int check (value > 0)");
    twoTables(PARTITIONED);
    runWorkload("partitioned", false);
  }

  /**
   * A statement of more than a thousand rows goes to the history in batches (table_multi_insert, then each version's
   * index entries): full batches and a partial last one, a batch rolled back with its savepoint, and every version
   * found again through the history's indexes at its own TID.
   */
  @Test
  void statementsOfThousandsOfRowsWriteTheSameHistoryInBatches() throws Exception {
    sql("create domain gnomon_test_pos as int check (value > 0)");
    twoTables(PLAIN);
    String start = coordinate();
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      both(st, "insert into %1$s (id, v, n, big) select g, 'b' || g, g, case when g %% 500 = 0 then repeat('y', 5000)"
          + " end from generate_series(1, 2500) g");
      c.commit();
      both(st, "update %1$s set v = v || '+', n = n + 1");
      st.execute("savepoint sp");
      both(st, "update %1$s set v = 'gone' where id <= 1500");
      st.execute("rollback to savepoint sp");
      both(st, "delete from %1$s where id > 1299");
      c.commit();
      c.setAutoCommit(true);
    }
    String pl = history("pl");
    String cc = history("cc");
    assertEquals(2500 + 2500 + 1201, cc.split("\n").length, "versions: insert, update, delete (the rolled-back"
        + " update's none)");
    assertEquals(pl, cc, "the batched C trigger wrote another history: " + firstDifference(pl, cc));
    String now = coordinate();
    for (String coord : List.of(start, now)) {
      assertEquals(asOf("pl", coord), asOf("cc", coord), "as-of " + coord);
    }
    // each index entry at its version's TID: the same versions through the key's B-tree and through the BRIN on g_xid
    // as by a sequential scan
    String bySeq = one("select string_agg((id, g_vid)::text, ',' order by id, g_vid) from gnomon_t.cc_h");
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("set enable_seqscan = off");
      st.execute("set enable_bitmapscan = off");
      assertSameThrough(st, "Index Scan", bySeq, "id between 1 and 2500");
      st.execute("set enable_bitmapscan = on");
      st.execute("set enable_indexscan = off");
      assertSameThrough(st, "Bitmap Index Scan", bySeq, "g_xid > '1'::xid8");
    }
  }

  private static void assertSameThrough(Statement st, String node, String expected, String where) throws SQLException {
    String q = "select string_agg((id, g_vid)::text, ',' order by id, g_vid) from gnomon_t.cc_h where " + where;
    StringBuilder plan = new StringBuilder();
    try (ResultSet rs = st.executeQuery("explain (costs off) " + q)) {
      while (rs.next()) {
        plan.append(rs.getString(1)).append('\n');
      }
    }
    assertTrue(plan.toString().contains(node), "planned with a " + node + ": " + plan);
    try (ResultSet rs = st.executeQuery(q)) {
      rs.next();
      assertEquals(expected, rs.getString(1), "the versions found through a " + node + " where " + where);
    }
  }

  /** The random workload: each statement on pl, then on cc, in one transaction; then both histories compared. */
  private void runWorkload(String label, boolean addColumnHalfway) throws Exception {
    long seed = Seeds.seed("CWritePathIT " + label);
    Random r = new Random(seed);
    List<String> coordinates = new ArrayList<>();
    int shift = 0;
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      both(st, "insert into %1$s (id, v, n) select g, 'pre' || g, g from generate_series(1, 40) g");
      c.commit();
      for (int t = 0; t < TRANSACTIONS; t++) {
        if (addColumnHalfway && t == TRANSACTIONS / 2) {
          both(st, "alter table %1$s add column extra int default 7");
          c.commit();
        }
        int statements = 1 + r.nextInt(4);
        for (int s = 0; s < statements; s++) {
          boolean savepoint = r.nextInt(8) == 0;
          if (savepoint) {
            st.execute("savepoint sp");
          }
          both(st, randomStatement(r, ++shift));
          if (savepoint) {
            st.execute(r.nextBoolean() ? "rollback to savepoint sp" : "release savepoint sp");
          }
        }
        if (r.nextInt(7) == 0) {
          c.rollback();
        } else {
          c.commit();
        }
        if (r.nextInt(10) == 0) {
          try (ResultSet rs = st.executeQuery("select gnomon.coordinate()")) {
            rs.next();
            coordinates.add(rs.getString(1));
          }
          c.commit();
        }
      }
      c.setAutoCommit(true);
    }
    coordinates.add(coordinate());
    String pl = history("pl");
    String cc = history("cc");
    assertTrue(pl.split("\n").length > TRANSACTIONS, "the workload wrote versions: " + pl.split("\n").length);
    assertEquals(pl, cc, "the C trigger wrote another history than the PL/pgSQL trigger (seed " + seed + "): "
        + firstDifference(pl, cc));
    for (String coord : coordinates) {
      assertEquals(asOf("pl", coord), asOf("cc", coord), "as-of " + coord + " (seed " + seed + ")");
    }
    assertEquals(asOf("cc", coordinates.get(coordinates.size() - 1)),
        one("select coalesce(string_agg((id, v, n, j, d, md5(big))::text, ',' order by id), '') from cc"),
        "as of now reads the live table");
  }

  /** The first line where two histories differ, with its neighbours. */
  private static String firstDifference(String a, String b) {
    String[] x = a.split("\n");
    String[] y = b.split("\n");
    for (int i = 0; i < Math.max(x.length, y.length); i++) {
      String l = i < x.length ? x[i] : "(none)";
      String m = i < y.length ? y[i] : "(none)";
      if (!l.equals(m)) {
        return "line " + i + ": pl " + l + " / cc " + m + "; before: " + (i > 0 ? x[i - 1] : "(start)")
            + "; after: pl " + (i + 1 < x.length ? x[i + 1] : "(end)") + " / cc " + (i + 1 < y.length ? y[i + 1] : "(end)");
      }
    }
    return "none";
  }

  /** Runs one statement template on pl, then on cc, and requires the same row count. */
  private static void both(Statement st, String template) throws SQLException {
    int pl = st.executeUpdate(String.format(template, "pl"));
    int cc = st.executeUpdate(String.format(template, "cc"));
    assertEquals(pl, cc, template);
  }

  private static String randomStatement(Random r, int shift) {
    int a = 1 + r.nextInt(200);
    int b = a + r.nextInt(12);
    switch (r.nextInt(12)) {
      case 0:
      case 1:
        {
          StringBuilder values = new StringBuilder();
          int rows = 1 + r.nextInt(r.nextBoolean() ? 3 : 30);
          for (int i = 0; i < rows; i++) {
            values.append(i == 0 ? "" : ", ").append(row(r, 0));
          }
          return "insert into %1$s (id, v, n, j, d, big) values " + values + " on conflict (id) do nothing";
        }
      case 2:
        return "insert into %1$s (id, v, n, j, d, big) values " + row(r, 0) + ", " + row(r, 1000000)
            + " on conflict (id) do update set v = excluded.v, n = %1$s.n + 1";
      case 3:
      case 4:
        return "update %1$s set v = 'u" + r.nextInt(1000) + "', n = n * 2, j = jsonb_build_object('k', " + r.nextInt(9)
            + ") where id %% " + (2 + r.nextInt(5)) + " = " + r.nextInt(2);
      case 5:
        return "update %1$s set d = " + (1 + r.nextInt(50)) + " where id between " + a + " and " + b;
      case 6:
        // key changes: rows of [a, b] move to a range no other statement uses (and, partitioned, to another partition)
        return "update %1$s set id = id + " + (1000 * shift) + ", v = 'moved' where id between " + a + " and " + b;
      case 7:
        return "update %1$s set big = repeat(md5('" + r.nextInt(1000) + "'), 300) where id between " + a + " and " + b;
      case 8:
        return "delete from %1$s where id %% " + (3 + r.nextInt(9)) + " = " + r.nextInt(3);
      case 9:
        return "delete from %1$s where id between " + a + " and " + b;
      case 10:
        return r.nextInt(6) == 0 ? "truncate %1$s" : "update %1$s set n = null where id = " + a;
      default:
        // a statement that touches no row
        return "update %1$s set v = 'none' where id < 0";
    }
  }

  private static String row(Random r, int offset) {
    int id = offset + 1 + r.nextInt(200);
    String big = r.nextInt(5) == 0 ? "repeat('x" + r.nextInt(100) + "', 3000)" : "null";
    return "(" + id + ", " + (r.nextInt(6) == 0 ? "null" : "'v" + r.nextInt(100) + "'") + ", " + r.nextInt(1000) + ".5, "
        + (r.nextBoolean() ? "'{\"a\": [1, 2]}'" : "null") + ", " + (1 + r.nextInt(9)) + ", " + big + ")";
  }

  /** Every version of a table in version order along each key: xid, operation and image (big as its md5). */
  private String history(String table) throws SQLException {
    String extra = one("select count(*) from pg_attribute where attrelid = '" + table + "'::regclass and attname = 'extra'")
        .equals("1") ? ", extra" : "";
    return one("select string_agg((id, g_xid, g_op, v, n, j, d, md5(big)" + extra + ")::text, E'\\n'"
        + " order by id, g_vid) from gnomon_t." + table + "_h");
  }

  private String asOf(String table, String coordinate) throws SQLException {
    return one("select coalesce(string_agg((id, v, n, j, d, md5(big))::text, ',' order by id), '') from gnomon_t."
        + table + "_as_of('" + coordinate + "')");
  }

  @Test
  void longValuesAreStoredCompressedAndReadBackUnchanged() throws Exception {
    twoTables("create table %1$s (id int primary key, f char(84), t text, s text, e text, short text)");
    sql("alter table gnomon_t.cc_h alter column e set storage external");
    for (String name : List.of("pl", "cc")) {
      sql("insert into " + name + " select g, 'f' || g, repeat('ab', 200) || g, md5(g::text) || md5((g * 7)::text),"
          + " repeat('e', 100), 'x' || g from generate_series(1, 50) g");
    }
    String coordinate = coordinate();
    for (String name : List.of("pl", "cc")) {
      sql("update " + name + " set f = 'g', t = 'new', s = 'new', e = 'new', short = 'new'");
    }
    // the C trigger compressed the blank-padded char and the repetitive text; the PL/pgSQL trigger, which has no way
    // to, stored them as they were; a column whose storage is EXTERNAL, and a value under 32 bytes, stay as they are
    assertEquals("50", one("select count(*) from gnomon_t.cc_h where g_op = 'U' and pg_column_size(f) < 20"
        + " and pg_column_size(t) < 100 and pg_column_size(e) > 100 and pg_column_size(short) = octet_length(short) + 1"));
    assertEquals("0", one("select count(*) from gnomon_t.pl_h where pg_column_size(f) < 80 or pg_column_size(t) < 400"));
    String pl = one("select string_agg((id, g_op, f, t, s, e, short)::text, ',' order by id, g_vid) from gnomon_t.pl_h");
    assertEquals(pl, one("select string_agg((id, g_op, f, t, s, e, short)::text, ',' order by id, g_vid) from gnomon_t.cc_h"));
    String asOf = "select string_agg((id, f, t, s, e, short)::text, ',' order by id) from gnomon_t.%s_as_of('"
        + coordinate + "')";
    assertEquals(one(String.format(asOf, "pl")), one(String.format(asOf, "cc")));
    assertTrue(one(String.format(asOf, "cc")).contains("(7,\"f7 "), "the as-of read sees the old values");
  }

  @Test
  void aKeyThatChangesOnlyItsBytesWritesWhatThePlpgsqlTriggerWrites() throws Exception {
    // numeric 1.0 and 1.00 are equal keys with other bytes: the C trigger sees a change and lets PL/pgSQL pair by key
    twoTables("create table %1$s (id numeric primary key, v text)");
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      both(st, "insert into %1$s values (1.0, 'a'), (2, 'b'), (3, 'c')");
      c.commit();
      both(st, "update %1$s set id = 1.00, v = 'x' where id = 1");
      both(st, "update %1$s set id = id * 10 where id >= 2");
      both(st, "update %1$s set v = 'y'");
      c.commit();
    }
    String pl = one("select string_agg((id, g_xid, g_op, v)::text, ',' order by id, g_vid) from gnomon_t.pl_h");
    assertEquals(pl, one("select string_agg((id, g_xid, g_op, v)::text, ',' order by id, g_vid) from gnomon_t.cc_h"));
    assertTrue(pl.contains("(1.0,") && pl.contains(",D,b)") && pl.contains(",I,)"), pl);
  }

  @Test
  void plainWritesNeverReachThePlpgsqlFunctionAndRarePathsDo() throws Exception {
    sql("create table f (id int primary key, v int)");
    gnomon().track("f");
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("set track_functions = 'all'");
      c.setAutoCommit(false);
      st.execute("insert into f select g, g from generate_series(1, 10) g");
      st.execute("update f set v = v + 1");
      st.execute("delete from f where id = 10");
      assertEquals("0", calls(st, "gnomon_t.f_write()"), "insert, update and delete are written in C");
      assertEquals("3", calls(st, "gnomon.write_c()"));
      st.execute("update f set id = id + 100 where id = 1"); // a key change: paired by key in PL/pgSQL
      st.execute("truncate f");
      assertEquals("2", calls(st, "gnomon_t.f_write()"), "the key change and the truncate go to PL/pgSQL");
      c.commit();
    }
    assertEquals("D:11,I:11,U:10", one("select string_agg(g_op::text || ':' || n, ',' order by g_op)"
        + " from (select g_op, count(*) n from gnomon_t.f_h group by g_op) x"));
  }

  private static String calls(Statement st, String function) throws SQLException {
    try (ResultSet rs = st.executeQuery("select coalesce((select calls from pg_stat_xact_user_functions"
        + " where funcid = '" + function + "'::regprocedure), 0)")) {
      rs.next();
      return rs.getString(1);
    }
  }

  @Test
  void concurrentWritersAndAPartitionRollKeepVersionsInOrderAndInTheirPartition() throws Exception {
    long seed = Seeds.seed("CWritePathIT concurrent");
    sql("create table ctr (id int primary key, v int not null)", "insert into ctr select g, 0 from generate_series(1, 5) g");
    gnomon().track("ctr");
    int writers = 4;
    int perWriter = 60;
    ExecutorService pool = Executors.newFixedThreadPool(writers + 1);
    CountDownLatch start = new CountDownLatch(1);
    AtomicBoolean done = new AtomicBoolean();
    AtomicInteger realRolls = new AtomicInteger();
    List<Future<int[]>> futures = new ArrayList<>();
    for (int w = 0; w < writers; w++) {
      Random r = new Random(seed * 17 + w);
      futures.add(pool.submit(() -> {
        int[] increments = new int[6];
        try (Connection c = connect();
            Statement st = c.createStatement()) {
          start.await();
          // at least perWriter transactions, and on until the history has really rolled twice (a roll of the empty
          // open partition adds none, and on a fast machine the writers used to finish before the second roll)
          for (int i = 0; i < perWriter || (realRolls.get() < 2 && i < 100 * perWriter); i++) {
            int k = 1 + r.nextInt(5);
            c.setAutoCommit(false);
            // any error fails the test, a deadlock (40P01) too: roll_history locks the history's parent before its
            // partition, in the writers' order
            st.executeUpdate("update ctr set v = v + 1 where id = " + k);
            if (r.nextInt(6) == 0) {
              c.rollback();
            } else {
              c.commit();
              increments[k]++;
            }
            c.setAutoCommit(true);
          }
        }
        return increments;
      }));
    }
    Future<Integer> rolls = pool.submit(() -> {
      try (Connection c = connect();
          Statement st = c.createStatement()) {
        start.await();
        String open = one("select relname from pg_class where oid = gnomon.open_history_partition('gnomon_t.ctr_h')");
        while (!done.get() && realRolls.get() < 4) {
          String now = null;
          try (ResultSet rs = st.executeQuery("select gnomon.roll_history('ctr', 1000)")) {
            rs.next();
            now = rs.getString(1);
          }
          if (!now.equals(open)) {
            realRolls.incrementAndGet();
            open = now;
          }
          for (int i = 0; i < 1100 && !done.get(); i++) {
            st.execute("select pg_current_xact_id()");
          }
        }
      }
      return realRolls.get();
    });
    start.countDown();
    int[] total = new int[6];
    for (Future<int[]> f : futures) {
      int[] inc = f.get(10, TimeUnit.MINUTES);
      for (int k = 1; k <= 5; k++) {
        total[k] += inc[k];
      }
    }
    done.set(true);
    assertTrue(rolls.get(10, TimeUnit.MINUTES) >= 2, "the history rolled twice while writers wrote");
    pool.shutdown();
    for (int k = 1; k <= 5; k++) {
      // each committed increment left one version holding the value before it: 0, 1, 2, … in version order
      assertEquals(String.valueOf(total[k]), one("select v from ctr where id = " + k));
      String expected = total[k] == 0 ? null : one("select string_agg(g::text, ',' order by g) from generate_series(0, "
          + (total[k] - 1) + ") g");
      assertEquals(expected, one("select string_agg(v::text, ',' order by g_vid) from gnomon_t.ctr_h where id = " + k),
          "versions of key " + k + " in version order (seed " + seed + ")");
    }
    // every version lies in the partition whose range holds its xid (the C trigger routes without the CHECK)
    Pattern bound = Pattern.compile("FOR VALUES FROM \\((.*)\\) TO \\((.*)\\)");
    int parts = 0;
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select c.relname, pg_get_expr(c.relpartbound, c.oid) from pg_inherits i"
            + " join pg_class c on c.oid = i.inhrelid where i.inhparent = 'gnomon_t.ctr_h'::regclass")) {
      List<String[]> list = new ArrayList<>();
      while (rs.next()) {
        list.add(new String[] {rs.getString(1), rs.getString(2)});
      }
      for (String[] p : list) {
        Matcher m = bound.matcher(p[1]);
        assertTrue(m.matches(), p[1]);
        String lo = m.group(1).equals("MINVALUE") ? "true" : "g_xid >= " + m.group(1) + "::xid8";
        String hi = m.group(2).equals("MAXVALUE") ? "true" : "g_xid < " + m.group(2) + "::xid8";
        try (ResultSet out = c.createStatement().executeQuery(
            "select count(*) from gnomon_t." + p[0] + " where not (" + lo + " and " + hi + ")")) {
          out.next();
          assertEquals(0, out.getInt(1), "versions outside the range of " + p[0] + " " + p[1]);
        }
        parts++;
      }
    }
    assertTrue(parts >= 2, "partitions: " + parts);
    assertEquals(one("select string_agg(id || ':' || v, ',' order by id) from ctr"), rows("ctr", coordinate()));
  }

  @Test
  void misuseAndAMissingLibraryGetGnomonErrors() throws Exception {
    SQLException missing = assertThrows(SQLException.class,
        () -> sql("select gnomon.use_c_module(true, '/nonexistent/gnomon_missing.so')"));
    assertEquals(GnomonSqlState.C_MODULE_UNAVAILABLE.sqlState(), missing.getSQLState(), missing.getMessage());
    assertTrue(one("select gnomon.c_module_enabled()").equals("t"), "a failed load leaves the loaded module in place");

    sql("create table u (id int primary key)",
        "create trigger gnomon_insert after insert on u referencing new table as gnomon_new"
            + " for each statement execute function gnomon.write_c()");
    SQLException untracked = assertThrows(SQLException.class, () -> sql("insert into u values (1)"));
    assertEquals(GnomonSqlState.C_TRIGGER_MISUSE.sqlState(), untracked.getSQLState(), untracked.getMessage());

    sql("create table w (id int primary key)");
    gnomon().track("w");
    sql("create trigger extra after insert on w referencing new table as n for each statement execute function gnomon.write_c()");
    SQLException extra = assertThrows(SQLException.class, () -> sql("insert into w values (1)"));
    assertEquals(GnomonSqlState.C_TRIGGER_MISUSE.sqlState(), extra.getSQLState(), extra.getMessage());
    sql("drop trigger extra on w", "insert into w values (1)");
    assertEquals("1", one("select count(*) from gnomon_t.w_h"));

    // disabling puts the PL/pgSQL triggers back and drops the C functions; writes are still versioned
    // (while another trigger calls gnomon.write_c(), disabling is refused with GN070, and nothing changes)
    SQLException blocked = assertThrows(SQLException.class, () -> sql("select gnomon.use_c_module(false)"));
    assertEquals(GnomonSqlState.C_MODULE_UNAVAILABLE.sqlState(), blocked.getSQLState(), blocked.getMessage());
    assertTrue(blocked.getMessage().contains("gnomon_insert on u"), blocked.getMessage());
    assertTrue(blocked.getMessage().contains("Hint"), blocked.getMessage());
    assertEquals("t", one("select gnomon.c_module_enabled()"));
    sql("drop table u");
    leaveCPath();
    assertEquals("1", one("select gnomon.use_c_module(false)"));
    assertEquals("f", one("select gnomon.c_module_enabled()"));
    assertEquals("gnomon_t.w_write()", one("select tgfoid::regprocedure::text from pg_trigger where tgname = 'gnomon_insert'"
        + " and tgrelid = 'w'::regclass"));
    sql("insert into w values (2)");
    assertEquals("2", one("select count(*) from gnomon_t.w_h"));
    SQLException bad = assertThrows(SQLException.class, () -> sql("select gnomon.use_c_module(null)"));
    assertEquals(GnomonSqlState.INVALID_ARGUMENT.sqlState(), bad.getSQLState());
  }

  @Test
  void aRestoreWithoutTheLibraryIsRefusedAtStartUpAndUseCModuleFalseRepairsIt() throws Exception {
    sql("create table rs (id int primary key, v int)");
    gnomon().track("rs");
    // what restoring a dump on a server without the C module leaves: CREATE FUNCTION gnomon.write_c() ... LANGUAGE C
    // fails (the library is checked even during a restore), and so do the CREATE TRIGGERs that call it
    sql("drop function gnomon.write_c() cascade");
    assertEquals("0", one("select count(*) from pg_trigger where tgrelid = 'rs'::regclass"));
    SQLException check = assertThrows(SQLException.class, () -> sql("select gnomon.check_triggers()"));
    assertEquals(GnomonSqlState.TRIGGERS_MISSING.sqlState(), check.getSQLState(), check.getMessage());
    WriteTriggersMissingException open = assertThrows(WriteTriggersMissingException.class, () -> Gnomon.open(dataSource()));
    assertTrue(open.getMessage().contains("public.rs (gnomon_insert, gnomon_update, gnomon_delete, gnomon_truncate, gnomon_key_change)"),
        open.getMessage());
    assertTrue(open.getMessage().contains("select gnomon.use_c_module(false);"), open.getMessage());

    assertEquals("1", one("select gnomon.use_c_module(false)"));
    sql("select gnomon.check_triggers()");
    Gnomon.open(dataSource()).close();
    sql("insert into rs values (1, 1)");
    assertEquals("1", one("select count(*) from gnomon_t.rs_h"));
    // a table on the PL/pgSQL path needs its key-change trigger too
    sql("drop trigger gnomon_key_change on rs");
    SQLException keyChange = assertThrows(SQLException.class, () -> sql("select gnomon.check_triggers()"));
    assertTrue(keyChange.getMessage().contains("public.rs (gnomon_key_change)"), keyChange.getMessage());
    sql("select gnomon.use_c_module(false)");
    leaveCPath();
  }

  @Test
  void aSessionThatLoadsAnotherInterfaceVersionIsRefusedAtItsFirstWrite() throws Exception {
    sql("create table iv (id int primary key)");
    gnomon().track("iv");
    sql("insert into iv values (1)");
    // the catalog now expects another build than the library on the server: a new session must not write with it
    sql("create or replace function gnomon.c_module_interface_version() returns integer language sql immutable as 'select 2'");
    SQLException e = assertThrows(SQLException.class, () -> sql("insert into iv values (2)"));
    assertEquals(GnomonSqlState.C_MODULE_UNAVAILABLE.sqlState(), e.getSQLState(), e.getMessage());
    assertTrue(e.getMessage().contains("interface version 1, the catalog expects 2"), e.getMessage());
    CModuleUnavailableException translated =
        assertThrows(CModuleUnavailableException.class, () -> sqlTranslated("insert into iv values (2)"));
    assertTrue(translated.getMessage().contains("use_c_module"), translated.getMessage());
    sql("create or replace function gnomon.c_module_interface_version() returns integer language sql immutable as 'select 1'");
    sql("insert into iv values (2)");
    assertEquals("2", one("select count(*) from gnomon_t.iv_h"));
  }

  @Test
  void theCTriggerRefusesAnAfterTruncateAndOtherTransitionTableNames() throws Exception {
    sql("create table tt (id int primary key)");
    gnomon().track("tt");
    sql("drop trigger gnomon_truncate on tt",
        "create trigger gnomon_truncate after truncate on tt for each statement execute function gnomon.write_c()");
    SQLException truncate = assertThrows(SQLException.class, () -> sql("truncate tt"));
    assertEquals(GnomonSqlState.C_TRIGGER_MISUSE.sqlState(), truncate.getSQLState(), truncate.getMessage());
    CTriggerMisuseException translated = assertThrows(CTriggerMisuseException.class, () -> sqlTranslated("truncate tt"));
    assertTrue(translated.getMessage().contains("public.tt"), translated.getMessage());
    sql("drop trigger gnomon_insert on tt",
        "create trigger gnomon_insert after insert on tt referencing new table as other"
            + " for each statement execute function gnomon.write_c()");
    SQLException insert = assertThrows(SQLException.class, () -> sql("insert into tt values (1)"));
    assertEquals(GnomonSqlState.C_TRIGGER_MISUSE.sqlState(), insert.getSQLState(), insert.getMessage());
    sql("select gnomon.use_c_module(true, '" + cLibrary() + "')", "insert into tt values (1)", "truncate tt");
    assertEquals("I,D", one("select string_agg(g_op::text, ',' order by g_vid) from gnomon_t.tt_h"));
  }

  /** The "… does not exist, skipping" notices in a chain of warnings (the disabled triggers' WARNINGs are meant). */
  private static String skippingNotices(SQLWarning w) {
    StringBuilder found = new StringBuilder();
    for (; w != null; w = w.getNextWarning()) {
      if (w.getMessage().contains("does not exist, skipping")) {
        found.append(w.getMessage()).append('\n');
      }
    }
    return found.toString();
  }

  @Test
  void switchingTheWritePathKeepsEachTriggersEnabledState() throws Exception {
    sql("create table en (id int primary key)");
    gnomon().track("en");
    sql("alter table en enable always trigger gnomon_update", "alter table en enable replica trigger gnomon_insert",
        "alter table en disable trigger gnomon_delete");
    String states = "select string_agg(tgname || '=' || tgenabled::text, ',' order by tgname) from pg_trigger where tgrelid = 'en'::regclass";
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("select gnomon.use_c_module(false)");
      // no NOTICE for each function an earlier release or a first enable never made ("does not exist, skipping")
      assertEquals("", skippingNotices(st.getWarnings()));
      assertEquals("gnomon_delete=D,gnomon_insert=R,gnomon_key_change=A,gnomon_truncate=O,gnomon_update=A", one(states));
      st.clearWarnings();
      st.execute("select gnomon.use_c_module(true, '" + cLibrary() + "')");
      assertEquals("", skippingNotices(st.getWarnings()));
    }
    assertEquals("gnomon_delete=D,gnomon_insert=R,gnomon_truncate=O,gnomon_update=A", one(states));
  }

  @Test
  void badArgumentsAndANonSuperuserGetGnomonErrorsWithHints() throws Exception {
    SQLException unknown = assertThrows(SQLException.class, () -> sql("select gnomon.install_triggers(987654)"));
    assertEquals(GnomonSqlState.TABLE_NOT_TRACKED.sqlState(), unknown.getSQLState(), unknown.getMessage());
    sql("create role gnomon_c_plain login");
    try {
      for (String call : List.of("select gnomon.use_c_module(false)", "select gnomon.use_c_module(true)")) {
        SQLException e;
        try (Connection c = connect();
            Statement st = c.createStatement()) {
          st.execute("set role gnomon_c_plain");
          e = assertThrows(SQLException.class, () -> st.execute(call));
        }
        assertEquals(GnomonSqlState.C_MODULE_UNAVAILABLE.sqlState(), e.getSQLState(), call + ": " + e.getMessage());
        assertTrue(e.getMessage().contains("needs a superuser") && e.getMessage().contains("Hint"), e.getMessage());
      }
    } finally {
      sql("drop role gnomon_c_plain");
    }
    // a history partition detached by hand: the C trigger finds none for the xid and says how to repair it
    sql("create table hp (id int primary key)");
    gnomon().track("hp");
    sql("alter table gnomon_t.hp_h detach partition gnomon_t.hp_h_0");
    SQLException none = assertThrows(SQLException.class, () -> sql("insert into hp values (1)"));
    assertEquals(GnomonSqlState.C_TRIGGER_INTERNAL.sqlState(), none.getSQLState(), none.getMessage());
    assertTrue(none.getMessage().contains("gnomon_t.hp_h"), none.getMessage());
  }
}
