package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The as-of read path, seeded ({@code -Dgnomon.seed=N} replays): random writes, some of them in a transaction left
 * open across coordinates (so coordinates list transactions in progress, and reads right after a capture take the
 * full check), and snapshot reads logged at REPEATABLE READ with their coordinate. Every logged read must come back
 * exactly, through a full scan and through point reads of every key in prepared statements with a generic plan (the
 * plan an application's prepared reads get), both right after the capture and at the end. And for the coordinate
 * of each read and mutations of it (malformed, of another incarnation, older than the tracking, from the future),
 * the inlined check, {@code gnomon.read_snapshot}, must return what the full check ({@code gnomon.parse_coordinate}
 * then {@code gnomon.check_read}) returns, or raise the same error.
 */
class AsOfPointReadPropertyIT extends GnomonIT {
  private static final int KEYS = 30;


  @Test
  void everySnapshotReadComesBackThroughScansAndGenericPointReads() throws Exception {
    long seed = Seeds.seed("AsOfPointReadPropertyIT");
    Random random = new Random(seed);
    sql("create table kv (k int primary key, v int not null)",
        "insert into kv select g, g from generate_series(1, " + (KEYS / 2) + ") g");
    gnomon().track("public.kv");
    String tableId = one("select table_id from gnomon.tracked_table where table_name = 'kv'");
    String trackXid = one("select track_xid from gnomon.tracked_table where table_name = 'kv'");

    List<KvSnapshotRead> reads = new ArrayList<>();
    int checked = 0;
    try (Connection writer = connect();
        Connection open = connect();
        Connection reader = connect()) {
      open.setAutoCommit(false);
      try (Statement st = writer.createStatement()) {
        st.execute("set lock_timeout = '100ms'"); // a key the open transaction wrote: give up, never wait
      }
      boolean openTx = false;
      for (int step = 0; step < 120; step++) {
        int op = random.nextInt(10);
        if (op < 5) {
          write(writer, random);
        } else if (op < 7) {
          write(open, random); // joins (or starts) the long transaction
          openTx = true;
        } else if (op == 7 && openTx) {
          if (random.nextBoolean()) {
            open.commit();
          } else {
            open.rollback();
          }
          openTx = false;
        } else {
          KvSnapshotRead r = KvSnapshotRead.capture(reader);
          reads.add(r);
          checked += verify(reader, r, tableId, trackXid, random);
        }
      }
      open.rollback();
      for (KvSnapshotRead r : reads) {
        checked += verify(reader, r, tableId, trackXid, random);
      }
    }
    assertTrue(reads.size() > 10, "the seed logged too few reads: " + reads.size());
    System.out.println("AsOfPointReadPropertyIT: " + reads.size() + " reads, " + checked + " point reads compared");
  }

  private static void write(Connection c, Random random) throws SQLException {
    int k = 1 + random.nextInt(KEYS);
    String sql = switch (random.nextInt(4)) {
      case 0 -> "insert into kv values (" + k + ", " + random.nextInt(1000) + ") on conflict (k) do nothing";
      case 1 -> "delete from kv where k = " + k;
      default -> "update kv set v = v + " + (1 + random.nextInt(9)) + " where k = " + k;
    };
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      // a row lock held by the open transaction: never wait for it here
      if (!"55P03".equals(e.getSQLState())) {
        throw e;
      }
      if (!c.getAutoCommit()) {
        c.rollback();
      }
    }
  }

  private int verify(Connection c, KvSnapshotRead r, String tableId, String trackXid, Random random) throws SQLException {
    TreeMap<Integer, Integer> scanned = new TreeMap<>();
    try (PreparedStatement ps = c.prepareStatement("select k, v from gnomon_t.kv_as_of(?)")) {
      ps.setString(1, r.coordinate());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          scanned.put(rs.getInt(1), rs.getInt(2));
        }
      }
    }
    assertEquals(r.rows(), scanned, "scan as of " + r.coordinate());
    int n = 0;
    try (Statement st = c.createStatement()) {
      st.execute("set plan_cache_mode = force_generic_plan");
    }
    try (PreparedStatement ps = c.prepareStatement("select v from gnomon_t.kv_as_of(?) where k = ?")) {
      // pgjdbc prepares on the server from the fifth execution: every key, in both orders, goes through that plan
      for (int k = 0; k <= KEYS + 1; k++) {
        int key = random.nextBoolean() ? k : KEYS + 1 - k;
        ps.setString(1, r.coordinate());
        ps.setInt(2, key);
        try (ResultSet rs = ps.executeQuery()) {
          Integer got = rs.next() ? rs.getInt(1) : null;
          assertEquals(r.rows().get(key), got, "point read of key " + key + " as of " + r.coordinate());
          n++;
        }
      }
    } finally {
      try (Statement st = c.createStatement()) {
        st.execute("reset plan_cache_mode");
      }
    }
    for (String m : mutations(r.coordinate(), random)) {
      String fast = outcome(c, "select gnomon.read_snapshot(?, '" + trackXid + "'::xid8, " + tableId + ")::text", m);
      String full = outcome(c, "select gnomon.check_read(gnomon.parse_coordinate(?), " + tableId + ")::text", m);
      // (a malformed list of transactions in progress is reported by pg_snapshot's own input function: 22P02)
      if (!(fast.equals("error 22P02") && full.equals("error GN010"))) {
        assertEquals(full, fast, "the inlined check of " + m + " disagrees with the full check");
      }
      if (cWritePath()) {
        // the C module's cached parse: exactly what the inlined check returns or raises, twice (cached the second time)
        String q = "select gnomon.read_snapshot_c(?, '" + trackXid + "'::xid8, " + tableId + ")::text";
        assertEquals(fast, outcome(c, q, m), "gnomon.read_snapshot_c of " + m + " disagrees with gnomon.read_snapshot");
        assertEquals(fast, outcome(c, q, m), "gnomon.read_snapshot_c of " + m + " (cached) disagrees with gnomon.read_snapshot");
      }
    }
    return n;
  }

  /** The coordinate, and texts near it: malformed ones, other incarnations, the older form, moved in time. */
  private static List<String> mutations(String coordinate, Random random) {
    String[] p = coordinate.split(":", -1); // v2, incarnation, xmin, xmax, xip
    long xmin = Long.parseLong(p[2]);
    long xmax = Long.parseLong(p[3]);
    String snap = p[2] + ":" + p[3] + ":" + p[4];
    List<String> out = new ArrayList<>(List.of(coordinate,
        "v1:" + snap,
        "v2:" + (Long.parseLong(p[1]) + 1 + random.nextInt(1000)) + ":" + snap,
        "v2:0" + p[1] + ":" + snap,
        "v2:" + p[1] + ":0" + snap,
        "v2:" + p[1] + ":" + snap + ",",
        "v2:" + p[1] + ":" + snap + ":",
        "v2:" + p[1] + ":" + p[2] + ":" + p[3],
        "v2:" + p[1] + ":" + p[3] + ":" + p[2] + ":",
        "v2:" + p[1] + ":" + "1" + "0".repeat(19) + ":" + p[3] + ":",
        "v2:" + p[1] + ":" + p[2] + ":" + "1" + "0".repeat(19) + ":",
        "v2:" + p[1] + ":" + p[2] + ":" + "9".repeat(25) + ":",
        "v2:" + p[1] + ":3:3:",
        "v2:" + p[1] + ":" + (xmax + 1000) + ":" + (xmax + 1000) + ":",
        "v2:" + p[1] + ":" + xmin + ":" + (xmax + 5) + ":" + (xmax + 2) + "," + (xmax + 1),
        "v2:" + p[1] + ":" + Math.max(1, xmin - 1 - random.nextInt(5)) + ":" + xmax + ":" + p[4],
        "v2:" + p[1] + ": " + snap,
        "V2:" + p[1] + ":" + snap,
        "v2:" + p[1] + ":" + snap + "x",
        ""));
    return out;
  }

  /** The snapshot text a query returns for a coordinate, or "error " and its SQLSTATE. */
  private static String outcome(Connection c, String query, String coordinate) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(query)) {
      ps.setString(1, coordinate);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return "snapshot " + rs.getString(1);
      }
    } catch (SQLException e) {
      return "error " + e.getSQLState();
    }
  }
}
