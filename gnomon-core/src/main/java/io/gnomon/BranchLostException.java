package io.gnomon;

/** The scratch branch lost its rows in a crash or failover of the server (SQLSTATE GN053). */
public final class BranchLostException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public BranchLostException(String message, Throwable cause) {
    super(message, "GN053", cause);
  }
}
