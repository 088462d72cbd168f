package io.gnomon;

/** A branch with that name already exists (SQLSTATE GN051). */
public final class BranchExistsException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public BranchExistsException(String message, Throwable cause) {
    super(message, "GN051", cause);
  }
}
