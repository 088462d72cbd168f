package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The typed merge planner against the planner it replaced (every row carried as {@code jsonb}, kept as test code in
 * {@code merge_prepare_ref.sql}): on seeded random histories of main, a branch and a branch of that branch, with a
 * strategy of every kind, random delete rules and declared resolutions, both plan every merge in every direction in
 * the same transaction, and their plans (key, action, base, ours, theirs, merged row, conflicts) must be equal. The
 * merges are then applied by the typed merge, so the histories go on from merged states. Prints its seed; set
 * {@code -Dgnomon.merge.seed=S} to replay a run.
 */
class MergeTypedDifferentialIT extends GnomonIT {
  private static final String[] POINTS = {"main", "b1", "b2"};

  private void install() throws SQLException, IOException {
    try (InputStream in = MergeTypedDifferentialIT.class.getResourceAsStream("merge_prepare_ref.sql")) {
      sql(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
    trackTables(this);
    gnomon().branches().create("b1");
    sql("select gnomon.branch_create('b2', 'b1')");
  }

  /**
   * The tables {@link #randomWrite} writes, tracked, with a strategy of every kind: t (ten rows; counter, json, union,
   * max, text, theirs and the default fail) and u (types whose = holds only between identical values; a counter).
   */
  static void trackTables(GnomonIT it) throws SQLException {
    it.sql("create table t (id int primary key, n bigint, s text, j jsonb, a int[], p numeric(6,2), body text, w text)",
        "insert into t select g, 10 * g, 's' || g, jsonb_build_object('k', g, 'o', jsonb_build_object('x', 1)),"
            + " array[g, g + 1], g + 0.5, e'l1\\nl2\\nl3\\n', 'w' || g from generate_series(1, 10) g");
    it.gnomon().track("public.t");
    // a table of types whose = holds only between identical values: a row only the source changed takes theirs whole
    it.sql("create table u (id int primary key, n bigint, s text, d date)",
        "insert into u select g, g, 'u' || g, date '2026-01-01' + g from generate_series(1, 10) g");
    it.gnomon().track("public.u");
    it.sql("select gnomon.set_merge_strategy('public.u', 'n', 'counter')");
    it.sql("select gnomon.set_merge_strategy('public.t', 'n', 'counter')",
        "select gnomon.set_merge_strategy('public.t', 'j', 'json')",
        "select gnomon.set_merge_strategy('public.t', 'a', 'union')",
        "select gnomon.set_merge_strategy('public.t', 'p', 'max')",
        "select gnomon.set_merge_strategy('public.t', 'body', 'text')",
        "select gnomon.set_merge_strategy('public.t', 'w', 'theirs')");
  }

  /** A random write on a point: an update of some columns, an insert, or a delete, of a small key domain. */
  static String randomWrite(Random rnd) {
    int id = 1 + rnd.nextInt(14);
    if (rnd.nextInt(3) == 0) {
      switch (rnd.nextInt(8)) {
        case 0:
          return "delete from u where id = " + id;
        case 1:
          return "insert into u (id, n, s, d) select " + id + ", " + rnd.nextInt(9) + ", 'i" + rnd.nextInt(3) + "', date '2026-02-0"
              + (1 + rnd.nextInt(3)) + "' where not exists (select 1 from u where id = " + id + ")";
        case 2:
          return "update u set s = 's" + rnd.nextInt(3) + "', d = d + " + rnd.nextInt(2) + " where id = " + id;
        default:
          return "update u set n = n + " + (rnd.nextInt(5) - 2) + " where id = " + id;
      }
    }
    switch (rnd.nextInt(10)) {
      case 0:
        return "delete from t where id = " + id;
      case 1:
        // (a branch's view takes no ON CONFLICT)
        return "insert into t (id, n, s, j, a, p, body, w) select " + id + ", " + rnd.nextInt(50) + ", 'i" + rnd.nextInt(3)
            + "', '{\"k\": " + rnd.nextInt(3) + "}', '{" + rnd.nextInt(4) + "}', " + rnd.nextInt(20) + ".25, e'l1\\n', 'wi'"
            + " where not exists (select 1 from t where id = " + id + ")";
      default:
        List<String> sets = new ArrayList<>();
        if (rnd.nextBoolean()) {
          sets.add("n = n + " + (rnd.nextInt(7) - 3));
        }
        if (rnd.nextInt(3) == 0) {
          sets.add("s = 's" + rnd.nextInt(3) + "'");
        }
        if (rnd.nextInt(3) == 0) {
          sets.add("j = j || jsonb_build_object('" + (char) ('a' + rnd.nextInt(3)) + "', " + rnd.nextInt(3) + ")");
        }
        if (rnd.nextInt(3) == 0) {
          sets.add(rnd.nextBoolean() ? "a = array_append(a, " + rnd.nextInt(5) + ")" : "a = a[2:]");
        }
        if (rnd.nextInt(3) == 0) {
          sets.add("p = " + rnd.nextInt(30) + "." + (rnd.nextBoolean() ? "5" : "50"));
        }
        if (rnd.nextInt(3) == 0) {
          sets.add("body = " + (rnd.nextBoolean() ? "replace(body, 'l2', 'l2" + rnd.nextInt(2) + "')" : "body || 'l9\n'"));
        }
        if (rnd.nextInt(4) == 0) {
          sets.add("w = 'w" + rnd.nextInt(3) + "'");
        }
        if (rnd.nextInt(8) == 0 && sets.stream().noneMatch(x -> x.startsWith("s ="))) {
          sets.add("s = null");
        }
        if (sets.isEmpty()) {
          sets.add("n = n + 1");
        }
        return "update t set " + String.join(", ", sets) + " where id = " + id;
    }
  }

  private static final String PLAN_COLUMNS = "table_id, key, action, b, o, t, r, conflicts";

  /** Plans source into target with both planners in one transaction; returns the number of planned keys. */
  private int comparePlans(String source, String target, long seed, int step) throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      try {
        st.execute("select gnomon.merge_prepare('" + source + "', '" + target + "', null)");
        st.execute("create temp table typed_plan on commit drop as select " + PLAN_COLUMNS + " from pg_temp.gnomon_merge_plan");
        st.execute("select gnomon.merge_prepare_ref('" + source + "', '" + target + "', null)");
        StringBuilder diff = new StringBuilder();
        try (ResultSet rs = st.executeQuery(
            "(select 'typed' as side, * from (select " + PLAN_COLUMNS + " from typed_plan except all select " + PLAN_COLUMNS
                + " from pg_temp.gnomon_ref_plan) x) union all (select 'jsonb', * from (select " + PLAN_COLUMNS
                + " from pg_temp.gnomon_ref_plan except all select " + PLAN_COLUMNS + " from typed_plan) y)"
                + " order by 3, 1")) {
          while (rs.next()) {
            diff.append(String.format("%n  %s: key %s action %s b %s o %s t %s r %s conflicts %s", rs.getString(1),
                rs.getString(3), rs.getString(4), rs.getString(5), rs.getString(6), rs.getString(7), rs.getString(8),
                rs.getString(9)));
          }
        }
        assertTrue(diff.length() == 0, "seed " + seed + ", step " + step + ": merge " + source + " -> " + target
            + " planned differently by the typed and the jsonb planner:" + diff);
        try (ResultSet rs = st.executeQuery("select count(*) from typed_plan")) {
          rs.next();
          return rs.getInt(1);
        }
      } finally {
        c.rollback();
      }
    }
  }

