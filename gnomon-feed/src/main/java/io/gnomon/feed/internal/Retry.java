package io.gnomon.feed.internal;

import io.gnomon.GnomonException;
import io.gnomon.sql.GnomonSqlState;
import java.sql.SQLException;
import java.sql.SQLRecoverableException;
import java.sql.SQLTransientException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/** Which failures a feed runner retries, and how long it waits before the next attempt. */
public final class Retry {
  private Retry() {}

  /**
   * Whether running the same work again may succeed: Gnomon's retryable states (serialization failure, deadlock,
   * lock not available), and a lost or refused connection (SQLSTATE class 08, or 57P01–57P03 while the server shuts
   * down, crashes or starts), anywhere in the cause chain.
   */
  public static boolean retryable(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof GnomonException g && (g.retryable() || connectionLost(g.sqlState()))) {
        return true;
      }
      if (t instanceof SQLException s
          && (GnomonSqlState.isRetryablePostgresState(s.getSQLState())
              || connectionLost(s.getSQLState())
              || s instanceof SQLTransientException
              || s instanceof SQLRecoverableException)) {
        return true;
      }
    }
    return false;
  }

  private static boolean connectionLost(String state) {
    return state != null && (state.startsWith("08") || state.equals("57P01") || state.equals("57P02")
        || state.equals("57P03"));
  }

  /**
   * The wait before attempt {@code attempt} (1 for the first retry): {@code initial} doubled each attempt, at most
   * {@code max}, less a random part of up to a half so that many runners do not retry in step.
   */
  public static Duration backoff(int attempt, Duration initial, Duration max) {
    long base = initial.toNanos();
    long cap = max.toNanos();
    long d = base;
    for (int i = 1; i < attempt && d < cap; i++) {
      d = d > cap / 2 ? cap : d * 2;
    }
    d = Math.min(d, cap);
    return Duration.ofNanos(d / 2 + ThreadLocalRandom.current().nextLong(d / 2 + 1));
  }
}
