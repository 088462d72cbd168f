package io.gnomon;

/** No table has that name (SQLSTATE GN007). */
public final class TableNotFoundException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public TableNotFoundException(String message, Throwable cause) {
    super(message, "GN007", cause);
  }
}
