package io.gnomon.testkit;

import static io.gnomon.testkit.TestSql.column;
import static io.gnomon.testkit.TestSql.databaseExists;
import static io.gnomon.testkit.TestSql.exec;
import static io.gnomon.testkit.TestSql.one;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtensionContext;

/** The JVM-wide shared server, templates built once, and fresh databases cloned from them. */
@Timeout(120)
class TestDatabasesIT {

  @Test
  void sharedServerIsStartedOncePerJvmWithTestSettings() throws Exception {
    PgCluster pg = TestDatabases.shared();
    assertSame(pg, TestDatabases.shared());
    assertTrue(pg.isRunning());
    if (PostgresProvider.configuredJdbcUrl().isPresent()) {
      assertEquals(PgSource.EXISTING_SERVER, pg.source());
      return;
    }
    assertEquals(PgSource.LOCAL_BINARIES, pg.source());
    try (Connection c = pg.connect("postgres")) {
      assertEquals("off", one(c, "show fsync"));
      assertEquals("off", one(c, "show synchronous_commit"));
      assertEquals("on", one(c, "show full_page_writes"));
      assertEquals("100", one(c, "show max_connections"));
      assertEquals("128MB", one(c, "show shared_buffers"));
      assertEquals("10", one(c, "show max_prepared_transactions"));
      assertEquals("replica", one(c, "show wal_level"));
      assertEquals("5", one(c, "show max_wal_senders"));
    }
  }

  @Test
  void templateIsBuiltOnceAndClonedIntoIsolatedDatabases() throws Exception {
    AtomicInteger builds = new AtomicInteger();
    String template =
        TestDatabases.template(
            "tdit_catalog",
            c -> {
              builds.incrementAndGet();
              exec(c, "create table catalog(v text)", "insert into catalog values ('installed')");
            });
    String again = TestDatabases.template("tdit_catalog", c -> builds.incrementAndGet());
    assertEquals(template, again);
    assertEquals(1, builds.get());

    try (TestDatabase a = TestDatabases.fresh("TestDatabasesIT", "tdit_catalog");
        TestDatabase b = TestDatabases.fresh("TestDatabasesIT", template)) {
      assertNotEquals(a.name(), b.name());
      assertTrue(a.name().startsWith("testdatabasesit_"), a.name());
      try (Connection c = a.connect()) {
        assertEquals("installed", one(c, "select v from catalog"));
        exec(c, "insert into catalog values ('only in a')");
      }
      assertEquals(List.of("installed"), column(b.server(), b.name(), "select v from catalog"));
      a.close();
      assertFalse(databaseExists(a.server(), a.name()), "close() drops the database");
      a.close(); // idempotent
    }
    assertEquals(
        "t",
        one(
            TestDatabases.shared(),
            "postgres",
            "select datistemplate and not datallowconn from pg_database where datname = '"
                + template
                + "'"),
        "the template is sealed against connections, which would block cloning");
  }

  @Test
  void failingTemplateIsReportedByNameAndRemembered() {
    AtomicInteger builds = new AtomicInteger();
    PgClusterException first =
        assertThrows(
            PgClusterException.class,
            () ->
                TestDatabases.template(
                    "tdit_broken",
                    c -> {
                      builds.incrementAndGet();
                      throw new SQLException("boom");
                    }));
    assertTrue(first.getMessage().contains("tdit_broken"), first.getMessage());
    assertTrue(first.getMessage().contains("boom"), first.getMessage());
    PgClusterException second =
        assertThrows(
            PgClusterException.class,
            () -> TestDatabases.template("tdit_broken", c -> builds.incrementAndGet()));
    assertTrue(second.getMessage().contains("earlier in this JVM"), second.getMessage());
    assertEquals(1, builds.get());
    assertThrows(PgClusterException.class, () -> TestDatabases.fresh("x", "tdit_broken"));
  }

  @Test
  void freshDatabaseSupportsDataSourcesAndTwoPhaseCommit() throws Exception {
    try (TestDatabase db = TestDatabases.fresh("Two-Phase Commit!")) {
      assertTrue(db.name().matches("two_phase_commit__\\d+"), db.name());
      assertEquals(db.server().jdbcUrl(db.name()), db.jdbcUrl());
      try (Connection c = db.dataSource().getConnection()) {
        exec(c, "create table tpc(v int)");
        c.setAutoCommit(false);
        exec(c, "insert into tpc values (1)", "prepare transaction 'tdit_tx'");
        c.setAutoCommit(true);
        exec(c, "commit prepared 'tdit_tx'");
        assertEquals("1", one(c, "select count(*) from tpc"));
      }
    }
  }

  @Test
  void extensionDatabaseBelongsToTheContextThatCreatedIt() throws Exception {
    GnomonDatabase ext = GnomonDatabase.empty();
    ExtensionContext outer = context("[class:Outer]");
    ExtensionContext nested = context("[class:Outer]/[nested-class:Inner]");
    assertThrows(IllegalStateException.class, ext::name);

    ext.beforeAll(outer);
    String name = ext.name();
    assertTrue(name.startsWith("testdatabasesit_"), name);
    ext.beforeAll(nested);
    ext.beforeEach(nested);
    assertEquals(name, ext.name(), "nested classes share the outer class's database");
    ext.afterEach(nested);
    ext.afterAll(nested);
    assertTrue(databaseExists(ext.server(), name));
    PgCluster server = ext.server();

    ext.afterAll(outer);
    assertFalse(databaseExists(server, name));
    assertThrows(IllegalStateException.class, ext::database);
  }

  private static ExtensionContext context(String uniqueId) {
    return (ExtensionContext)
        Proxy.newProxyInstance(
            ExtensionContext.class.getClassLoader(),
            new Class<?>[] {ExtensionContext.class},
            (proxy, method, args) -> {
              switch (method.getName()) {
                case "getUniqueId":
                  return uniqueId;
                case "getRequiredTestClass":
                  return TestDatabasesIT.class;
                case "toString":
                  return uniqueId;
                default:
                  throw new UnsupportedOperationException(method.getName());
              }
            });
  }
}
