package io.gnomon;

/**
 * The branch cannot be dropped: a change-feed consumer follows its writes; unregister it first (SQLSTATE GN034).
 */
public final class BranchFollowedException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public BranchFollowedException(String message, Throwable cause) {
    super(message, "GN034", cause);
  }
}
