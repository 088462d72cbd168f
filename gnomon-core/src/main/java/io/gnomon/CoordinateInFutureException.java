package io.gnomon;

/** The coordinate or timestamp is later than what the transaction can see (SQLSTATE GN011). */
public final class CoordinateInFutureException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public CoordinateInFutureException(String message, Throwable cause) {
    super(message, "GN011", cause);
  }
}
