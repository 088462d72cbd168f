package io.gnomon;

/** The text is not a Gnomon coordinate (SQLSTATE GN010). */
public final class MalformedCoordinateException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public MalformedCoordinateException(String message, Throwable cause) {
    super(message, "GN010", cause);
  }
}
