package io.gnomon.feed;

import io.gnomon.GnomonException;

/**
 * An exactly-once acknowledgement found the consumer moved since its page was read: another session handled and
 * acknowledged those events. Roll back the transaction (its writes would duplicate them) and poll again. Retryable.
 */
public final class PositionConflictException extends GnomonException {
  private final FeedPosition expected;
  private final FeedPosition actual;

  /** Creates the exception for a page read after {@code expected} while the consumer is now at {@code actual}. */
  public PositionConflictException(String consumer, FeedPosition expected, FeedPosition actual) {
    super("feed consumer '" + consumer + "' is at " + actual + ", but the page being acknowledged was read after "
        + expected + ": another session acknowledged it meanwhile. Roll back this transaction and poll again.",
        null, null);
    this.expected = expected;
    this.actual = actual;
  }

  /** The position the page was read after. */
  public FeedPosition expected() {
    return expected;
  }

  /** The consumer's position when the acknowledgement was attempted. */
  public FeedPosition actual() {
    return actual;
  }

  /** Always true: polling again gives a page that can be applied. */
  @Override
  public boolean retryable() {
    return true;
  }
}
