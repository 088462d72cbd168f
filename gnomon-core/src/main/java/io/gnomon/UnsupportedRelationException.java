package io.gnomon;

/**
 * The relation cannot be tracked: a view, foreign, temporary, unlogged or partition-child table, or one that other tables
 * inherit from (SQLSTATE GN004).
 */
public final class UnsupportedRelationException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public UnsupportedRelationException(String message, Throwable cause) {
    super(message, "GN004", cause);
  }
}
