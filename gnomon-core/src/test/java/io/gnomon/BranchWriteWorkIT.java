package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Writes through the branch view cost the same work per written row at any size: a statement writing 4 times as
 * many rows (4,000 to 5,600), on a fresh branch, touches at most 1.5 times as many buffers per row (the indexes'
 * depth grows: 17 per row at 500 rows, 22 at 1,000, 24 from 2,000 to 8,000; a cost growing with the statement
 * would give a ratio near 4; measured: 1.0 to 1.17) (shared hits and reads, from
 * {@code EXPLAIN (ANALYZE, BUFFERS)}: the trigger's statements included), for updates, inserts (with the check of
 * keys inherited from main) and deletes, and a second update of the same rows in the same transaction. Seeded
 * ({@code -Dgnomon.seed=N} replays): the sizes and the key ranges. No timing.
 */
class BranchWriteWorkIT extends GnomonIT {
  private static final int ROWS = 40_000;
  private static final ObjectMapper JSON = new ObjectMapper();

  @Test
  void workPerWrittenRowDoesNotGrowWithTheStatement() throws Exception {
    long seed = Seeds.seed("BranchWriteWorkIT");
    Random random = new Random(seed);
    sql("create table acc (aid int primary key, abalance int not null check (abalance < 1000000))",
        "insert into acc select g, 0 from generate_series(1, " + ROWS + ") g", "analyze acc");
    gnomon().track("public.acc");
    int small = 1000 + random.nextInt(400);
    int large = 4 * small;
    int branches = 0;
    for (String op : new String[] {"update", "update twice", "insert", "delete"}) {
      double[] perRow = new double[2];
      int[] sizes = {small, large};
      for (int i = 0; i < 2; i++) {
        int n = sizes[i];
        int from = 1 + random.nextInt(ROWS - large);
        String name = "w" + (++branches);
        gnomon().branches().create(name);
        try (var c = connect();
            Statement st = c.createStatement()) {
          st.execute("select gnomon.branch_use('" + name + "')");
          c.setAutoCommit(false);
          String range = "aid between " + from + " and " + (from + n - 1);
          String stmt = switch (op) {
            case "update", "update twice" -> "update acc set abalance = abalance + 1 where " + range;
            case "insert" -> "insert into acc select g, 7 from generate_series(" + (ROWS + from) + ", " + (ROWS + from + n - 1) + ") g";
            default -> "delete from acc where " + range;
          };
          if (op.equals("update twice")) {
            assertEquals(n, st.executeUpdate(stmt));
          }
          long[] work = explain(st, stmt, n);
          c.commit();
          perRow[i] = (double) work[0] / n;
          System.out.printf("BranchWriteWorkIT seed=%d %s n=%d: %.1f buffers per written row (%d hit, %d read)%n",
              seed, op, n, perRow[i], work[1], work[2]);
          // the writes happened, on the branch only
          String check = switch (op) {
            case "update" -> "select count(*) from acc where " + range + " and abalance = 1";
            case "update twice" -> "select count(*) from acc where " + range + " and abalance = 2";
            case "insert" -> "select count(*) from acc where aid > " + ROWS + " and abalance = 7";
            default -> "select " + (ROWS - n) + " - count(*) + " + n + " from acc";
          };
          try (ResultSet rs = st.executeQuery(check)) {
            rs.next();
            assertEquals(n, rs.getInt(1), "seed " + seed + ": " + op + " of " + n + " rows on the branch");
          }
          c.commit();
        }
      }
      assertTrue(perRow[1] <= 1.5 * perRow[0], String.format(
          "seed %d: %s: %.1f buffers per written row for %d rows, %.1f for %d rows", seed, op, perRow[1], large, perRow[0], small));
    }
    assertEquals("0", one("select count(*) from acc where abalance <> 0"), "main is untouched");
  }

  /**
   * The write trigger's plans are generic and kept for the session, so the first write of a session plans while the
   * branch tables may still be empty and never analyzed. A later, larger write in the same session must still probe by
   * key: with an index on {@code g_branch} alone (deduplicated to a few pages, it won that plan) every probe read the
   * whole branch, 240 buffers per row after 10,000 rows.
   */
  @Test
  void aPlanMadeOnAnEmptyBranchTableStillProbesByKey() throws Exception {
    long seed = Seeds.seed("BranchWriteWorkIT");
    Random random = new Random(seed);
    // pgbench's row width: with narrow rows the empty table's estimates happened to favour the primary key
    sql("create table fresh (aid int primary key, abalance int not null, filler char(84))",
        "insert into fresh select g, 0 from generate_series(1, " + ROWS + ") g", "analyze fresh");
    gnomon().track("public.fresh");
    gnomon().branches().create("first");
    int small = 1000 + random.nextInt(400);
    int large = 4 * small;
    try (var c = connect();
        Statement st = c.createStatement()) {
      st.execute("select gnomon.branch_use('first')");
      double[] perRow = new double[2];
      int from = 1;
      int[] sizes = {small, large};
      for (int i = 0; i < 2; i++) {
        String stmt = "update fresh set abalance = abalance + 1 where aid between " + from + " and " + (from + sizes[i] - 1);
        long[] work = explain(st, stmt, sizes[i]);
        perRow[i] = (double) work[0] / sizes[i];
        System.out.printf("BranchWriteWorkIT seed=%d same session, n=%d: %.1f buffers per written row%n", seed, sizes[i], perRow[i]);
        from += sizes[i];
      }
      assertTrue(perRow[1] <= 1.5 * perRow[0], String.format(
          "seed %d: %.1f buffers per written row for %d rows after %d in the same session, %.1f for the first %d",
          seed, perRow[1], large, small, perRow[0], small));
    }
  }

  /** Runs the statement under EXPLAIN (ANALYZE, BUFFERS): {buffers, hits, reads}; checks it wrote n rows. */
  private static long[] explain(Statement st, String stmt, int n) throws SQLException, java.io.IOException {
    try (ResultSet rs = st.executeQuery("explain (analyze, buffers, format json) " + stmt)) {
      rs.next();
      JsonNode plan = JSON.readTree(rs.getString(1)).get(0);
      JsonNode top = plan.get("Plan");
      long hit = top.get("Shared Hit Blocks").asLong();
      long read = top.get("Shared Read Blocks").asLong();
      long calls = 0;
      for (JsonNode t : plan.withArray("Triggers")) {
        calls += t.get("Calls").asLong();
      }
      assertEquals(n, calls, "trigger calls: " + plan);
      return new long[] {hit + read, hit, read};
    }
  }
}
