package io.gnomon.merge;

import io.gnomon.GnomonException;

/**
 * A merge refused an input that exceeds a configured limit (for the {@code json} strategy: {@link
 * JsonOptions#maxDepth()} or {@link JsonOptions#maxNodes()}). The message names the column, the side, the limit and
 * how to raise it. This is an error, not a conflict: the input is outside what the merge is configured to handle.
 * SQLSTATE {@code GN040}, which the SQL strategy {@code gnomon.merge_json} raises for the same inputs.
 */
public final class MergeLimitExceededException extends GnomonException {
  /** Creates the exception (SQLSTATE {@code GN040}, the state the SQL strategies raise for the same condition). */
  public MergeLimitExceededException(String message) {
    super(message, "GN040", null);
  }

  /** Creates the exception for a {@code GN040} error of the database. */
  public MergeLimitExceededException(String message, Throwable cause) {
    super(message, "GN040", cause);
  }
}
