package io.gnomon.feed;

import io.gnomon.feed.internal.Retry;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs a consumer page by page on a thread of its own: poll a page, hand it to the handler, acknowledge it, repeat.
 *
 * <ul>
 *   <li><b>Backpressure</b>: the next page is read only after the handler returned and the page was acknowledged.
 *   <li><b>Idle</b>: after a page without events the runner waits {@link FeedRunnerConfig#idleInterval()}.
 *   <li><b>Retries</b>: a retryable failure (lost connection, server restarting, serialization failure, deadlock,
 *       {@link PositionConflictException}) drops the connection and retries after an exponential backoff; the page
 *       that failed was not acknowledged, so it comes again. Any other failure, or more than {@link
 *       FeedRunnerConfig#maxRetries()} in a row, stops the runner in state {@link State#FAILED} with {@link
 *       #failure()}.
 *   <li><b>Graceful stop</b>: {@link #stop()} lets the page under way finish (handler and acknowledgement) and then
 *       stops; {@link #close()} does the same and waits for it.
 * </ul>
 *
 * <p>Started by {@link Feed#start} (at-least-once) or {@link Feed#startTransactional} (exactly-once). Thread-safe.
 */
public final class FeedRunner implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(FeedRunner.class);

  /** Where a runner is in its life. */
  public enum State {
    /** Reading, handling or waiting for pages. */
    RUNNING,
    /** Asked to stop: finishing the page under way. */
    STOPPING,
    /** Stopped after {@link #stop()}. */
    STOPPED,
    /** Stopped by a failure, see {@link #failure()}. */
    FAILED
  }

  private final Feed feed;
  private final String consumer;
  private final FeedRunnerConfig config;
  private final FeedHandler handler;
  private final TransactionalFeedHandler transactionalHandler;
  private final Thread thread;
  private final Object wakeUp = new Object();
  private final CountDownLatch finished = new CountDownLatch(1);
  private final AtomicLong events = new AtomicLong();
  private final AtomicLong pages = new AtomicLong();
  /** Whether the runner's connection came from the pool with autocommit off (set again before it goes back). */
  private boolean manualCommit;
  private final AtomicLong retries = new AtomicLong();
  private volatile boolean stopRequested;
  private volatile State state = State.RUNNING;
  private volatile Throwable failure;
  private volatile FeedPosition acknowledged;

  private FeedRunner(Feed feed, String consumer, FeedRunnerConfig config, FeedHandler handler,
      TransactionalFeedHandler transactionalHandler) {
    this.feed = feed;
    this.consumer = consumer;
    this.config = config;
    this.handler = handler;
    this.transactionalHandler = transactionalHandler;
    this.thread = new Thread(this::run, "gnomon-feed-" + consumer);
    this.thread.setDaemon(true);
  }

  static FeedRunner start(Feed feed, String consumer, FeedRunnerConfig config, FeedHandler handler,
      TransactionalFeedHandler transactionalHandler) {
    FeedRunner runner = new FeedRunner(feed, consumer, config, handler, transactionalHandler);
    runner.thread.start();
    return runner;
  }

  /** The consumer this runner reads for. */
  public String consumer() {
    return consumer;
  }

  /** Where the runner is in its life. */
  public State state() {
    return state;
  }

  /** What stopped the runner, when it is {@link State#FAILED}. */
  public Optional<Throwable> failure() {
    return Optional.ofNullable(failure);
  }

  /** The last position this runner acknowledged, if any. */
  public Optional<FeedPosition> acknowledged() {
    return Optional.ofNullable(acknowledged);
  }

  /**
   * Events handled and acknowledged so far, as this runner saw it. A page whose transaction the server committed while
   * the connection broke before the commit's answer arrived is applied and acknowledged but not counted here (the
   * next page continues after it, so it is not handled again).
   */
  public long eventsHandled() {
    return events.get();
  }

  /** Pages with events handled and acknowledged so far. */
  public long pagesHandled() {
    return pages.get();
  }

  /** Retryable failures retried so far. */
  public long retries() {
    return retries.get();
  }

  /** Asks the runner to stop after the page under way, and returns at once. */
  public void stop() {
    stopRequested = true;
    if (state == State.RUNNING) {
      state = State.STOPPING;
    }
    synchronized (wakeUp) {
      wakeUp.notifyAll();
    }
  }

  /** Waits until the runner has stopped; returns whether it did within {@code timeout}. */
  public boolean awaitTermination(Duration timeout) throws InterruptedException {
    return finished.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /**
   * Stops the runner gracefully and waits until it has: the page under way is handled and acknowledged first. If the
   * calling thread is interrupted, it stops waiting and keeps its interrupt status.
   */
  @Override
  public void close() {
    stop();
    if (Thread.currentThread() == thread) {
      return;
    }
    try {
      finished.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void run() {
    Connection c = null;
    int failures = 0;
    try {
      while (!stopRequested) {
        try {
          if (c == null) {
            c = feed.dataSource().getConnection();
            // pages in autocommit mode whatever the pool's default (autoCommit=false in many Spring applications):
            // each acknowledgement commits at once (transactionalPage opens and commits its own transaction); the
            // pool's mode is set again before the connection goes back
            manualCommit = !c.getAutoCommit();
            c.setAutoCommit(true);
          }
          boolean hadEvents = transactionalHandler != null ? transactionalPage(c) : page(c);
          failures = 0;
          if (!hadEvents) {
            pause(config.idleInterval());
          }
        } catch (Exception e) {
          closeQuietly(c);
          c = null;
          if (!Retry.retryable(e) || failures >= config.maxRetries()) {
            failure = e;
            state = State.FAILED;
            LOG.error("feed runner of consumer '{}' stopped after {} retries: {}", consumer, failures, e.toString());
            return;
          }
          failures++;
          retries.incrementAndGet();
          Duration wait = Retry.backoff(failures, config.initialBackoff(), config.maxBackoff());
          LOG.warn("feed runner of consumer '{}': retry {} of {} in {} ms after {}", consumer, failures,
              config.maxRetries(), wait.toMillis(), e.toString());
          pause(wait);
        }
      }
      state = State.STOPPED;
    } catch (RuntimeException | Error e) {
      failure = e;
      state = State.FAILED;
      throw e;
    } finally {
      closeQuietly(c);
      finished.countDown();
    }
  }

  /** One at-least-once page: read, handle, acknowledge. Returns whether it had events. */
  private boolean page(Connection c) throws Exception {
    FeedPage page = feed.poll(c, consumer, config.pageSize());
    if (!page.isEmpty()) {
      handler.handle(page);
    }
    acknowledge(c, page);
    return !page.isEmpty();
  }

  /** One exactly-once page: lock, read, apply, acknowledge, commit. Returns whether it had events. */
  private boolean transactionalPage(Connection c) throws Exception {
    c.setAutoCommit(false);
    try {
      FeedPage page = feed.pollForUpdate(c, consumer, config.pageSize());
      if (!page.isEmpty()) {
        transactionalHandler.handle(c, page);
      }
      if (page.advances()) {
        feed.ack(c, consumer, page.position());
      }
      c.commit();
      counted(page);
      return !page.isEmpty();
    } catch (Exception e) {
      try {
        c.rollback();
      } catch (SQLException ignored) {
        // the connection is gone; so is the transaction
      }
      throw e;
    } finally {
      try {
        c.setAutoCommit(true);
      } catch (SQLException ignored) {
        // a broken connection is dropped by the caller's retry
      }
    }
  }

  private void acknowledge(Connection c, FeedPage page) {
    if (page.advances()) {
      feed.ack(c, consumer, page.position());
    }
    counted(page);
  }

  private void counted(FeedPage page) {
    if (page.advances()) {
      acknowledged = page.position();
    }
    if (!page.isEmpty()) {
      pages.incrementAndGet();
      events.addAndGet(page.size());
    }
  }

  private void pause(Duration d) {
    long deadline = System.nanoTime() + d.toNanos();
    synchronized (wakeUp) {
      while (!stopRequested) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return;
        }
        try {
          TimeUnit.NANOSECONDS.timedWait(wakeUp, left);
        } catch (InterruptedException e) {
          stopRequested = true;
          Thread.currentThread().interrupt();
        }
      }
    }
  }

  private void closeQuietly(Connection c) {
    if (c != null) {
      try {
        if (manualCommit && !c.isClosed()) {
          c.setAutoCommit(false);
        }
      } catch (SQLException ignored) {
        // broken: closed below
      }
      try {
        c.close();
      } catch (SQLException ignored) {
        // already broken
      }
    }
  }
}
