package io.gnomon;

/** No change-feed consumer has that name: register it first (SQLSTATE GN030). */
public final class ConsumerNotFoundException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public ConsumerNotFoundException(String message, Throwable cause) {
    super(message, "GN030", cause);
  }
}
