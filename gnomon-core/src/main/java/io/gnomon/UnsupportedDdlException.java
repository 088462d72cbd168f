package io.gnomon;

/** A schema change on a tracked table was refused because it would break versioning (SQLSTATE GN006). */
public final class UnsupportedDdlException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public UnsupportedDdlException(String message, Throwable cause) {
    super(message, "GN006", cause);
  }
}
