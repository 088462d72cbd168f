package io.gnomon.testkit;

import io.gnomon.testkit.internal.SharedServer;

/**
 * The JVM-wide shared PostgreSQL server for tests, and fresh databases on it cloned from template
 * databases built once per JVM. Cloning a template is much faster than migrating a schema per
 * test class, and each class gets a database of its own.
 *
 * <pre>{@code
 * String template = TestDatabases.template("gnomon", conn -> Installer.install(conn));
 * try (TestDatabase db = TestDatabases.fresh("merge_it", template)) {
 *   ...
 * }
 * }</pre>
 *
 * <p>The shared server comes from {@link PostgresProvider#obtain(ClusterOptions)} with {@link
 * ClusterOptions#forTests()}: an existing server when {@code GNOMON_JDBC_URL} is set, otherwise a
 * throwaway cluster started on first use and removed at JVM exit. If no PostgreSQL can be had,
 * every call fails with {@link PostgresUnavailableException}: tests fail, they are never skipped.
 * All methods are thread-safe. JUnit 5 tests usually use {@link GnomonDatabase} instead.
 */
public final class TestDatabases {

  private TestDatabases() {}

  /**
   * Returns the shared server, starting it on first use. Do not close it: the JVM's shutdown hook
   * does.
   *
   * @return the running shared server
   * @throws PostgresUnavailableException if no PostgreSQL can be had (remembered for the JVM)
   */
  public static PgCluster shared() {
    return SharedServer.get();
  }

  /**
   * Builds a template database on the shared server once per JVM: creates it, runs {@code
   * initializer} on a connection to it, then marks it as a template that accepts no connections.
   * Later calls with the same name return at once without running their initializer (the name
   * identifies the content); a failed build is remembered and reported again.
   *
   * @param name the template's name; on an existing server the actual database gets a per-JVM
   *     suffix
   * @param initializer fills the template, for example by installing the Gnomon catalog
   * @return the name of the database to clone; {@link #fresh(String, String)} also accepts {@code
   *     name} itself
   * @throws PgClusterException naming the template if the initializer fails
   */
  public static String template(String name, ConnectionInitializer initializer) {
    return SharedServer.template(name, initializer);
  }

  /**
   * Creates a database cloned from a template.
   *
   * @param prefix the start of the database's name (lower-cased, other characters become {@code
   *     _}), such as the test class's name; a counter makes it unique
   * @param template a name given to {@link #template(String, ConnectionInitializer)} or any
   *     existing database without open connections (such as {@code template0})
   * @return the new database; close it to drop it
   */
  public static TestDatabase fresh(String prefix, String template) {
    return new TestDatabase(shared(), SharedServer.createFresh(prefix, template));
  }

  /**
   * Creates an empty database (a copy of {@code template1}).
   *
   * @param prefix the start of the database's name, such as the test class's name
   * @return the new database; close it to drop it
   */
  public static TestDatabase fresh(String prefix) {
    return new TestDatabase(shared(), SharedServer.createFresh(prefix, null));
  }
}
