package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The cutoff invariant under concurrency, seeded ({@code -Dgnomon.seed=N} replays): sessions at READ COMMITTED,
 * REPEATABLE READ and SERIALIZABLE write main and several nested branches at once while branches are forked. Then:
 * on every branch, each key never written there (by a committed transaction) reads exactly as the parent did at the
 * cutoff, read through a different path (main's as-of function, or the parent's point); and every snapshot read
 * logged on a branch or on main replays exactly as of its coordinate.
 */
class BranchCutoffPropertyIT extends GnomonIT {
  private static final int KEYS = 40;
  private static final String[] ISOLATION = {"read committed", "repeatable read", "serializable"};

  /** A snapshot read: what a transaction at REPEATABLE READ or SERIALIZABLE saw at its coordinate. */
  private record Read(String branch, String coordinate, TreeMap<Integer, Integer> rows) {}

  private final Map<String, Set<Integer>> writtenOn = new ConcurrentHashMap<>();
  private final List<Read> reads = Collections.synchronizedList(new ArrayList<>());
  private final AtomicInteger committed = new AtomicInteger();
  private final AtomicInteger failed = new AtomicInteger();
  private final Map<String, Integer> committedAt = new ConcurrentHashMap<>();
  private int forkedWhileWriting;

  @Test
  void untouchedKeysReadAsTheParentAtTheCutoffAndSnapshotReadsReplay() throws Exception {
    long seed = Seeds.seed("BranchCutoffPropertyIT");
    Random random = new Random(seed);
    sql("create table kv (k int primary key, v int not null)",
        "insert into kv select g, g from generate_series(1, " + KEYS + ") g");
    gnomon().track("public.kv");

    // the tree grows while the sessions run: each round forks one branch, from main or from an existing branch,
    // while the round's sessions are writing (so transactions are in flight on the parent at its cutoff); the second
    // round always forks from the first branch, so the tree is nested
    List<String> branches = Collections.synchronizedList(new ArrayList<>());
    Map<String, String> parentOf = new HashMap<>();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      for (int round = 0; round < 6; round++) {
        List<Future<?>> sessions = new ArrayList<>();
        for (int s = 0; s < 4; s++) {
          long sessionSeed = random.nextLong();
          List<String> targets = new ArrayList<>(branches);
          targets.add("main");
          sessions.add(pool.submit(() -> session(new Random(sessionSeed), targets, 12)));
        }
        String parent = branches.isEmpty() ? "main" : round == 1 ? branches.get(0)
            : random.nextInt(3) == 0 ? "main" : branches.get(random.nextInt(branches.size()));
        boolean scratch = parent.startsWith("s") || random.nextInt(3) == 0;
        String name = (scratch ? "s" : "b") + round;
        Thread.sleep(5 + random.nextInt(40));
        int inFlight = (int) sessions.stream().filter(f -> !f.isDone()).count();
        gnomon().branches().create(name, parent, Optional.empty(), scratch);
        forkedWhileWriting += inFlight > 0 ? 1 : 0;
        parentOf.put(name, parent);
        writtenOn.put(name, ConcurrentHashMap.newKeySet());
        for (Future<?> f : sessions) {
          f.get();
        }
        branches.add(name);
      }
    } finally {
      pool.shutdownNow();
    }
    System.out.printf("BranchCutoffPropertyIT seed=%d: %d transactions committed (by isolation %s), %d failed (serialization, "
        + "duplicates), %d snapshot reads, branches %s, %d forked while sessions were writing%n", seed, committed.get(),
        committedAt, failed.get(), reads.size(), parentOf, forkedWhileWriting);
    assertTrue(committed.get() > 50, "seed " + seed + ": the sessions committed work");
    for (String isolation : ISOLATION) {
      assertTrue(committedAt.getOrDefault(isolation, 0) > 0, "seed " + seed + ": a transaction committed at " + isolation);
    }
    assertTrue(forkedWhileWriting > 0, "seed " + seed + ": some branch was forked while sessions were writing");
    assertTrue(gnomon().branches().list().stream().anyMatch(b -> b.depth() >= 2), "seed " + seed + ": the tree is nested");

