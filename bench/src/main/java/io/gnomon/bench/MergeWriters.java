package io.gnomon.bench;

import io.gnomon.testkit.PgCluster;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * pgbench-style writers on main: each a thread with its own connection, committing single-row UPDATEs ({@code
 * abalance + delta}, as {@link WriteMetrics#UPDATE_SCRIPT}, prepared, autocommit) of random keys with {@code aid % 4
 * = 2} as fast as it can, so they never touch a row a merge of {@link MergeRun#MERGED_KEYS} writes. They run in this
 * JVM (not as a pgbench process) so that the commits counted in a window are exactly the window's.
 */
final class MergeWriters implements AutoCloseable {
  private final AtomicBoolean stop = new AtomicBoolean();
  private final AtomicLong commits = new AtomicLong();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private final List<Thread> threads = new ArrayList<>();
  private final List<Connection> connections = new ArrayList<>();

  MergeWriters(PgCluster pg, int clients) {
    for (int i = 0; i < clients; i++) {
      Connection c = pg.connect(MergeRun.DB);
      connections.add(c);
      long seed = 7919L * (i + 1);
      Thread t = new Thread(() -> write(c, seed), "merge-writer-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    threads.forEach(Thread::start);
  }

  private void write(Connection c, long seed) {
    SplittableRandom random = new SplittableRandom(seed);
    try (PreparedStatement ps = c.prepareStatement(
        "update pgbench_accounts set abalance = abalance + ? where aid = ?")) {
      while (!stop.get()) {
        ps.setInt(1, random.nextInt(-5000, 5001));
        ps.setInt(2, 4 * random.nextInt(MergeRun.ROWS / 4) + 2); // aid % 4 = 2, from 2 to 199,998
        ps.executeUpdate();
        commits.incrementAndGet();
      }
    } catch (SQLException | RuntimeException e) {
      failure.compareAndSet(null, e);
    }
  }

  /** Commits so far, over all writers. */
  long commits() {
    check();
    return commits.get();
  }

  /** Commits per second over a window of {@code millis}, measured now. */
  double tps(long millis) {
    long c0 = commits();
    long t0 = System.nanoTime();
    sleep(millis);
    return (commits() - c0) * 1e9 / (System.nanoTime() - t0);
  }

  private void check() {
    if (failure.get() != null) {
      throw new IllegalStateException("a writer failed: " + failure.get(), failure.get());
    }
  }

  static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public void close() {
    stop.set(true);
    for (Thread t : threads) {
      try {
        t.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    for (Connection c : connections) {
      try {
        c.close();
      } catch (SQLException e) {
        // closing: nothing left to do
      }
    }
    check();
  }
}
