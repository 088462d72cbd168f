package io.gnomon.testkit;

/**
 * A PostgreSQL server or cluster operation of the testkit failed: a binary exited with an error,
 * the server did not become ready in time, a connection or an administrative statement failed.
 *
 * <p>Messages say what failed, on which cluster (port, directory or JDBC URL with the password
 * masked) and, for server failures, end with the last lines of the server log.
 */
public class PgClusterException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what happened, to which cluster, and what to do next
   */
  public PgClusterException(String message) {
    super(message);
  }

  /**
   * Creates the exception with its cause.
   *
   * @param message what happened, to which cluster, and what to do next
   * @param cause the underlying failure
   */
  public PgClusterException(String message, Throwable cause) {
    super(message, cause);
  }
}