    // 1. the cutoff invariant, each side read through a different path
    int checkedAll = 0;
    for (String b : branches) {
      Branch branch = gnomon().branches().get(b);
      TreeMap<Integer, Integer> now = read("select k, v from gnomon_t.kv_at(gnomon.point('" + b + "'))");
      String parent = parentOf.get(b);
      TreeMap<Integer, Integer> parentAtCutoff = parent.equals("main")
          ? read("select k, v from gnomon_t.kv_as_of('" + branch.cutoff() + "')")
          : read("select k, v from gnomon_t.kv_at(gnomon.point('" + parent + "', '" + branch.cutoff() + "'))");
      Set<Integer> keys = new HashSet<>(now.keySet());
      keys.addAll(parentAtCutoff.keySet());
      int checked = 0;
      for (int k : keys) {
        if (!writtenOn.get(b).contains(k)) {
          assertEquals(parentAtCutoff.get(k), now.get(k), "seed " + seed + ": key " + k + " never written on " + b
              + " reads as " + parent + " at the cutoff " + branch.cutoff());
          checked++;
        }
      }
      checkedAll += checked;
    }
    // (per branch, every key can have been written: the first branch takes writes for five rounds over 50 keys)
    assertTrue(checkedAll > 0, "seed " + seed + ": some key was untouched on some branch");
    // 2. exact replay of every snapshot read
    for (Read r : reads) {
      String point = "gnomon.point('" + r.branch() + "', '" + r.coordinate() + "')";
      assertEquals(r.rows(), read("select k, v from gnomon_t.kv_at(" + point + ")"),
          "seed " + seed + ": the read on " + r.branch() + " at " + r.coordinate() + " replays");
    }
  }

  /** Runs transactions of random isolation on random branches (or main): a snapshot read, then a few writes. */
  private void session(Random random, List<String> targets, int transactions) {
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      for (int t = 0; t < transactions; t++) {
        String branch = targets.get(random.nextInt(targets.size()));
        String isolation = ISOLATION[random.nextInt(ISOLATION.length)];
        Set<Integer> touched = new HashSet<>();
        try (Statement st = c.createStatement()) {
          st.execute("set transaction isolation level " + isolation);
          String coordinate;
          try (ResultSet rs = st.executeQuery("select gnomon.branch_use('" + branch + "', true), gnomon.coordinate()")) {
            rs.next();
            coordinate = rs.getString(2);
          }
          if (!isolation.equals("read committed")) {
            reads.add(new Read(branch, coordinate, read(st, "select k, v from kv")));
          }
          int writes = 1 + random.nextInt(4);
          for (int w = 0; w < writes; w++) {
            int k = 1 + random.nextInt(KEYS + 10);
            int op = random.nextInt(10);
            String sql = op < 6 ? "update kv set v = v + " + (1 + random.nextInt(9)) + " where k = " + k
                : op < 8 ? "insert into kv values (" + k + ", " + random.nextInt(1000) + ") on conflict do nothing"
                    : "delete from kv where k = " + k;
            if (op >= 6 && op < 8 && !branch.equals("main")) {
              // ON CONFLICT is not available on views: insert only when absent
              sql = "insert into kv select " + k + ", " + random.nextInt(1000) + " where not exists (select 1 from kv where k = " + k + ")";
            }
            st.executeUpdate(sql);
            touched.add(k);
          }
          c.commit();
          committed.incrementAndGet();
          committedAt.merge(isolation, 1, Integer::sum);
          if (!branch.equals("main")) {
            writtenOn.get(branch).addAll(touched);
          }
        } catch (SQLException e) {
          String state = e.getSQLState();
          if (!"40001".equals(state) && !"40P01".equals(state) && !"23505".equals(state)) {
            throw new AssertionError("unexpected failure on " + branch + " at " + isolation + ": " + e, e);
          }
          failed.incrementAndGet();
          c.rollback();
        }
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  private TreeMap<Integer, Integer> read(String query) throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      return read(st, query);
    }
  }

  private static TreeMap<Integer, Integer> read(Statement st, String query) throws SQLException {
    TreeMap<Integer, Integer> out = new TreeMap<>();
    try (ResultSet rs = st.executeQuery(query)) {
      while (rs.next()) {
        out.put(rs.getInt(1), rs.getInt(2));
      }
    }
    return out;
  }
}
