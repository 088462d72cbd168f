package io.gnomon;

/** The table is not tracked by Gnomon: track it first (SQLSTATE GN001). */
public final class TableNotTrackedException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public TableNotTrackedException(String message, Throwable cause) {
    super(message, "GN001", cause);
  }
}
