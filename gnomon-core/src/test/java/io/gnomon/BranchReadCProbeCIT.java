package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The C module's branch point read probes the branch rows' and main's primary keys by a descent to the leaf and a
 * binary search of it (gnomon-c/src/leaf_probe.c), and takes an index scan where that cannot answer: in SERIALIZABLE
 * (the index scan's predicate locks), and for a key whose entries may continue on the next leaf (a key written on
 * hundreds of branches). Each way returns what the SQL read returns, and says which way it went at DEBUG1.
 */
class BranchReadCProbeCIT extends GnomonIT {
  private static final String INDEX_SCAN = "primary key by an index scan";

  @Override
  boolean cWritePath() {
    return true;
  }

  /**
   * A point read by the generic plan (the module's executor node), its server messages added to {@code messages} (a
   * statement's warnings are cleared by its next execution), and the SQL read of the same key.
   */
  private static String[] readBoth(Statement st, int k, List<String> messages) throws SQLException {
    String node;
    try (ResultSet rs = st.executeQuery("execute q(" + k + ")")) {
      node = rs.next() ? rs.getString(1) : "-";
    }
    messages.addAll(debugMessages(st));
    String sqlRead;
    try (ResultSet rs = st.executeQuery("select coalesce(string_agg(v::text, ','), '-')"
        + " from gnomon_t.kv_at(gnomon.current_point()) where k = " + k)) {
      rs.next();
      sqlRead = rs.getString(1);
    }
    return new String[] {node, sqlRead};
  }

  private static List<String> debugMessages(Statement st) throws SQLException {
    List<String> messages = new ArrayList<>();
    for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
      messages.add(w.getMessage());
    }
    st.clearWarnings();
    return messages;
  }

  private static void prepare(Statement st, String branch) throws SQLException {
    st.execute("select gnomon.branch_use('" + branch + "')");
    st.execute("set plan_cache_mode = force_generic_plan");
    st.execute("prepare q(int) as select v from kv where k = $1");
    StringBuilder plan = new StringBuilder();
    try (ResultSet rs = st.executeQuery("explain (costs off) execute q(1)")) {
      while (rs.next()) {
        plan.append(rs.getString(1)).append('\n');
      }
    }
    assertTrue(plan.toString().contains("Custom Scan (gnomon.branch_pick_c)"), "the module's node:\n" + plan);
  }

  @Test
  void serializableReadsTakeIndexScansAndReadAlike() throws Exception {
    // (small enough that each primary key is one leaf: no key's entries continue on a next leaf)
    sql("create table kv (k int primary key, v int)", "insert into kv select g, g from generate_series(1, 200) g");
    gnomon().track("public.kv");
    sql("select gnomon.branch_create('b1')");
    onBranch("b1", "update kv set v = -k where k % 7 = 0", "delete from kv where k = 14",
        "insert into kv values (201, 201)");
    // main after the cutoff: updated keys (read through main's history at the cutoff), a deleted one, a new one
    sql("update kv set v = v + 1000 where k % 5 = 0", "delete from kv where k = 3", "insert into kv values (300, 300)");
    try (Connection c = connect(); Statement st = c.createStatement()) {
      prepare(st, "b1");
      st.execute("set client_min_messages = debug1");
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_SERIALIZABLE);
      List<String> messages = new ArrayList<>();
      for (int k = 0; k <= 301; k++) {
        String[] both = readBoth(st, k, messages);
        assertEquals(both[1], both[0], "SERIALIZABLE, key " + k);
      }
      c.commit();
      assertTrue(messages.stream().anyMatch(m -> m.contains("main's " + INDEX_SCAN) && m.contains("SERIALIZABLE")),
          "main's row by an index scan in SERIALIZABLE: " + messages.subList(0, Math.min(5, messages.size())));
      assertTrue(messages.stream().anyMatch(m -> m.contains("branch rows' " + INDEX_SCAN)
          && m.contains("SERIALIZABLE")), "the branch rows by an index scan in SERIALIZABLE");
      // and the same reads in READ COMMITTED take no index scan at all
      c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
      List<String> after = new ArrayList<>();
      for (int k = 0; k <= 301; k++) {
        String[] both = readBoth(st, k, after);
        assertEquals(both[1], both[0], "READ COMMITTED, key " + k);
      }
      c.commit();
      assertTrue(after.stream().noneMatch(m -> m.contains(INDEX_SCAN)), "no index scan in READ COMMITTED: " + after);
    }
  }

  @Test
  void aKeyWrittenOnManyBranchesIsReadByAnIndexScan() throws Exception {
    int branches = 700;
    sql("create table kv (k int primary key, v int)", "insert into kv select g, g from generate_series(1, 100) g");
    gnomon().track("public.kv");
    // key 42 written on 700 branches: its entries in the branch rows' primary key (k, g_branch) fill more than a
    // leaf; key 43 on every tenth
    sql("do $$ begin for i in 1.." + branches + " loop"
        + " perform gnomon.branch_create('m' || i); perform gnomon.branch_use('m' || i);"
        + " update kv set v = 100000 + i where k = 42;"
        + " if i % 10 = 0 then update kv set v = 200000 + i where k = 43; end if;"
        + " end loop; perform gnomon.branch_use('main'); end $$");
    sql("select gnomon.branch_create('none')");
    for (String branch : List.of("m1", "m350", "m700", "none")) {
      try (Connection c = connect(); Statement st = c.createStatement()) {
        prepare(st, branch);
        st.execute("set client_min_messages = debug1");
        List<String> messages = new ArrayList<>();
        String[] both = readBoth(st, 42, messages);
        String expected = branch.equals("none") ? "42" : String.valueOf(100000 + Integer.parseInt(branch.substring(1)));
        assertEquals(expected, both[0], branch + ": key 42 by the module's node");
        assertEquals(expected, both[1], branch + ": key 42 by the SQL read");
        assertTrue(messages.stream().anyMatch(m -> m.contains("branch rows' " + INDEX_SCAN)
            && m.contains("next leaf")), branch + ": key 42's entries continue on the next leaf: " + messages);
        // key 43's 70 entries may straddle a leaf's end: read alike, whichever way
        String[] k43 = readBoth(st, 43, new ArrayList<>());
        assertEquals(k43[1], k43[0], branch + ", key 43");
        List<String> rest = new ArrayList<>();
        for (int k : new int[] {1, 41, 44, 100}) {
          String[] other = readBoth(st, k, rest);
          assertEquals(other[1], other[0], branch + ", key " + k);
        }
        assertTrue(rest.stream().noneMatch(m -> m.contains(INDEX_SCAN)),
            branch + ": keys of a few entries each are read by the leaf probe: " + rest);
      }
    }
  }
}
