package io.gnomon;

/** A change-feed consumer with that name is already registered (SQLSTATE GN031). */
public final class ConsumerExistsException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public ConsumerExistsException(String message, Throwable cause) {
    super(message, "GN031", cause);
  }
}
