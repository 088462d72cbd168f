package io.gnomon.testkit;

import java.sql.Connection;
import java.util.Objects;
import javax.sql.DataSource;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * JUnit 5 extension giving a test class a fresh database on the shared server of {@link
 * TestDatabases}, cloned from a template built once per JVM, and dropping it afterwards.
 *
 * <pre>{@code
 * class MergeIT {
 *   @RegisterExtension
 *   static GnomonDatabase db = GnomonDatabase.fromTemplate("gnomon", conn -> Installer.install(conn));
 *
 *   @Test
 *   void merges() throws SQLException {
 *     try (Connection c = db.connect()) { ... }
 *   }
 * }
 * }</pre>
 *
 * <p>Registered on a {@code static} field, the database is created before all tests of the class
 * (shared by {@code @Nested} classes) and dropped after them. Registered on an instance field, each
 * test gets its own. If no PostgreSQL can be had, the class fails with {@link
 * PostgresUnavailableException}; it is never skipped. Requires {@code junit-jupiter-api} on the
 * test classpath.
 */
public final class GnomonDatabase
    implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

  private final String template;
  private final ConnectionInitializer initializer;
  private volatile TestDatabase database;
  private volatile String owner;

  private GnomonDatabase(String template, ConnectionInitializer initializer) {
    this.template = template;
    this.initializer = initializer;
  }

  /**
   * Clones each database from a template built (once per JVM) by {@code initializer}.
   *
   * @param template the template's name, see {@link TestDatabases#template(String,
   *     ConnectionInitializer)}
   * @param initializer fills the template, for example by installing the Gnomon catalog
   * @return the extension
   */
  public static GnomonDatabase fromTemplate(String template, ConnectionInitializer initializer) {
    return new GnomonDatabase(
        Objects.requireNonNull(template, "template"),
        Objects.requireNonNull(initializer, "initializer"));
  }

  /**
   * Clones each database from an existing template: one built earlier with {@link
   * TestDatabases#template(String, ConnectionInitializer)}, or a database such as {@code
   * template0}.
   *
   * @param template the template's name
   * @return the extension
   */
  public static GnomonDatabase fromTemplate(String template) {
    return new GnomonDatabase(Objects.requireNonNull(template, "template"), null);
  }

  /**
   * Gives each test class an empty database (a copy of {@code template1}).
   *
   * @return the extension
   */
  public static GnomonDatabase empty() {
    return new GnomonDatabase(null, null);
  }

  /**
   * Creates the class's database. Called by JUnit.
   *
   * @param context the class's context
   */
  @Override
  public void beforeAll(ExtensionContext context) {
    open(context);
  }

  /**
   * Drops the database created for this class. Called by JUnit.
   *
   * @param context the class's context
   */
  @Override
  public void afterAll(ExtensionContext context) {
    closeIfOwner(context);
  }

  /**
   * Creates a database for this test when the extension is registered on an instance field.
   * Called by JUnit.
   *
   * @param context the test's context
   */
  @Override
  public void beforeEach(ExtensionContext context) {
    open(context);
  }

  /**
   * Drops the database created for this test, if any. Called by JUnit.
   *
   * @param context the test's context
   */
  @Override
  public void afterEach(ExtensionContext context) {
    closeIfOwner(context);
  }

  private synchronized void open(ExtensionContext context) {
    if (database != null) {
      return;
    }
    String prefix = context.getRequiredTestClass().getSimpleName();
    String source = initializer != null ? TestDatabases.template(template, initializer) : template;
    database =
        source == null ? TestDatabases.fresh(prefix) : TestDatabases.fresh(prefix, source);
    owner = context.getUniqueId();
  }

  private synchronized void closeIfOwner(ExtensionContext context) {
    if (database != null && context.getUniqueId().equals(owner)) {
      try {
        database.close();
      } finally {
        database = null;
        owner = null;
      }
    }
  }

  /**
   * Returns the current database.
   *
   * @return the database of the running test class (or test)
   * @throws IllegalStateException outside the extension's scope
   */
  public TestDatabase database() {
    TestDatabase d = database;
    if (d == null) {
      throw new IllegalStateException(
          "GnomonDatabase has no database now: register it with @RegisterExtension and use it"
              + " only while the test class runs");
    }
    return d;
  }

  /**
   * Returns the current database's name.
   *
   * @return the name
   */
  public String name() {
    return database().name();
  }

  /**
   * Returns the current database's self-contained JDBC URL.
   *
   * @return the URL
   */
  public String jdbcUrl() {
    return database().jdbcUrl();
  }

  /**
   * Opens a new connection to the current database. The caller closes it.
   *
   * @return the connection, in auto-commit mode
   */
  public Connection connect() {
    return database().connect();
  }

  /**
   * Returns an unpooled data source for the current database.
   *
   * @return the data source
   */
  public DataSource dataSource() {
    return database().dataSource();
  }

  /**
   * Returns the shared server the database lives on.
   *
   * @return the server
   */
  public PgCluster server() {
    return database().server();
  }
}
