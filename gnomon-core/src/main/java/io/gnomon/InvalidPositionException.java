package io.gnomon;

/** The feed position is malformed, was never delivered, or goes backwards (SQLSTATE GN033). */
public final class InvalidPositionException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public InvalidPositionException(String message, Throwable cause) {
    super(message, "GN033", cause);
  }
}
