package io.gnomon;

/** No branch has that name, or the selected branch was dropped (SQLSTATE GN050). */
public final class BranchNotFoundException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public BranchNotFoundException(String message, Throwable cause) {
    super(message, "GN050", cause);
  }
}
