package io.gnomon;

/** A branch view was used without selecting a branch (SQLSTATE GN054). */
public final class NoBranchSelectedException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public NoBranchSelectedException(String message, Throwable cause) {
    super(message, "GN054", cause);
  }
}
