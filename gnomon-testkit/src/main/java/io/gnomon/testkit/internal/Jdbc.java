package io.gnomon.testkit.internal;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Properties;
import org.postgresql.Driver;

/**
 * Opens connections through pgjdbc's driver directly rather than {@link java.sql.DriverManager},
 * which cannot see drivers loaded by child class loaders (shaded benchmark jars, plugin loaders).
 */
final class Jdbc {

  private static final Driver DRIVER = new Driver();

  private Jdbc() {}

  static Connection connect(String url, Properties properties) throws SQLException {
    Connection c = DRIVER.connect(url, properties);
    if (c == null) {
      throw new SQLException("pgjdbc does not accept the URL " + JdbcUrls.redact(url));
    }
    return c;
  }

  static Connection connect(String url) throws SQLException {
    return connect(url, new Properties());
  }
}
