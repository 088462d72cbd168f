package io.gnomon;

/**
 * The coordinate was captured before a crash or failover of the server, after the last tick that survived it, so no
 * read as of it can be exact (SQLSTATE GN013): transactions it counts as ended may have lost their WAL in the fault,
 * and the server may have given their ids to later transactions. Read as of an earlier coordinate, for example
 * {@code gnomon.coordinate_at(time)}, and keep the ticker running.
 */
public final class CoordinateLostException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public CoordinateLostException(String message, Throwable cause) {
    super(message, "GN013", cause);
  }
}