  @Test
  void theTypedPlannerPlansWhatTheJsonbPlannerPlanned() throws Exception {
    long seed = Long.getLong("gnomon.merge.seed", System.nanoTime());
    System.out.println("MergeTypedDifferentialIT seed " + seed + " (replay with -Dgnomon.merge.seed=" + seed + ")");
    Random rnd = new Random(seed);
    install();
    int compared = 0;
    int planned = 0;
    int conflicts = 0;
    for (int step = 0; step < 60; step++) {
      String point = POINTS[rnd.nextInt(POINTS.length)];
      try (Connection c = connect();
          Statement st = c.createStatement()) {
        st.execute("select gnomon.branch_use('" + point + "')");
        for (int w = 1 + rnd.nextInt(4); w > 0; w--) {
          st.execute(randomWrite(rnd));
        }
      }
      if (rnd.nextInt(10) == 0) {
        sql("select gnomon.set_merge_rule('public.t', '"
            + new String[] {"conflict", "delete_wins", "update_wins"}[rnd.nextInt(3)] + "')");
      }
      if (rnd.nextInt(3) > 0) {
        String source = POINTS[rnd.nextInt(POINTS.length)];
        String target = POINTS[rnd.nextInt(POINTS.length)];
        if (source.equals(target)) {
          continue;
        }
        planned += comparePlans(source, target, seed, step);
        compared++;
        String status = one("select status || ':' || merge_id from gnomon.merge('" + source + "', '" + target + "')");
        if (status.startsWith("conflicts:")) {
          conflicts++;
          String id = status.substring("conflicts:".length());
          // resolve some conflicts (a column: ours, theirs, base or a value; a row: ours or theirs), plan again with
          // both planners (they must apply the resolutions alike), and merge again
          try (Connection c = connect();
              Statement st = c.createStatement();
              ResultSet rs = st.executeQuery("select key::text, column_name, table_name from gnomon.merge_conflicts(" + id + ")")) {
            List<String> resolutions = new ArrayList<>();
            while (rs.next()) {
              String column = rs.getString(2);
              String choice = column.isEmpty() ? (rnd.nextBoolean() ? "ours" : "theirs")
                  : new String[] {"ours", "theirs", "base", "value"}[rnd.nextInt(4)];
              String value = choice.equals("value") ? (column.equals("n") || column.equals("p") ? "'7'" : column.equals("d")
                  ? "'\"2026-03-01\"'" : column.equals("j")
                  ? "'{\"v\": 1}'" : column.equals("a") ? "'[1]'" : "'\"v\"'") : "null";
              if (rnd.nextInt(4) > 0) {
                resolutions.add("select gnomon.merge_resolve(" + id + ", '" + rs.getString(3) + "', '" + rs.getString(1) + "', '" + column
                    + "', '" + choice + "', " + value + ")");
              }
            }
            for (String r : resolutions) {
              st.execute(r);
            }
          }
          planned += comparePlans(source, target, seed, step);
          compared++;
          sql("select gnomon.merge('" + source + "', '" + target + "')");
        }
      }
    }
    System.out.printf("MergeTypedDifferentialIT seed %d: %d merges planned alike by both planners (%d keys), %d with"
        + " conflicts%n", seed, compared, planned, conflicts);
    assertTrue(compared >= 20, "seed " + seed + ": too few merges compared: " + compared);
    assertTrue(planned > 0, "seed " + seed + ": no merge planned a key");
    assertEquals(0, Integer.parseInt(one("select count(*) from gnomon.merge where status not in ('applied', 'nothing',"
        + " 'conflicts', 'dry_run')")));
  }
}
