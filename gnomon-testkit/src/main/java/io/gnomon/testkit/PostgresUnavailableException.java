package io.gnomon.testkit;

/**
 * No PostgreSQL server could be had: {@code GNOMON_JDBC_URL} is unset, no local server binaries
 * were found, the embedded binaries are not on the classpath and no Docker engine answers.
 *
 * <p>The message lists what was tried and why each way failed. Tests must let it propagate: a
 * suite without a database fails, it is never skipped.
 */
public final class PostgresUnavailableException extends PgClusterException {

  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what was tried and how to make PostgreSQL available
   */
  public PostgresUnavailableException(String message) {
    super(message);
  }
}
