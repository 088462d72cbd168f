package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The feed on a pool configured {@code autoCommit=false} (a common Spring setting): what the consumer acknowledged
 * is committed. The at-least-once runner read and acknowledged every page in one transaction it never committed, on
 * the connection it keeps, so the consumer's position never moved and the pool rolled it all back on return.
 */
@Timeout(120)
class FeedRunnerPoolIT extends FeedTestBase {

  /** The test's pool, lending its connections with autocommit off, as such a pool does. */
  private DataSource autocommitOff() {
    DataSource pool = dataSource();
    return (DataSource) Proxy.newProxyInstance(DataSource.class.getClassLoader(), new Class<?>[] {DataSource.class},
        (proxy, method, args) -> {
          try {
            Object result = method.invoke(pool, args);
            if (result instanceof Connection c) {
              c.setAutoCommit(false);
            }
            return result;
          } catch (InvocationTargetException e) {
            throw e.getCause();
          }
        });
  }

  @Test
  void theRunnersAcknowledgementsAreCommittedOnAPoolWithAutocommitOff() throws Exception {
    trackedTable("pooled");
    Feed manual = Feed.open(autocommitOff());
    manual.register("pooled", List.of("public.pooled"));
    for (int i = 1; i <= 20; i++) {
      sql("insert into pooled values (" + i + ", 'v" + i + "')");
    }
    gnomon().tick();
    FeedRunnerConfig config = FeedRunnerConfig.builder().pageSize(7).idleInterval(Duration.ofMillis(20)).build();
    FeedPosition last;
    try (FeedRunner runner = manual.start("pooled", page -> { }, config)) {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (runner.eventsHandled() < 20) {
        assertTrue(System.nanoTime() < deadline, "20 events handled; " + runner.eventsHandled() + " so far");
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
      last = runner.acknowledged().orElseThrow();
      // while the runner runs, another session sees the acknowledgement: it is committed, not held open
      assertEquals(last, feed().consumer("pooled").orElseThrow().position());
    }
    assertEquals(last, feed().consumer("pooled").orElseThrow().position());
    assertEquals(0, manual.poll("pooled", 100).size(), "nothing is delivered twice");
  }
}
