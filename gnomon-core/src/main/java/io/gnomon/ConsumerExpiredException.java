package io.gnomon;

/** The consumer fell behind further than its limit and was expired: re-register it with a backfill (SQLSTATE GN032). */
public final class ConsumerExpiredException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public ConsumerExpiredException(String message, Throwable cause) {
    super(message, "GN032", cause);
  }
}
