package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.ConsumerExistsException;
import io.gnomon.ConsumerExpiredException;
import io.gnomon.ConsumerNotFoundException;
import io.gnomon.GnomonException;
import io.gnomon.InvalidArgumentException;
import io.gnomon.InvalidPositionException;
import io.gnomon.TableNotTrackedException;
import io.gnomon.internal.Errors;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Every feed error, from Java and from SQL, with its exception and SQLSTATE. */
@Timeout(60)
class FeedErrorsIT extends FeedTestBase {

  @Test
  void anUnknownConsumerIsNotFoundEverywhere() {
    for (Runnable call : List.<Runnable>of(
        () -> feed().poll("nobody", 10),
        () -> feed().ack("nobody", FeedPosition.START),
        () -> feed().unregister("nobody"),
        () -> feed().backfill("nobody", e -> {}))) {
      ConsumerNotFoundException e = assertThrows(ConsumerNotFoundException.class, call::run);
      assertEquals("GN030", e.sqlState());
      assertTrue(e.getMessage().contains("nobody"), e.getMessage());
    }
    assertTrue(feed().consumer("nobody").isEmpty());
    assertThrows(ConsumerNotFoundException.class, () -> {
      try (Connection c = connect()) {
        c.setAutoCommit(false);
        feed().pollForUpdate(c, "nobody", 10);
      }
    });
  }

  @Test
  void aNameIsRegisteredOnce() throws Exception {
    trackedTable("dup");
    feed().register("twice", List.of("public.dup"));
    ConsumerExistsException e =
        assertThrows(ConsumerExistsException.class, () -> feed().register("twice", List.of("public.dup")));
    assertEquals("GN031", e.sqlState());
    assertTrue(e.getMessage().contains("twice"), e.getMessage());
  }

  @Test
  void registeringNeedsTrackedTablesAndAName() throws Exception {
    sql("create table plain (id int primary key)");
    assertEquals("GN001", assertThrows(TableNotTrackedException.class,
        () -> feed().register("p", List.of("public.plain"))).sqlState());
    assertEquals("GN021", assertThrows(InvalidArgumentException.class,
        () -> feed().register("p", List.of())).sqlState());
    assertEquals("GN021", assertThrows(InvalidArgumentException.class,
        () -> feed().register("", List.of("public.plain"))).sqlState());
    assertThrows(InvalidArgumentException.class,
        () -> feed().register("p", List.of("public.plain"), FeedStart.now(), true, Duration.ZERO));
    assertThrows(InvalidArgumentException.class, () -> feed().poll("p", 0));
  }

  @Test
  void aTableThatConsumersFollowCannotBeUntrackedUntilTheyAreUnregistered() throws Exception {
    trackedTable("followed");
    feed().register("f1", List.of("public.followed"));
    feed().register("f2", List.of("public.followed"));
    sql("insert into followed values (1, 'a')");
    for (boolean dropHistory : new boolean[] {false, true}) {
      InvalidArgumentException e =
          assertThrows(InvalidArgumentException.class, () -> gnomon().untrack("public.followed", dropHistory));
      assertEquals("GN021", e.sqlState());
      assertTrue(e.getMessage().contains("public.followed") && e.getMessage().contains("'f1'")
          && e.getMessage().contains("'f2'") && e.getMessage().contains("gnomon.feed_unregister"), e.getMessage());
    }
    GnomonException fromSql = assertThrows(GnomonException.class,
        () -> sqlTranslated("select gnomon.untrack('public.followed', true)"));
    assertEquals("GN021", fromSql.sqlState());
    // nothing was removed: the table still writes versions, and the consumers read them all
    sql("update followed set v = 'b' where id = 1");
    tick();
    assertEquals(List.of("c", "u"), drain("f1", 10).stream().map(x -> x.op().code()).toList());
    feed().unregister("f1");
    assertEquals("GN021", assertThrows(InvalidArgumentException.class,
        () -> gnomon().untrack("public.followed", false)).sqlState(), "f2 still follows it");
    feed().unregister("f2");
    gnomon().untrack("public.followed", false);
    assertEquals("0", one("select count(*) from gnomon.tracked_table where table_name = 'followed'"));
  }

  @Test
  void positionsNeverGoBackwards() throws Exception {
    trackedTable("back");
    feed().register("b", List.of("public.back"));
    sql("insert into back values (1, 'a')");
    tick();
    sql("insert into back values (2, 'b')");
    tick();
    FeedPage first = feed().poll("b", 1);
    feed().ack("b", first.position());
    FeedPage second = feed().poll("b", 1);
    feed().ack("b", second.position());
    InvalidPositionException e =
        assertThrows(InvalidPositionException.class, () -> feed().ack("b", first.position()));
    assertEquals("GN033", e.sqlState());
    assertTrue(e.getMessage().contains("never go backwards"), e.getMessage());
    feed().ack("b", second.position()); // the same position again is harmless
    assertEquals(second.position(), feed().consumer("b").orElseThrow().position());
    InvalidPositionException future =
        assertThrows(InvalidPositionException.class, () -> feed().ack("b", FeedPosition.afterTick(1_000_000)));
    assertTrue(future.getMessage().contains("after the last tick"), future.getMessage());
    // an event of the batch after the last tick: that batch is not cut, so no page delivered the position (it was
    // accepted, and the consumer then skipped the batch's events once it was cut)
    long last = Long.parseLong(one("select max(tick_id) from gnomon.tick"));
    InvalidPositionException uncut = assertThrows(InvalidPositionException.class,
        () -> sqlTranslated("select gnomon.feed_ack('b', 'v1:" + last + ":999999:999999')"));
    assertTrue(uncut.getMessage().contains("after the last tick"), uncut.getMessage());
    sql("insert into back values (3, 'c')");
    tick();
    FeedPage third = feed().poll("b", 10);
    assertEquals(1, third.events().size(), "the next batch is delivered whole: " + third.events());
  }

