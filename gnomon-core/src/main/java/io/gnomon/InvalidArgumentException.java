package io.gnomon;

/** An argument to a Gnomon function is invalid (SQLSTATE GN021). */
public final class InvalidArgumentException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public InvalidArgumentException(String message, Throwable cause) {
    super(message, "GN021", cause);
  }
}
