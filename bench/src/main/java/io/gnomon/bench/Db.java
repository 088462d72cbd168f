package io.gnomon.bench;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;

/** A few JDBC shortcuts for benchmark set-up; every failure becomes an unchecked exception. */
final class Db {
  private Db() {}

  /**
   * Before a timed bulk statement: VACUUM ANALYZE of the whole database (the history too, so that no autovacuum
   * or autoanalyze left behind by an earlier phase runs during the timing, competing for the cores and holding the
   * xmin horizon), then a CHECKPOINT.
   */
  static void settle(Connection c) {
    exec(c, "vacuum analyze");
    exec(c, "checkpoint");
  }

  /** Polls {@code condition} every 50 ms until it holds or {@code millis} have passed; whether it held. */
  static boolean waitUntil(long millis, java.util.function.BooleanSupplier condition) {
    long deadline = System.nanoTime() + millis * 1_000_000L;
    while (true) {
      if (condition.getAsBoolean()) {
        return true;
      }
      if (System.nanoTime() >= deadline) {
        return false;
      }
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
  }

  static void exec(Connection c, String sql) {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  static String text(Connection c, String sql) {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  static double number(Connection c, String sql) {
    return Double.parseDouble(text(c, sql));
  }

  static List<String> lines(Connection c, String sql) {
    List<String> out = new ArrayList<>();
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
      return out;
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  /** Wall-clock milliseconds of one statement. */
  static double timeMillis(Connection c, String sql) {
    long t0 = System.nanoTime();
    exec(c, sql);
    return (System.nanoTime() - t0) / 1e6;
  }

  /** A SQL string literal. */
  static String literal(String s) {
    return "'" + s.replace("'", "''") + "'";
  }
}
