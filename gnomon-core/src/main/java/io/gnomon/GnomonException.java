package io.gnomon;

import io.gnomon.sql.GnomonSqlState;
import java.util.Optional;

/**
 * Base of every exception Gnomon throws. Unchecked; its message says what happened, to which object, and what
 * to do next. {@link #sqlState()} is the SQLSTATE the database reported (a Gnomon {@code GN…} state, or
 * PostgreSQL's own), and {@link #retryable()} says whether running the same work again may succeed.
 */
public class GnomonException extends RuntimeException {
  private final String sqlState;

  /** Creates an exception with a message, the SQLSTATE (may be null) and the cause (may be null). */
  public GnomonException(String message, String sqlState, Throwable cause) {
    super(message, cause);
    this.sqlState = sqlState;
  }

  /** The SQLSTATE behind this exception, or null when it did not come from the database. */
  public String sqlState() {
    return sqlState;
  }

  /** The Gnomon state, when the SQLSTATE is one of Gnomon's. */
  public Optional<GnomonSqlState> gnomonState() {
    return sqlState == null ? Optional.empty() : GnomonSqlState.of(sqlState);
  }

  /** Whether the same work may succeed when run again (serialization failure, deadlock, lock not available). */
  public boolean retryable() {
    return sqlState != null
        && (GnomonSqlState.isRetryablePostgresState(sqlState)
            || gnomonState().map(GnomonSqlState::retryable).orElse(false));
  }
}
