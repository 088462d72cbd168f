package io.gnomon.testkit;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** Small JDBC helpers for the testkit's own tests. */
public final class TestSql {

  private TestSql() {}

  /** Runs statements on a connection. */
  public static void exec(Connection c, String... sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      for (String s : sql) {
        st.execute(s);
      }
    }
  }

  /** Runs statements on a new connection to {@code database}. */
  public static void exec(PgCluster pg, String database, String... sql) throws SQLException {
    try (Connection c = pg.connect(database)) {
      exec(c, sql);
    }
  }

  /** Returns the first column of the first row, or null when there is no row. */
  public static String one(Connection c, String sql) throws SQLException {
    List<String> col = column(c, sql);
    return col.isEmpty() ? null : col.get(0);
  }

  /** Returns the first column of the first row, on a new connection to {@code database}. */
  public static String one(PgCluster pg, String database, String sql) throws SQLException {
    try (Connection c = pg.connect(database)) {
      return one(c, sql);
    }
  }

  /** Returns the first column of every row. */
  public static List<String> column(Connection c, String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  /** Returns the first column of every row, on a new connection to {@code database}. */
  public static List<String> column(PgCluster pg, String database, String sql) throws SQLException {
    try (Connection c = pg.connect(database)) {
      return column(c, sql);
    }
  }

  /** Polls {@code condition} until it is true or {@code timeout} passes; exceptions count as false. */
  public static boolean await(Duration timeout, Callable<Boolean> condition)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        if (Boolean.TRUE.equals(condition.call())) {
          return true;
        }
      } catch (Exception e) {
        // not yet
      }
      if (System.nanoTime() - deadline >= 0) {
        return false;
      }
      TimeUnit.MILLISECONDS.sleep(20);
    }
  }

  /** Tells whether a database exists on the server. */
  public static boolean databaseExists(PgCluster pg, String name) throws SQLException {
    try (Connection c = pg.connect("postgres");
        java.sql.PreparedStatement ps =
            c.prepareStatement("SELECT 1 FROM pg_database WHERE datname = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next();
      }
    }
  }
}
