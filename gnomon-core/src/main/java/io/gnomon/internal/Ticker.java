package io.gnomon.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The heartbeat: calls {@code gnomon.tick()} at a fixed rate and {@code gnomon.maintain()} now and then. */
public final class Ticker implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Ticker.class);
  private final DataSource dataSource;
  private final long maintainEvery;
  private final ScheduledExecutorService executor;
  private final AtomicLong ticks = new AtomicLong();
  private final AtomicLong failures = new AtomicLong();

  /** Starts ticking at once. */
  public Ticker(DataSource dataSource, Duration interval, Duration maintainInterval) {
    this.dataSource = dataSource;
    this.maintainEvery = Math.max(1, maintainInterval.toMillis() / Math.max(1, interval.toMillis()));
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "gnomon-ticker");
              t.setDaemon(true);
              return t;
            });
    executor.scheduleAtFixedRate(this::tickOnce, 0, interval.toMillis(), TimeUnit.MILLISECONDS);
  }

  private void tickOnce() {
    long n = ticks.get();
    try (Connection c = dataSource.getConnection();
        Statement st = c.createStatement()) {
      st.execute("select gnomon.tick()");
      if (n % maintainEvery == 0) {
        st.execute("select gnomon.maintain()");
      }
      ticks.incrementAndGet();
    } catch (SQLException | RuntimeException e) {
      // a missed tick only coarsens reads by time; keep ticking, say so once per failure
      failures.incrementAndGet();
      LOG.warn("gnomon tick failed ({}); the ticker keeps running", e.getMessage());
    }
  }

  /** Ticks recorded so far. */
  public long ticks() {
    return ticks.get();
  }

  /** Ticks that failed so far. */
  public long failures() {
    return failures.get();
  }

  /** Stops ticking, waiting for a tick under way. */
  @Override
  public void close() {
    executor.shutdown();
    try {
      if (!executor.awaitTermination(10, TimeUnit.SECONDS)) {
        executor.shutdownNow();
      }
    } catch (InterruptedException e) {
      executor.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
