package io.gnomon.testkit;

import static io.gnomon.testkit.TestSql.databaseExists;
import static io.gnomon.testkit.TestSql.one;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * An existing server named by {@code -Dgnomon.jdbc.url} (here: the shared test cluster, reached
 * through a URL): connections and databases work, cluster control is refused clearly.
 */
@Timeout(120)
class ExistingServerIT {

  private static final String PROPERTY = "gnomon.jdbc.url";

  @AfterEach
  void clearProperty() {
    System.clearProperty(PROPERTY);
  }

  @Test
  void existingServerSupportsDatabasesOnly() throws Exception {
    PgCluster shared = TestDatabases.shared();
    String url = shared.jdbcUrl("postgres");
    System.setProperty(PROPERTY, url + (url.contains("?") ? "&" : "?") + "ApplicationName=existing_it");
    assertEquals(Optional.of(System.getProperty(PROPERTY)), PostgresProvider.configuredJdbcUrl());

    try (PgCluster pg = PostgresProvider.obtain()) {
      assertEquals(PgSource.EXISTING_SERVER, pg.source());
      assertEquals(Set.of(PgCapability.DATABASES), pg.capabilities());
      assertFalse(pg.supports(PgCapability.CRASH));
      assertEquals(shared.port(), pg.port());
      assertEquals(shared.user(), pg.user());
      assertTrue(pg.isRunning());
      assertEquals(Optional.empty(), pg.dataDirectory());
      assertEquals(Optional.empty(), pg.binDirectory());
      assertTrue(
          pg.jdbcUrl("other").endsWith("/other?user=postgres&ApplicationName=existing_it")
              || shared.source() != PgSource.LOCAL_BINARIES,
          pg.jdbcUrl("other"));
      assertEquals("existing_it", one(pg, "postgres", "show application_name"));

      pg.createDatabase("existing_it_db");
      assertTrue(databaseExists(shared, "existing_it_db"));
      pg.dropDatabase("existing_it_db");
      assertFalse(databaseExists(shared, "existing_it_db"));

      for (Executable control :
          List.<Executable>of(
              pg::start,
              pg::stop,
              pg::restart,
              pg::crash,
              () -> pg.killBackend(1),
              () -> pg.startStandby(false),
              pg::promote)) {
        UnsupportedOperationException e =
            assertThrows(UnsupportedOperationException.class, control);
        assertTrue(e.getMessage().contains("existing server"), e.getMessage());
        assertTrue(e.getMessage().contains("GNOMON_JDBC_URL"), e.getMessage());
      }
    }
    assertTrue(shared.isRunning(), "closing the handle leaves the server alone");
    assertEquals("1", one(shared, "postgres", "select 1"));
  }

  @Test
  void unreachableServerFailsLoudlyWithoutLeakingThePassword() {
    System.setProperty(PROPERTY, "jdbc:postgresql://127.0.0.1:1/nowhere?user=u&password=hunter2");
    PgClusterException e = assertThrows(PgClusterException.class, PostgresProvider::obtain);
    assertTrue(e.getMessage().contains("system property gnomon.jdbc.url"), e.getMessage());
    assertTrue(e.getMessage().contains("password=***"), e.getMessage());
    assertFalse(e.getMessage().contains("hunter2"), e.getMessage());
  }

  @Test
  void startClusterIgnoresTheExistingServer() {
    System.setProperty(PROPERTY, "jdbc:postgresql://127.0.0.1:1/nowhere");
    try (PgCluster pg = PostgresProvider.startCluster(ClusterOptions.builder().fsync(false).build())) {
      assertEquals(PgSource.LOCAL_BINARIES, pg.source());
      assertTrue(pg.supports(PgCapability.CRASH));
    }
  }
}
