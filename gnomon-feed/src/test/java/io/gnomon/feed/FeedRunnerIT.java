package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.GnomonException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The runner: page by page with backpressure, idle polling, retries with backoff, failures, graceful stop. */
@Timeout(60)
class FeedRunnerIT extends FeedTestBase {
  private static final FeedRunnerConfig FAST = FeedRunnerConfig.builder()
      .pageSize(7).idleInterval(Duration.ofMillis(20)).initialBackoff(Duration.ofMillis(10))
      .maxBackoff(Duration.ofMillis(100)).build();

  @Test
  void handlesEveryPageInOrderAndAcknowledgesIt() throws Exception {
    setUp("run", 50);
    List<ChangeEvent> seen = Collections.synchronizedList(new ArrayList<>());
    try (FeedRunner runner = feed().start("run", page -> seen.addAll(page.events()), FAST)) {
      await(() -> runner.eventsHandled() == 50, "50 events");
      assertEquals(8, runner.pagesHandled()); // pages of 7: one row per transaction here
      assertEquals(FeedRunner.State.RUNNING, runner.state());
      // new changes after the runner started are picked up once a tick passes
      sql("insert into run values (1000, 'late')");
      tick();
      await(() -> runner.eventsHandled() == 51, "the 51st event");
      assertEquals(seen.get(50).position(), runner.acknowledged().orElseThrow());
    }
    assertEquals(51, seen.size());
    for (int i = 1; i < seen.size(); i++) {
      assertTrue(seen.get(i).position().isAfter(seen.get(i - 1).position()));
    }
    assertEquals(seen.get(50).position(), feed().consumer("run").orElseThrow().position());
  }

  @Test
  void readsTheNextPageOnlyAfterTheHandlerReturned() throws Exception {
    setUp("bp", 20);
    FeedPosition registered = feed().consumer("bp").orElseThrow().position();
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger calls = new AtomicInteger();
    try (FeedRunner runner = feed().start("bp", page -> {
      calls.incrementAndGet();
      entered.countDown();
      assertTrue(release.await(30, TimeUnit.SECONDS));
    }, FAST)) {
      assertTrue(entered.await(30, TimeUnit.SECONDS));
      // while the handler holds the first page, nothing else is read or acknowledged
      for (int i = 0; i < 5; i++) {
        tick();
        assertEquals(1, calls.get());
        assertEquals(registered, feed().consumer("bp").orElseThrow().position());
      }
      release.countDown();
      await(() -> runner.eventsHandled() == 20, "20 events");
      assertEquals(3, calls.get());
    }
  }

  @Test
  void closeFinishesAndAcknowledgesThePageUnderWayThenStops() throws Exception {
    setUp("grace", 20);
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    List<FeedPage> pages = Collections.synchronizedList(new ArrayList<>());
    FeedRunner runner = feed().start("grace", page -> {
      pages.add(page);
      entered.countDown();
      assertTrue(release.await(30, TimeUnit.SECONDS));
    }, FAST);
    assertTrue(entered.await(30, TimeUnit.SECONDS));
    CompletableFuture<Void> closing = CompletableFuture.runAsync(runner::close);
    await(() -> runner.state() == FeedRunner.State.STOPPING, "STOPPING");
    assertFalse(runner.awaitTermination(Duration.ofMillis(100)), "close waits for the page under way");
    assertFalse(closing.isDone());
    release.countDown();
    closing.get(30, TimeUnit.SECONDS);
    assertEquals(FeedRunner.State.STOPPED, runner.state());
    assertEquals(1, pages.size(), "no page after the stop");
    assertEquals(pages.get(0).position(), feed().consumer("grace").orElseThrow().position(), "the page was acked");
  }

  @Test
  void retriesRetryableFailuresWithBackoffAndTheSamePage() throws Exception {
    setUp("retry", 5);
    List<FeedPage> pages = Collections.synchronizedList(new ArrayList<>());
    try (FeedRunner runner = feed().start("retry", page -> {
      pages.add(page);
      if (pages.size() <= 2) {
        throw new GnomonException("simulated serialization failure", "40001", null);
      }
    }, FAST)) {
      await(() -> runner.eventsHandled() == 5, "5 events");
      assertEquals(2, runner.retries());
      assertEquals(pages.get(0), pages.get(1));
      assertEquals(pages.get(0), pages.get(2));
    }
  }

  @Test
  void survivesItsConnectionBeingKilled() throws Exception {
    setUp("killed", 3);
    try (FeedRunner runner = feed().start("killed", page -> {}, FAST)) {
      await(() -> runner.eventsHandled() == 3, "3 events");
      sql("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database()"
          + " and pid <> pg_backend_pid()");
      sql("insert into killed values (100, 'after the kill')");
      tick();
      await(() -> runner.eventsHandled() == 4, "the event after the kill");
      assertTrue(runner.retries() >= 1, "retried: " + runner.retries());
      assertEquals(FeedRunner.State.RUNNING, runner.state());
    }
  }

  @Test
  void stopsOnAFailureThatIsNotRetryableWithoutAcknowledging() throws Exception {
    setUp("fails", 3);
    IllegalStateException bug = new IllegalStateException("a bug in the handler");
    try (FeedRunner runner = feed().start("fails", page -> {
      throw bug;
    }, FAST)) {
      assertTrue(runner.awaitTermination(Duration.ofSeconds(30)));
      assertEquals(FeedRunner.State.FAILED, runner.state());
      assertSame(bug, runner.failure().orElseThrow());
      assertEquals(0, runner.retries());
    }
    assertEquals(3, feed().poll("fails", 10).size(), "the failed page is still there");
  }

  @Test
  void givesUpAfterMaxRetries() throws Exception {
    setUp("gives", 1);
    FeedRunnerConfig twice = FAST.toBuilder().maxRetries(2).build();
    try (FeedRunner runner = feed().start("gives", page -> {
      throw new SQLException("simulated lost connection", "08006");
    }, twice)) {
      assertTrue(runner.awaitTermination(Duration.ofSeconds(30)));
      assertEquals(FeedRunner.State.FAILED, runner.state());
      assertEquals(2, runner.retries());
    }
  }

  @Test
  void aTransactionalRunnerCommitsTheHandlersWritesWithTheAcknowledgement() throws Exception {
    setUp("tx", 10);
    sql("create table tx_sink (event_id text, v text)");
    AtomicInteger calls = new AtomicInteger();
    try (FeedRunner runner = feed().startTransactional("tx", (c, page) -> {
      for (ChangeEvent e : page.events()) {
        sql(c, "insert into tx_sink values ('" + e.id() + "', '" + e.after().get("v").asText() + "')");
      }
      if (calls.incrementAndGet() == 1) {
        throw new GnomonException("simulated deadlock after writing", "40P01", null);
      }
    }, FAST)) {
      await(() -> runner.eventsHandled() == 10, "10 events");
      assertEquals(1, runner.retries());
    }
    assertEquals("10", one("select count(*) from tx_sink"));
    assertEquals("10", one("select count(distinct event_id) from tx_sink"));
  }

  /** Creates and tracks {@code name}, registers a consumer of it named {@code name}, inserts rows and ticks. */
  private void setUp(String name, int rows) throws SQLException {
    trackedTable(name);
    feed().register(name, List.of("public." + name));
    for (int i = 1; i <= rows; i++) {
      sql("insert into " + name + " values (" + i + ", 'v" + i + "')");
    }
    tick();
  }

  private static void await(BooleanSupplier condition, String what) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (!condition.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("timed out waiting for " + what);
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
    }
  }
}
