package io.gnomon.internal;

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
  private final AtomicLong maintainFailures = new AtomicLong();

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
    // in autocommit mode whatever the pool's default (Jdbc.withConnection): each tick commits at once
    try {
      Jdbc.withConnection(dataSource, "recording a tick", c -> {
        try (Statement st = c.createStatement()) {
          st.execute("select gnomon.tick()");
          // the tick is recorded: counted whatever upkeep does next, so a failing maintain() is retried at the next
          // maintain interval, not at every tick
          long n = ticks.getAndIncrement();
          if (n % maintainEvery == 0) {
            try {
              st.execute("select gnomon.maintain()");
            } catch (SQLException e) {
              maintainFailures.incrementAndGet();
              LOG.warn("gnomon upkeep failed ({}); the ticker keeps ticking and tries again in {} ticks",
                  e.getMessage(), maintainEvery);
            }
          }
        }
        return null;
      });
    } catch (RuntimeException e) {
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

  /** Upkeep runs ({@code gnomon.maintain()}) that failed so far; their ticks were recorded and are counted. */
  public long maintainFailures() {
    return maintainFailures.get();
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
