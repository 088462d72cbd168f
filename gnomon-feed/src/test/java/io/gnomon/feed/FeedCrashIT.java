package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.Gnomon;
import io.gnomon.GnomonConfig;
import io.gnomon.sql.Catalog;
import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PostgresProvider;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A PostgreSQL crash-restart (SIGKILL of the postmaster, then crash recovery) in the middle of a drain, on a
 * throwaway cluster of the test's own with {@code synchronous_commit=on}. Writers keep writing before and after:
 * short transactions, long ones (several statements with pauses, holding row locks), transactions rolled back whole or
 * to a savepoint, and late committers that take their xid and commit several ticks later (one of which the crash
 * cuts); a two-phase transaction prepared before the crash is committed after it, another rolled back. An
 * at-least-once runner and an exactly-once runner keep draining, retrying while the server is down. Afterwards:
 * every version that survived is delivered (nothing lost, nothing rolled back), the at-least-once runner repeated at
 * most the page it had not acknowledged, and the exactly-once sink has no duplicate.
 */
@Timeout(180)
class FeedCrashIT {
  private static final int PAGE = 25;

  @Test
  void consumersResumeFromTheirAcknowledgedPositionsAfterACrashRestart() throws Exception {
    long seed = FeedTestBase.seed("FeedCrashIT");
    ClusterOptions options = ClusterOptions.builder().fsync(false).set("max_prepared_transactions", "10").build();
    try (PgCluster pg = PostgresProvider.startCluster(options);
        ReusingDataSource ds = new ReusingDataSource(pg.dataSource(createDatabase(pg)))) {
      Catalog.install(ds);
      try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
        st.execute("create table src (id integer primary key, v text)");
        st.execute("select gnomon.track('public.src')");
        st.execute("create table sink (event_id text, vid bigint)");
      }
      Feed feed = Feed.open(ds);
      feed.register("alo", List.of("public.src"));
      feed.register("eo", List.of("public.src"));
      Gnomon ticking = Gnomon.open(GnomonConfig.builder().dataSource(ds).tickInterval(Duration.ofMillis(50))
          .maintainInterval(Duration.ofSeconds(5)).build());
      ticking.startTicker();
      FeedRunnerConfig config = FeedRunnerConfig.builder().pageSize(PAGE).idleInterval(Duration.ofMillis(20))
          .initialBackoff(Duration.ofMillis(50)).maxBackoff(Duration.ofMillis(500)).maxRetries(1000).build();
      List<ChangeEvent> delivered = Collections.synchronizedList(new ArrayList<>());
      FeedRunner alo = feed.start("alo", page -> {
        delivered.addAll(page.events());
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(3)); // a slow sink: the drain is under way
      }, config);
      FeedRunner eo = feed.startTransactional("eo", (c, page) -> {
        try (PreparedStatement ps = c.prepareStatement("insert into sink values (?, ?)")) {
          for (ChangeEvent e : page.events()) {
            ps.setString(1, e.id());
            ps.setLong(2, e.vid());
            ps.addBatch();
          }
          ps.executeBatch();
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(3));
      }, config);
      Writer writer = new Writer(ds, new Random(seed), false);
      Writer late = new Writer(ds, new Random(seed + 1), true);
      ExecutorService pool = Executors.newFixedThreadPool(2);
      long crashedAtEvents;
      try {
        Future<?> writing = pool.submit(() -> {
          writer.run();
          return null;
        });
        Future<?> writingLate = pool.submit(() -> {
          late.run();
          return null;
        });
        awaitCommits(writer, 300);
        // two transactions prepared before the crash (keys the writers never touch, so they hold no lock a writer
        // waits for): one is committed after the restart, the other rolled back
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
          st.execute("begin");
          st.execute("insert into src values (1001, 'p-commit'), (1002, 'p-commit-2')");
          st.execute("prepare transaction 'feed_crash_commit'");
          st.execute("begin");
          st.execute("insert into src values (1003, 'p-rollback')");
          st.execute("prepare transaction 'feed_crash_rollback'");
        }
        // crash only once the drain is under way: the runners have delivered something (deadline, not a sleep)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (delivered.isEmpty() && System.nanoTime() < deadline) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        crashedAtEvents = delivered.size();
        pg.crash();
        pg.start();
        assertTrue(pg.logTail(200).contains("automatic recovery in progress"), pg.logTail(50));
        try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
          st.execute("commit prepared 'feed_crash_commit'");
          st.execute("rollback prepared 'feed_crash_rollback'");
        }
        writer.confirmed.addAll(List.of("p-commit", "p-commit-2"));
        writer.rolledBack.add("p-rollback");
        int atRestart = writer.confirmed.size();
        awaitCommits(writer, atRestart + 300);
        writer.stop.set(true);
        late.stop.set(true);
        writing.get(60, TimeUnit.SECONDS);
        writingLate.get(60, TimeUnit.SECONDS);
        long last = ticking.tick();
        awaitPosition(feed, "alo", last, alo);
        awaitPosition(feed, "eo", last, eo);
      } finally {
        pool.shutdownNow();
        alo.close();
        eo.close();
        ticking.close();
      }
      // what survived the crash: the history's versions
      Set<Long> history = new HashSet<>(longs(ds, "select g_vid from gnomon_t.src_h"));
      Set<String> values = new HashSet<>(strings(ds, "select v from gnomon_t.src_h where v is not null"
          + " union all select v from src"));
      System.out.printf("FeedCrashIT seed=%d: %d versions, %d commits confirmed (%d in doubt, %d rolled back; late"
              + " committer: %d confirmed, %d in doubt), crash after %d events delivered; at-least-once: %d events,"
              + " %d retries; exactly-once: %d events, %d retries%n",
          seed, history.size(), writer.confirmed.size(), writer.inDoubt.size(), writer.rolledBack.size(),
          late.confirmed.size(), late.inDoubt.size(), crashedAtEvents, delivered.size(), alo.retries(),
          eo.eventsHandled(), eo.retries());
      assertTrue(alo.retries() > 0 && eo.retries() > 0, "both runners saw the crash");
      assertTrue(crashedAtEvents > 0, "the crash came in the middle of the drain");
      // no acknowledged commit lost
      List<String> confirmed = new ArrayList<>(writer.confirmed);
      confirmed.addAll(late.confirmed);
      assertTrue(!late.confirmed.isEmpty(), "seed " + seed + ": a late committer committed");
      for (String v : confirmed) {
        assertTrue(values.contains(v), "seed " + seed + ": the committed write " + v + " was lost");
      }
      // nothing rolled back is delivered (nor kept)
      Set<String> deliveredValues = new HashSet<>();
      for (ChangeEvent e : delivered) {
        for (var image : new com.fasterxml.jackson.databind.JsonNode[] {e.before(), e.after()}) {
          if (image != null && image.hasNonNull("v")) {
            deliveredValues.add(image.get("v").asText());
          }
        }
      }
      List<String> rolledBack = new ArrayList<>(writer.rolledBack);
      rolledBack.addAll(late.rolledBack);
      assertTrue(rolledBack.size() > 1, "seed " + seed + ": writes were rolled back");
      for (String v : rolledBack) {
        assertTrue(!deliveredValues.contains(v) && !values.contains(v), "seed " + seed + ": rolled-back " + v + " delivered or kept");
      }
      assertTrue(deliveredValues.containsAll(confirmed), "seed " + seed + ": every confirmed write delivered");
      // at-least-once: every surviving version, nothing else, repeats only of the page under way at the crash
      Map<Long, Integer> counts = new HashMap<>();
      for (ChangeEvent e : delivered) {
        counts.merge(e.vid(), 1, Integer::sum);
      }
      assertEquals(history, counts.keySet(), "seed " + seed + ": the at-least-once runner's events");
      long repeated = counts.values().stream().filter(n -> n > 1).count();
      assertTrue(counts.values().stream().allMatch(n -> n <= 2) && repeated <= PAGE,
          "seed " + seed + ": " + repeated + " events delivered again, more than the one page not acknowledged");
      FeedPosition previous = FeedPosition.START;
      Set<Long> firstTime = new HashSet<>();
      for (ChangeEvent e : delivered) {
        if (firstTime.add(e.vid())) {
          assertTrue(e.position().isAfter(previous), "seed " + seed + ": positions go forward");
          previous = e.position();
        }
      }
      // exactly-once: the sink holds every surviving version once
      List<Long> sink = longs(ds, "select vid from sink");
      assertEquals(history.size(), sink.size(), "seed " + seed + ": the sink has duplicates or gaps");
      assertEquals(history, new HashSet<>(sink), "seed " + seed + ": the sink's versions");
    }
  }

  private static String createDatabase(PgCluster pg) {
    pg.createDatabase("feed_crash");
    return "feed_crash";
  }

  /**
   * Writes upserts of unique values, before, during and after the crash: short transactions, long ones, ones rolled
   * back whole or to a savepoint; or, as a late committer, transactions that take their xid first and commit several
   * ticks later.
   */
  private static final class Writer {
    final List<String> confirmed = Collections.synchronizedList(new ArrayList<>());
    final List<String> inDoubt = Collections.synchronizedList(new ArrayList<>());
    final List<String> rolledBack = Collections.synchronizedList(new ArrayList<>());
    final AtomicBoolean stop = new AtomicBoolean();
    private final ReusingDataSource ds;
    private final Random random;
    private final boolean late;
    private int seq;

    Writer(ReusingDataSource ds, Random random, boolean late) {
      this.ds = ds;
      this.random = random;
      this.late = late;
    }

    void run() {
      while (!stop.get()) {
        try (Connection c = ds.getConnection()) {
          c.setAutoCommit(false);
          while (!stop.get()) {
            List<String> written = new ArrayList<>();
            List<String> undone = new ArrayList<>();
            boolean rollback = false;
            try (PreparedStatement ps = c.prepareStatement(
                "insert into src values (?, ?) on conflict (id) do update set v = excluded.v");
                Statement st = c.createStatement()) {
              int kind = late ? -1 : random.nextInt(10);
              if (late) { // its xid first, its writes and commit several 50 ms ticks later
                st.execute("select pg_current_xact_id()");
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(150 + random.nextInt(250)));
                upserts(ps, 1 + random.nextInt(2), written);
              } else if (kind < 6) { // short
                upserts(ps, 1 + random.nextInt(3), written);
              } else if (kind < 8) { // long: statements with pauses, holding row locks
                for (int i = 0; i < 3 + random.nextInt(3); i++) {
                  upserts(ps, 1, written);
                  LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2 + random.nextInt(10)));
                }
              } else if (kind == 8) { // rolled back whole
                upserts(ps, 1 + random.nextInt(3), undone);
                rollback = true;
              } else { // part rolled back to a savepoint, part released
                upserts(ps, 1, written);
                st.execute("savepoint a");
                upserts(ps, 2, undone);
                st.execute("rollback to savepoint a");
                st.execute("savepoint b");
                upserts(ps, 1, written);
                st.execute("release savepoint b");
              }
            }
            if (rollback) {
              c.rollback();
              rolledBack.addAll(undone);
              continue;
            }
            try {
              c.commit();
            } catch (SQLException e) {
              inDoubt.addAll(written);
              throw e;
            }
            confirmed.addAll(written);
            rolledBack.addAll(undone);
          }
        } catch (SQLException e) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the server is down: try again
        }
      }
    }

    private void upserts(PreparedStatement ps, int n, List<String> log) throws SQLException {
      for (int i = 0; i < n; i++) {
        String v = (late ? "l" : "v") + (++seq);
        ps.setInt(1, 1 + random.nextInt(500));
        ps.setString(2, v);
        ps.executeUpdate();
        log.add(v);
      }
    }
  }

  private static void awaitCommits(Writer writer, int n) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (writer.confirmed.size() < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the writer confirmed only " + writer.confirmed.size() + " writes");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
  }

  private static void awaitPosition(Feed feed, String consumer, long tick, FeedRunner runner) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (feed.consumer(consumer).orElseThrow().position().compareTo(FeedPosition.afterTick(tick)) < 0) {
      assertEquals(FeedRunner.State.RUNNING, runner.state(), String.valueOf(runner.failure()));
      if (System.nanoTime() > deadline) {
        throw new AssertionError(consumer + " did not reach tick " + tick);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
    }
  }

  private static List<Long> longs(ReusingDataSource ds, String query) throws SQLException {
    List<Long> out = new ArrayList<>();
    for (String s : strings(ds, query)) {
      out.add(Long.parseLong(s));
    }
    return out;
  }

  private static List<String> strings(ReusingDataSource ds, String query) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(query)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }
}
