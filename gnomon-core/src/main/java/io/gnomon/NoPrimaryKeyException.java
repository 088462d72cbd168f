package io.gnomon;

/** The table has no primary key, which Gnomon needs to identify rows (SQLSTATE GN003). */
public final class NoPrimaryKeyException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public NoPrimaryKeyException(String message, Throwable cause) {
    super(message, "GN003", cause);
  }
}
