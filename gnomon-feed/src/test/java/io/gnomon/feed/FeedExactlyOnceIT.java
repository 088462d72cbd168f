package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.Gnomon;
import io.gnomon.GnomonConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Exactly-once into a sink table of the same database: two transactional runners compete for one consumer, each
 * applying a page and acknowledging it in one transaction, while their sessions are killed at random moments
 * (pg_terminate_backend, often in the middle of a page) and the handler itself fails now and then after writing.
 * The sink ends with every committed version once: no duplicate, no gap.
 */
@Timeout(120)
class FeedExactlyOnceIT extends FeedTestBase {

  @Test
  void pagesAppliedAndAcknowledgedTogetherSurviveKillsWithoutDuplicates() throws Exception {
    long seed = seed("FeedExactlyOnceIT");
    Random random = new Random(seed);
    trackedTable("src");
    sql("create table sink (event_id text, vid bigint, op text, k integer, v text)");
    feed().register("sink", List.of("public.src"));
    PGSimpleDataSource tagged = new PGSimpleDataSource();
    tagged.setURL(db.jdbcUrl());
    tagged.setApplicationName("feed-runner");
    Feed runnersFeed = Feed.open(tagged);
    FeedRunnerConfig config = FeedRunnerConfig.builder().pageSize(5 + random.nextInt(60))
        .idleInterval(Duration.ofMillis(10)).initialBackoff(Duration.ofMillis(5)).maxBackoff(Duration.ofMillis(50))
        .maxRetries(10_000).build();
    AtomicInteger handlerFailures = new AtomicInteger();
    TransactionalFeedHandler apply = (c, page) -> {
      try (PreparedStatement ps = c.prepareStatement("insert into sink values (?, ?, ?, ?, ?)")) {
        for (ChangeEvent e : page.events()) {
          ps.setString(1, e.id());
          ps.setLong(2, e.vid());
          ps.setString(3, e.op().code());
          ps.setInt(4, e.key().get("id").asInt());
          ps.setString(5, e.after() == null ? null : e.after().get("v").asText());
          ps.addBatch();
        }
        ps.executeBatch();
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(ThreadLocalRandomHolder.next(4)));
      if (ThreadLocalRandomHolder.next(12) == 0) {
        handlerFailures.incrementAndGet();
        throw new SQLException("simulated crash of the sink after writing", "08006");
      }
    };
    Gnomon ticking = Gnomon.open(GnomonConfig.builder().dataSource(dataSource())
        .tickInterval(Duration.ofMillis(20)).maintainInterval(Duration.ofSeconds(5)).build());
    ticking.startTicker();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger kills = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    FeedRunner one = runnersFeed.startTransactional("sink", apply, config);
    FeedRunner two = runnersFeed.startTransactional("sink", apply, config);
    try {
      Random writerRandom = new Random(seed + 1);
      Future<?> writer = pool.submit(() -> {
        write(writerRandom, 3_000);
        return null;
      });
      Random killerRandom = new Random(seed + 2);
      Future<?> killer = pool.submit(() -> {
        while (running.get()) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50 + killerRandom.nextInt(250)));
          kills.addAndGet(Integer.parseInt(one("select count(pg_terminate_backend(pid)) from (select pid from"
              + " pg_stat_activity where application_name = 'feed-runner' and datname = current_database()"
              + " order by random() limit 1) k")));
        }
        return null;
      });
      writer.get(60, TimeUnit.SECONDS);
      running.set(false); // the catch-up runs without kills
      killer.get(30, TimeUnit.SECONDS);
      long last = ticking.tick();
      awaitPosition(FeedPosition.afterTick(last), one, two);
    } finally {
      running.set(false);
      one.close();
      two.close();
      pool.shutdownNow();
      ticking.close();
    }
    String history = one("select history_table from gnomon.tracked_table where table_name = 'src'");
    long versions = Long.parseLong(one("select count(*) from gnomon_t." + history));
    System.out.printf("FeedExactlyOnceIT seed=%d: %d versions, page size %d, %d kills, %d handler failures,"
            + " %d + %d retries, %d + %d events applied%n", seed, versions, config.pageSize(), kills.get(),
        handlerFailures.get(), one.retries(), two.retries(), one.eventsHandled(), two.eventsHandled());
    assertEquals(FeedRunner.State.STOPPED, one.state(), String.valueOf(one.failure()));
    assertEquals(FeedRunner.State.STOPPED, two.state(), String.valueOf(two.failure()));
    assertEquals("0", one("select count(*) from (select vid from sink group by vid having count(*) > 1) d"),
        "seed " + seed + ": duplicates in the sink");
    assertEquals("0", one("select count(*) from gnomon_t." + history + " h where not exists"
        + " (select 1 from sink s where s.vid = h.g_vid)"), "seed " + seed + ": versions missing from the sink");
    assertEquals("0", one("select count(*) from sink s where not exists"
        + " (select 1 from gnomon_t." + history + " h where s.vid = h.g_vid)"), "seed " + seed + ": phantom events");
    assertEquals(String.valueOf(versions), one("select count(*) from sink"), "seed " + seed + ": the sink holds each version once");
    // the runners' own counts can only fall short: a session killed after the server committed a page, before the
    // runner saw the commit succeed, leaves that page applied and acknowledged (the sink has it) but uncounted
    assertTrue(one.eventsHandled() + two.eventsHandled() <= versions, "seed " + seed + ": the runners counted more events than versions");
    assertTrue(kills.get() + handlerFailures.get() > 0, "seed " + seed + ": nothing was killed");
  }

  private void write(Random random, long millis) throws SQLException {
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    int seq = 0;
    try (Connection c = dataSource().getConnection()) {
      c.setAutoCommit(false);
      while (System.nanoTime() < until) {
        for (int i = 0; i < 1 + random.nextInt(5); i++) {
          int key = 1 + random.nextInt(200);
          sql(c, random.nextInt(5) == 0 ? "delete from src where id = " + key
              : "insert into src values (" + key + ", 'v" + (++seq) + "') on conflict (id) do update set v = excluded.v");
        }
        if (random.nextInt(6) == 0) {
          c.rollback();
        } else {
          c.commit();
        }
      }
    }
  }

  private void awaitPosition(FeedPosition target, FeedRunner... runners) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (feed().consumer("sink").orElseThrow().position().compareTo(target) < 0) {
      for (FeedRunner r : runners) {
        assertTrue(r.state() == FeedRunner.State.RUNNING, "runner stopped: " + r.failure());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the runners did not reach " + target + ": consumer at "
            + feed().consumer("sink").orElseThrow().position() + ", " + runners[0].eventsHandled() + " + "
            + runners[1].eventsHandled() + " events, " + runners[0].retries() + " + " + runners[1].retries()
            + " retries");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
    }
  }

  /** Randomness for the handlers, which run on the runners' threads. */
  private static final class ThreadLocalRandomHolder {
    static int next(int bound) {
      return java.util.concurrent.ThreadLocalRandom.current().nextInt(bound);
    }
  }
}
