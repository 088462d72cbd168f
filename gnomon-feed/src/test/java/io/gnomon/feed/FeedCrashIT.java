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
 * throwaway cluster of the test's own with {@code synchronous_commit=on}. Writers keep writing before and after; an
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
    try (PgCluster pg = PostgresProvider.startCluster(ClusterOptions.builder().fsync(false).build());
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
      Writer writer = new Writer(ds, new Random(seed));
      ExecutorService pool = Executors.newSingleThreadExecutor();
      long crashedAtEvents;
      try {
        Future<?> writing = pool.submit(() -> {
          writer.run();
          return null;
        });
        awaitCommits(writer, 300);
        // crash only once the drain is under way: the runners have delivered something (deadline, not a sleep)
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (delivered.isEmpty() && System.nanoTime() < deadline) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        crashedAtEvents = delivered.size();
        pg.crash();
        pg.start();
        assertTrue(pg.logTail(200).contains("automatic recovery in progress"), pg.logTail(50));
        int atRestart = writer.confirmed.size();
        awaitCommits(writer, atRestart + 300);
        writer.stop.set(true);
        writing.get(60, TimeUnit.SECONDS);
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
      System.out.printf("FeedCrashIT seed=%d: %d versions, %d commits confirmed (%d in doubt), crash after %d events"
              + " delivered; at-least-once: %d events, %d retries; exactly-once: %d events, %d retries%n",
          seed, history.size(), writer.confirmed.size(), writer.inDoubt.size(), crashedAtEvents, delivered.size(),
          alo.retries(), eo.eventsHandled(), eo.retries());
      assertTrue(alo.retries() > 0 && eo.retries() > 0, "both runners saw the crash");
      assertTrue(crashedAtEvents > 0, "the crash came in the middle of the drain");
      // no acknowledged commit lost
      for (String v : writer.confirmed) {
        assertTrue(values.contains(v), "seed " + seed + ": the committed write " + v + " was lost");
      }
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

  /** Writes upserts of unique values in small transactions, before, during and after the crash. */
  private static final class Writer {
    final List<String> confirmed = Collections.synchronizedList(new ArrayList<>());
    final List<String> inDoubt = Collections.synchronizedList(new ArrayList<>());
    final AtomicBoolean stop = new AtomicBoolean();
    private final ReusingDataSource ds;
    private final Random random;
    private int seq;

    Writer(ReusingDataSource ds, Random random) {
      this.ds = ds;
      this.random = random;
    }

    void run() {
      while (!stop.get()) {
        try (Connection c = ds.getConnection()) {
          c.setAutoCommit(false);
          while (!stop.get()) {
            List<String> written = new ArrayList<>();
            try (PreparedStatement ps = c.prepareStatement(
                "insert into src values (?, ?) on conflict (id) do update set v = excluded.v")) {
              for (int i = 0; i < 1 + random.nextInt(3); i++) {
                String v = "v" + (++seq);
                ps.setInt(1, 1 + random.nextInt(500));
                ps.setString(2, v);
                ps.executeUpdate();
                written.add(v);
              }
            }
            try {
              c.commit();
            } catch (SQLException e) {
              inDoubt.addAll(written);
              throw e;
            }
            confirmed.addAll(written);
          }
        } catch (SQLException e) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the server is down: try again
        }
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
