package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The direct write of a branch's first merge into main (the keys whose row on main is unchanged since the base written
 * without a plan, {@code gnomon.merge_direct_table}) against the planned merge ({@code gnomon.merge_direct = off}): on
 * seeded random histories — a fresh branch of main per step, written at random, main written at random before and
 * after the fork, strategies of every kind, random delete rules, declared resolutions — each merge runs both ways in
 * transactions rolled back, and must leave the same tables, write the same history (every version of the merge's
 * transaction: operation and image), return the same counts and status, and record the same conflicts. The direct
 * merge is then committed and the histories go on. Prints its seed; set {@code -Dgnomon.merge.seed=S} to replay a run.
 */
class MergeDirectDifferentialIT extends GnomonIT {

  /** A merge of source into main in a transaction rolled back: what it returned, left, wrote and recorded. */
  private String[] outcome(String source, boolean direct) throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      try {
        st.execute("set local gnomon.merge_direct = " + (direct ? "on" : "off"));
        StringBuilder out = new StringBuilder();
        String id;
        try (ResultSet rs = st.executeQuery("select merge_id, status, adds, modifications, deletes, conflicts from gnomon.merge('"
            + source + "', 'main')")) {
          rs.next();
          id = rs.getString(1);
          out.append(String.format("status %s adds %d modifications %d deletes %d conflicts %d%n", rs.getString(2), rs.getLong(3),
              rs.getLong(4), rs.getLong(5), rs.getLong(6)));
        }
        String planned = one(c, "select count(*) from pg_temp.gnomon_merge_plan");
        for (String table : new String[] {"t", "u"}) {
          out.append("table ").append(table).append(":\n").append(one(c, "select string_agg(to_jsonb(x)::text, e'\\n' order by x.id)"
              + " from " + table + " x")).append('\n');
          String history = one(c, "select history_table from gnomon.tracked_table where table_name = '" + table + "'");
          out.append("history of ").append(table).append(":\n").append(one(c, "select string_agg(v, e'\\n' order by v) from"
              + " (select (to_jsonb(h) - 'g_vid' - 'g_xid')::text as v from gnomon_t." + history + " h"
              + " where h.g_xid = pg_current_xact_id()) s")).append('\n');
        }
        out.append("conflicts:\n").append(one(c, "select string_agg(v, e'\\n' order by v) from (select row(table_name, key, column_name,"
            + " kind, base, ours, theirs, strategy, reason)::text as v from gnomon.merge_conflicts(" + id + ")) s"));
        return new String[] {out.toString(), planned};
      } finally {
        c.rollback();
      }
    }
  }

  private static String one(Connection c, String query) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private void onPoint(String point, Random rnd, int writes) throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("select gnomon.branch_use('" + point + "')");
      for (int w = writes; w > 0; w--) {
        st.execute(MergeTypedDifferentialIT.randomWrite(rnd));
      }
    }
  }

  @Test
  void theDirectMergeLeavesWhatThePlannedMergeLeaves() throws Exception {
    long seed = Long.getLong("gnomon.merge.seed", System.nanoTime());
    System.out.println("MergeDirectDifferentialIT seed " + seed + " (replay with -Dgnomon.merge.seed=" + seed + ")");
    Random rnd = new Random(seed);
    MergeTypedDifferentialIT.trackTables(this);
    int compared = 0;
    int direct = 0;
    int withConflicts = 0;
    for (int step = 0; step < 40; step++) {
      onPoint("main", rnd, rnd.nextInt(3));
      String branch = "f" + step;
      gnomon().branches().create(branch);
      onPoint(branch, rnd, 1 + rnd.nextInt(8));
      // main after the fork: the keys both sides changed are planned, and some conflict (a column both change
      // differently, whose strategy is fail; a row one side deletes and the other updates)
      onPoint("main", rnd, rnd.nextInt(4));
      if (rnd.nextInt(3) == 0) {
        int id = 1 + rnd.nextInt(10);
        String table = rnd.nextBoolean() ? "t" : "u";
        sql("select gnomon.branch_use('" + branch + "')", "update " + table + " set s = 'b" + step + "' where id = " + id);
        sql(rnd.nextInt(3) == 0 ? "delete from " + table + " where id = " + id
            : "update " + table + " set s = 'm" + step + "' where id = " + id);
      }
      if (rnd.nextInt(6) == 0) {
        sql("select gnomon.set_merge_rule('public.t', '" + new String[] {"conflict", "delete_wins", "update_wins"}[rnd.nextInt(3)]
            + "')");
      }
      for (int round = 0; round < 2; round++) {
        String[] planned = outcome(branch, false);
        String[] directly = outcome(branch, true);
        assertEquals(planned[0], directly[0], "seed " + seed + ", step " + step + ", round " + round + ": merge " + branch
            + " -> main: the direct merge differs from the planned one");
        compared++;
        if (Integer.parseInt(directly[1]) < Integer.parseInt(planned[1])) {
          direct++;
        }
        String status = one("select status || ':' || merge_id from gnomon.merge('" + branch + "', 'main')");
        if (!status.startsWith("conflicts:")) {
          break;
        }
        withConflicts++;
        // resolve some of the conflicts (a column: ours, theirs, base or a value; a row: ours or theirs) and merge again:
        // the pair has no applied merge yet, so the direct path runs again, with the resolutions on the planned keys
        String id = status.substring("conflicts:".length());
        List<String> resolutions = new ArrayList<>();
        try (Connection c = connect();
            Statement st = c.createStatement();
            ResultSet rs = st.executeQuery("select key::text, column_name, table_name from gnomon.merge_conflicts(" + id + ")")) {
          while (rs.next()) {
            String column = rs.getString(2);
            String choice = column.isEmpty() ? (rnd.nextBoolean() ? "ours" : "theirs")
                : new String[] {"ours", "theirs", "base"}[rnd.nextInt(3)];
            if (rnd.nextInt(4) > 0) {
              resolutions.add("select gnomon.merge_resolve(" + id + ", '" + rs.getString(3) + "', '" + rs.getString(1) + "', '"
                  + column + "', '" + choice + "')");
            }
          }
        }
        sql(resolutions.toArray(new String[0]));
      }
    }
    System.out.printf("MergeDirectDifferentialIT seed %d: %d merges alike both ways, %d of them with keys written directly,"
        + " %d with conflicts%n", seed, compared, direct, withConflicts);
    assertTrue(compared >= 40, "seed " + seed + ": too few merges compared: " + compared);
    assertTrue(direct >= 10, "seed " + seed + ": too few merges wrote keys directly: " + direct);
    assertTrue(withConflicts >= 3, "seed " + seed + ": too few merges met conflicts: " + withConflicts);
  }
}
