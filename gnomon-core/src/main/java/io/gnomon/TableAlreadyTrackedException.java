package io.gnomon;

/** The table is already tracked (SQLSTATE GN002). */
public final class TableAlreadyTrackedException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public TableAlreadyTrackedException(String message, Throwable cause) {
    super(message, "GN002", cause);
  }
}
