package io.gnomon.merge;

import io.gnomon.GnomonException;

/**
 * A merge refused an input that exceeds a configured limit (for the {@code json} strategy: {@link
 * JsonOptions#maxDepth()} or {@link JsonOptions#maxNodes()}). The message names the column, the side, the limit and
 * how to raise it. This is an error, not a conflict: the input is outside what the merge is configured to handle.
 */
public final class MergeLimitExceededException extends GnomonException {
  /** Creates the exception. */
  public MergeLimitExceededException(String message) {
    super(message, null, null);
  }
}
