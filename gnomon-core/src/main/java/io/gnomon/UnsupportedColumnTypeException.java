package io.gnomon;

/** A column has a type Gnomon cannot version (no equality operator) (SQLSTATE GN005). */
public final class UnsupportedColumnTypeException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public UnsupportedColumnTypeException(String message, Throwable cause) {
    super(message, "GN005", cause);
  }
}
