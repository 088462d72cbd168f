package io.gnomon.testkit;

import static io.gnomon.testkit.TestSql.column;
import static io.gnomon.testkit.TestSql.databaseExists;
import static io.gnomon.testkit.TestSql.exec;
import static io.gnomon.testkit.TestSql.one;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.sql.Connection;
import java.sql.DriverManager;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A throwaway cluster from the local binaries: URLs, databases, settings, stop and start. */
@Timeout(120)
class LocalClusterIT {

  private static PgCluster pg;

  @BeforeAll
  static void startCluster() {
    pg =
        PostgresProvider.startCluster(
            ClusterOptions.builder()
                .fsync(false)
                .sharedBuffers("32MB")
                .maxConnections(40)
                .maxWalSize("256MB")
                .set("work_mem", "8MB")
                .build());
  }

  @AfterAll
  static void closeCluster() {
    if (pg != null) {
      pg.close();
    }
  }

  @Test
  void describesItself() throws Exception {
    assertEquals(PgSource.LOCAL_BINARIES, pg.source());
    assertEquals(EnumSet.allOf(PgCapability.class), EnumSet.copyOf(pg.capabilities()));
    assertTrue(pg.supports(PgCapability.CRASH));
    assertEquals("127.0.0.1", pg.host());
    assertTrue(pg.port() > 0);
    assertEquals("postgres", pg.user());
    assertEquals(
        "jdbc:postgresql://127.0.0.1:" + pg.port() + "/my+db?user=postgres", pg.jdbcUrl("my db"));
    assertTrue(pg.isRunning());
    assertTrue(Files.isRegularFile(pg.dataDirectory().orElseThrow().resolve("PG_VERSION")));
    assertTrue(Files.isExecutable(pg.binDirectory().orElseThrow().resolve("pg_basebackup")));
    assertTrue(pg.logTail(50).contains("ready to accept connections"), pg.logTail(50));
    try (Connection c = DriverManager.getConnection(pg.jdbcUrl("postgres"))) {
      assertEquals("postgres", one(c, "select current_user"));
      assertTrue(one(c, "show server_version").startsWith("15"), "the Debian 12 machines run 15");
    }
  }

  @Test
  void settingsGivenAtStartTakeEffect() throws Exception {
    try (Connection c = pg.connect("postgres")) {
      assertEquals("off", one(c, "show fsync"));
      assertEquals("32MB", one(c, "show shared_buffers"));
      assertEquals("40", one(c, "show max_connections"));
      assertEquals("256MB", one(c, "show max_wal_size"));
      assertEquals("8MB", one(c, "show work_mem"));
      assertEquals("on", one(c, "show full_page_writes"), "untouched settings keep defaults");
      assertEquals("127.0.0.1", one(c, "show listen_addresses"));
    }
  }

  @Test
  void createsClonesAndDropsDatabases() throws Exception {
    pg.createDatabase("lc_source");
    exec(pg, "lc_source", "create table t(v text)", "insert into t values ('from source')");
    pg.createDatabase("lc_copy", "lc_source");
    assertEquals(List.of("from source"), column(pg, "lc_copy", "select v from t"));
    try (Connection viaDataSource = pg.dataSource("lc_copy").getConnection()) {
      assertEquals("lc_copy", one(viaDataSource, "select current_database()"));
    }
    PgClusterException duplicate =
        assertThrows(PgClusterException.class, () -> pg.createDatabase("lc_copy"));
    assertTrue(duplicate.getMessage().contains("lc_copy"), duplicate.getMessage());

    try (Connection stillOpen = pg.connect("lc_copy")) {
      pg.dropDatabase("lc_copy");
      assertFalse(stillOpen.isValid(2), "drop terminates open sessions");
    }
    pg.dropDatabase("lc_source");
    pg.dropDatabase("lc_never_existed");
    assertFalse(databaseExists(pg, "lc_copy"));
    assertFalse(databaseExists(pg, "lc_source"));
  }

  @Test
  void rejectsBadDatabaseNames() {
    assertThrows(IllegalArgumentException.class, () -> pg.createDatabase(" "));
    assertThrows(IllegalArgumentException.class, () -> pg.createDatabase("x".repeat(64)));
  }

  @Test
  void stopAndStartKeepDataAndPort() throws Exception {
    exec(pg, "postgres", "create table lc_durable(v int)", "insert into lc_durable values (7)");
    int port = pg.port();

    pg.stop();
    assertFalse(pg.isRunning());
    assertThrows(PgClusterException.class, () -> pg.connect("postgres"));
    pg.stop(); // idempotent

    pg.start();
    assertTrue(pg.isRunning());
    assertEquals(port, pg.port());
    assertEquals("7", one(pg, "postgres", "select v from lc_durable"));

    pg.restart();
    assertEquals("7", one(pg, "postgres", "select v from lc_durable"));
    assertTrue(pg.logTail(100).contains("database system was shut down"), pg.logTail(100));
  }

  @Test
  void controlOperationsCheckTheirPreconditions() {
    IllegalStateException running = assertThrows(IllegalStateException.class, pg::start);
    assertTrue(running.getMessage().contains("already running"), running.getMessage());
    IllegalStateException notStandby = assertThrows(IllegalStateException.class, pg::promote);
    assertTrue(notStandby.getMessage().contains("not a standby"), notStandby.getMessage());
    int self = (int) ProcessHandle.current().pid();
    IllegalArgumentException foreign =
        assertThrows(IllegalArgumentException.class, () -> pg.killBackend(self));
    assertTrue(foreign.getMessage().contains("not a child"), foreign.getMessage());
  }
}
