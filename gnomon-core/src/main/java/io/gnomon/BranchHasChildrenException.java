package io.gnomon;

/** The branch has child branches; drop them first or drop with cascade (SQLSTATE GN052). */
public final class BranchHasChildrenException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public BranchHasChildrenException(String message, Throwable cause) {
    super(message, "GN052", cause);
  }
}
