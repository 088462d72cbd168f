package io.gnomon;

/**
 * A merge or a merge declaration was refused: a branch merged into itself, no merge strategy of that name, a
 * strategy that does not fit the column's type, or no such merge or conflict (SQLSTATEs GN060 to GN063; {@link
 * #sqlState()} says which).
 */
public final class MergeException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public MergeException(String message, String sqlState, Throwable cause) {
    super(message, sqlState, cause);
  }
}
