package io.gnomon.feed;

import java.sql.Connection;

/**
 * Handles pages for a {@link FeedRunner} with exactly-once effects in the same database: the runner locks the
 * consumer's row, reads the page, calls this with the connection of that transaction, acknowledges the page in the
 * same transaction and commits. Either the handler's writes and the acknowledgement both commit, or neither does.
 */
@FunctionalInterface
public interface TransactionalFeedHandler {
  /**
   * Applies one page through {@code connection}, inside the runner's transaction: do not commit, roll back or close
   * it. Throwing rolls the page back; a retryable failure is retried after a backoff, any other stops the runner.
   */
  void handle(Connection connection, FeedPage page) throws Exception;
}
