package io.gnomon.testkit;

import static io.gnomon.testkit.TestSql.column;
import static io.gnomon.testkit.TestSql.exec;
import static io.gnomon.testkit.TestSql.one;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Crashes: SIGKILL of the postmaster then crash recovery, and SIGKILL of one backend. The cluster
 * keeps {@code synchronous_commit=on} so that acknowledged commits are in the WAL when it dies.
 */
@Timeout(120)
class CrashRecoveryIT {

  private static PgCluster pg;

  @BeforeAll
  static void startCluster() {
    pg = PostgresProvider.startCluster(ClusterOptions.builder().fsync(false).build());
  }

  @AfterAll
  static void closeCluster() {
    if (pg != null) {
      pg.close();
    }
  }

  @Test
  void crashKeepsCommittedRowsAndLosesUncommittedOnes() throws Exception {
    exec(
        pg,
        "postgres",
        "create table crash_t(id int primary key, note text)",
        "insert into crash_t values (1, 'committed')");
    Connection open = pg.connect("postgres");
    open.setAutoCommit(false);
    exec(open, "insert into crash_t values (2, 'uncommitted')");
    Connection bystander = pg.connect("postgres");

    pg.crash();

    assertFalse(pg.isRunning());
    assertFalse(bystander.isValid(2), "every backend died with the postmaster");
    assertThrows(PgClusterException.class, () -> pg.connect("postgres"));

    pg.start();

    assertTrue(
        pg.logTail(100).contains("automatic recovery in progress"),
        "start() performed crash recovery:\n" + pg.logTail(100));
    assertEquals(List.of("1"), column(pg, "postgres", "select id from crash_t order by id"));
    open.close();
    bystander.close();
  }

  @Test
  void crashedClusterCanBeRestartedRepeatedly() throws Exception {
    int port = pg.port();
    for (int i = 0; i < 2; i++) {
      pg.crash();
      pg.restart();
      assertEquals("1", one(pg, "postgres", "select 1"));
    }
    assertEquals(port, pg.port());
  }

  @Test
  void killingOneBackendReinitialisesTheCluster() throws Exception {
    exec(
        pg,
        "postgres",
        "create table kill_t(v text)",
        "insert into kill_t values ('committed before the kill')");
    try (Connection victim = pg.connect("postgres");
        Connection bystander = pg.connect("postgres")) {
      int pid = Integer.parseInt(one(victim, "select pg_backend_pid()"));
      victim.setAutoCommit(false);
      exec(victim, "insert into kill_t values ('uncommitted')");

      pg.killBackend(pid);

      assertTrue(pg.isRunning(), "the postmaster survives and reinitialises");
      assertFalse(bystander.isValid(2), "the postmaster ends every other session");
      assertTrue(
          pg.logTail(100).contains("terminated by signal 9"), "killed:\n" + pg.logTail(100));
    }
    assertEquals(List.of("committed before the kill"), column(pg, "postgres", "select v from kill_t"));
  }
}
