package io.gnomon;

/** The coordinate or timestamp is older than the history Gnomon keeps (SQLSTATE GN012). */
public final class CoordinateTooOldException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public CoordinateTooOldException(String message, Throwable cause) {
    super(message, "GN012", cause);
  }
}
