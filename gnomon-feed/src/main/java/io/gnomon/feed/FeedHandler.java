package io.gnomon.feed;

/**
 * Handles pages for a {@link FeedRunner} with at-least-once delivery: the runner acknowledges a page after this
 * returns, so a page handled just before a crash is handled again after it. Deduplicate by {@link ChangeEvent#id()}
 * where that matters, or use a {@link TransactionalFeedHandler}.
 */
@FunctionalInterface
public interface FeedHandler {
  /**
   * Handles one page. The runner reads the next page only after this returns (backpressure). Throwing leaves the
   * page unacknowledged: a retryable failure (a lost connection, a serialization failure, {@link
   * io.gnomon.GnomonException#retryable()}) is retried after a backoff, any other stops the runner.
   */
  void handle(FeedPage page) throws Exception;
}