  @Test
  void malformedPositionsAreRefusedInJavaAndInSql() throws Exception {
    for (String bad : new String[] {"", "v2:1:0:0", "v1:1:0", "v1:a:0:0", "v1:-1:0:0", "v1:1:0:5", "v1:1:2:3:4"}) {
      InvalidPositionException e = assertThrows(InvalidPositionException.class, () -> FeedPosition.parse(bad), bad);
      assertEquals("GN033", e.sqlState(), bad);
    }
    trackedTable("mal");
    feed().register("m", List.of("public.mal"));
    GnomonException e = assertThrows(InvalidPositionException.class, () -> sqlTranslated(
        "select gnomon.feed_ack('m', 'v1:x:0:0')"));
    assertTrue(e.getMessage().contains("malformed feed position"), e.getMessage());
  }

  @Test
  void aConsumerFurtherBehindThanItsMaxLagIsExpiredNotSkipped() throws Exception {
    trackedTable("lag");
    tick();
    feed().register("slow", List.of("public.lag"), FeedStart.now(), true, Duration.ofMillis(50));
    assertEquals(Duration.ofMillis(50), feed().consumer("slow").orElseThrow().maxLag().orElseThrow());
    sql("insert into lag values (1, 'a')");
    tick();
    // the consumer stays where it was; ticks go on until the last is more than 50 ms after its position
    while (Double.parseDouble(one("select extract(epoch from max(tick_at) - min(tick_at)) from gnomon.tick"
        + " where tick_id >= (select tick_id from gnomon.consumer where consumer_name = 'slow')")) <= 0.05) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      tick();
    }
    ConsumerExpiredException e = assertThrows(ConsumerExpiredException.class, () -> feed().poll("slow", 10));
    assertEquals("GN032", e.sqlState());
    assertTrue(e.getMessage().contains("max_lag"), e.getMessage());
    assertTrue(!e.retryable());
    // a runner stops on it rather than retrying
    try (FeedRunner runner = feed().start("slow", page -> {}, FeedRunnerConfig.defaults())) {
      assertTrue(runner.awaitTermination(Duration.ofSeconds(20)));
      assertEquals(FeedRunner.State.FAILED, runner.state());
      assertTrue(runner.failure().orElseThrow() instanceof ConsumerExpiredException);
    }
  }

  @Test
  void concurrentAcknowledgementsNeverMoveAConsumerBackwards() throws Exception {
    trackedTable("race");
    feed().register("r", List.of("public.race"));
    sql("insert into race values (1, 'a')");
    long t1 = tick();
    sql("insert into race values (2, 'b')");
    long t2 = tick();
    try (Connection later = connect()) {
      later.setAutoCommit(false);
      feed().ack(later, "r", FeedPosition.afterTick(t2)); // holds the consumer's row
      CompletableFuture<Void> earlier =
          CompletableFuture.runAsync(() -> feed().ack("r", FeedPosition.afterTick(t1)));
      awaitLockWait();
      later.commit();
      Throwable e = assertThrows(java.util.concurrent.ExecutionException.class,
          () -> earlier.get(20, TimeUnit.SECONDS)).getCause();
      assertTrue(e instanceof InvalidPositionException, String.valueOf(e));
    }
    assertEquals(FeedPosition.afterTick(t2), feed().consumer("r").orElseThrow().position());
  }

  @Test
  void anExactlyOnceAcknowledgementNeedsATransactionAndAnUnmovedConsumer() throws Exception {
    trackedTable("once");
    feed().register("o", List.of("public.once"));
    sql("insert into once values (1, 'a')");
    tick();
    FeedPage page = feed().poll("o", 10);
    try (Connection c = connect()) {
      assertThrows(IllegalStateException.class, () -> feed().ack(c, page));
      feed().ack("o", page.position()); // someone else handled it
      c.setAutoCommit(false);
      PositionConflictException e = assertThrows(PositionConflictException.class, () -> feed().ack(c, page));
      assertTrue(e.retryable());
      assertEquals(page.from(), e.expected());
      assertEquals(page.position(), e.actual());
      c.rollback();
    }
  }

  private void awaitLockWait() throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (!"1".equals(one("select count(*) from pg_stat_activity where datname = current_database()"
        + " and wait_event_type = 'Lock'"))) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the second acknowledgement never waited for the first");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
    }
  }

  private void sqlTranslated(String statement) {
    try {
      sql(statement);
    } catch (SQLException e) {
      throw Errors.translate("running " + statement, e);
    }
  }
}
