package io.gnomon.testkit;

import java.sql.Connection;

/**
 * Fills a freshly created template database, for example by installing the Gnomon catalog.
 *
 * @see TestDatabases#template(String, ConnectionInitializer)
 */
@FunctionalInterface
public interface ConnectionInitializer {

  /**
   * Prepares the database behind {@code connection}. The connection is in auto-commit mode; if the
   * initializer turns auto-commit off, the testkit commits after it returns. The testkit closes the
   * connection; an initializer must not leave other connections to the database open.
   *
   * @param connection a connection to the template database being built
   * @throws Exception any failure; the testkit reports it with the template's name
   */
  void initialize(Connection connection) throws Exception;
}
