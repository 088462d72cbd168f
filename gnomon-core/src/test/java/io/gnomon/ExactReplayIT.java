package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The exactness property, seeded: concurrent sessions write random changes at every isolation level, with
 * rollbacks, savepoints and key changes; each transaction records its coordinate and what it read; afterwards
 * every recorded read replays exactly as of its coordinate. Run with {@code -Dgnomon.seed=N} to replay a failure.
 */
class ExactReplayIT extends GnomonIT {
  private static final int KEYS = 60;
  private static final int SESSIONS = 4;
  private static final int TRANSACTIONS_PER_SESSION = 120;
  private static final String[] ISOLATION = {"read committed", "repeatable read", "serializable"};

  /** One read logged by a session. */
  record Observation(String coordinate, int from, int to, String rows, String isolation, int session) {}

  @Test
  void everyLoggedReadReplaysExactlyAsOfItsCoordinate() throws Exception {
    long seed = Seeds.seed("ExactReplayIT");
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("create table replay (id int primary key, v int not null, note text)");
      // rows that exist before tracking get their baseline lazily, on their first write
      st.execute("insert into replay select g, g * 10, 'pre' || g from generate_series(1, " + (KEYS / 2) + ") g");
      st.execute("select gnomon.track('public.replay')");
    }
    List<Observation> log = Collections.synchronizedList(new ArrayList<>());
    ExecutorService pool = Executors.newFixedThreadPool(SESSIONS + 1);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<int[]>> sessions = new ArrayList<>();
    for (int s = 0; s < SESSIONS; s++) {
      int session = s;
      long sessionSeed = seed * 31 + s;
      sessions.add(pool.submit(() -> runSession(session, new Random(sessionSeed), start, log)));
    }
    // checkpoints and ticks while the sessions run, so replays also roll back from checkpoints
    Future<Integer> checkpoints =
        pool.submit(
            () -> {
              start.await();
              int n = 0;
              try (Connection c = connect();
                  Statement st = c.createStatement()) {
                for (int i = 0; i < 4; i++) {
                  Thread.sleep(150);
                  st.execute("select gnomon.checkpoint('public.replay')");
                  st.execute("select gnomon.tick()");
                  n++;
                }
              }
              return n;
            });
    start.countDown();
    int commits = 0;
    int rollbacks = 0;
    for (Future<int[]> f : sessions) {
      int[] r = f.get(5, TimeUnit.MINUTES);
      commits += r[0];
      rollbacks += r[1];
    }
    assertEquals(4, checkpoints.get(1, TimeUnit.MINUTES));
    pool.shutdown();

    List<String> mismatches = new ArrayList<>();
    try (Connection c = connect();
        PreparedStatement ps =
            c.prepareStatement(
                "select coalesce(jsonb_agg(jsonb_build_array(id, v, note) order by id), '[]')::text"
                    + " from gnomon_t.replay_as_of(?) where id between ? and ?")) {
      for (Observation o : log) {
        ps.setString(1, o.coordinate());
        ps.setInt(2, o.from());
        ps.setInt(3, o.to());
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          String replayed = rs.getString(1);
          if (!replayed.equals(o.rows())) {
            mismatches.add(o + "\n    replayed as " + replayed);
          }
        }
      }
    }
    System.out.printf(
        "ExactReplayIT seed=%d: %d reads replayed, %d commits, %d rollbacks, %d mismatches%n",
        seed, log.size(), commits, rollbacks, mismatches.size());
    assertTrue(log.size() > SESSIONS * TRANSACTIONS_PER_SESSION / 2, "too few reads were logged: " + log.size());
    assertTrue(commits > 0 && rollbacks > 0, "the run needs both commits and rollbacks");
    assertTrue(
        mismatches.isEmpty(),
        "seed=" + seed + ": " + mismatches.size() + " reads did not replay exactly, first ones:\n"
            + String.join("\n", mismatches.subList(0, Math.min(5, mismatches.size()))));
  }

  private int[] runSession(int session, Random rnd, CountDownLatch start, List<Observation> log) throws Exception {
    start.await();
    int commits = 0;
    int rollbacks = 0;
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      for (int t = 0; t < TRANSACTIONS_PER_SESSION; t++) {
        String isolation = ISOLATION[rnd.nextInt(ISOLATION.length)];
        try (Statement st = c.createStatement()) {
          st.execute("set transaction isolation level " + isolation);
          // reads first (a coordinate does not include the transaction's own writes)
          int reads = 1 + rnd.nextInt(2);
          String txCoordinate = null;
          for (int r = 0; r < reads; r++) {
            int from = 1 + rnd.nextInt(KEYS);
            int to = Math.min(KEYS * 2, from + rnd.nextInt(KEYS));
            if (!isolation.equals("read committed") && txCoordinate == null && rnd.nextBoolean()) {
              // the transaction's snapshot: a coordinate captured in one statement covers later reads
              try (ResultSet rs = st.executeQuery("select gnomon.coordinate()")) {
                rs.next();
                txCoordinate = rs.getString(1);
              }
            }
            try (ResultSet rs =
                st.executeQuery(
                    "select gnomon.coordinate(), coalesce(jsonb_agg(jsonb_build_array(id, v, note) order by id),"
                        + " '[]')::text from replay where id between " + from + " and " + to)) {
              rs.next();
              String coordinate = txCoordinate != null ? txCoordinate : rs.getString(1);
              log.add(new Observation(coordinate, from, to, rs.getString(2), isolation, session));
            }
          }
          int writes = rnd.nextInt(4);
          for (int w = 0; w < writes; w++) {
            boolean savepoint = rnd.nextInt(5) == 0;
            if (savepoint) {
              st.execute("savepoint s");
            }
            st.execute(randomWrite(rnd));
            if (savepoint) {
              st.execute(rnd.nextBoolean() ? "rollback to savepoint s" : "release savepoint s");
            }
          }
          if (rnd.nextInt(5) == 0) {
            c.rollback();
            rollbacks++;
          } else {
            c.commit();
            commits++;
          }
        } catch (SQLException e) {
          // serialization failures, deadlocks and key clashes end the transaction: it left no version
          c.rollback();
          rollbacks++;
        }
      }
    }
    return new int[] {commits, rollbacks};
  }

  private static String randomWrite(Random rnd) {
    int id = 1 + rnd.nextInt(KEYS);
    return switch (rnd.nextInt(6)) {
      case 0 -> "insert into replay values (" + id + ", " + rnd.nextInt(1000) + ", 'i') on conflict (id) do update"
          + " set v = excluded.v, note = 'upsert'";
      case 1, 2 -> "update replay set v = v + " + (1 + rnd.nextInt(9)) + " where id = " + id;
      case 3 -> "delete from replay where id = " + id;
      case 4 -> "update replay set id = " + (KEYS + 1 + rnd.nextInt(KEYS)) + ", note = 'moved' where id = " + id;
      default -> "update replay set note = md5(random()::text) where id between " + id + " and " + (id + 3);
    };
  }

}
