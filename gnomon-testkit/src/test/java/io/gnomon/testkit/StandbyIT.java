package io.gnomon.testkit;

import static io.gnomon.testkit.TestSql.await;
import static io.gnomon.testkit.TestSql.exec;
import static io.gnomon.testkit.TestSql.one;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Streaming standbys made with pg_basebackup: replication, synchronous commit, promotion. */
@Timeout(120)
class StandbyIT {

  private static PgCluster primary;

  @BeforeAll
  static void startPrimary() throws SQLException {
    primary =
        PostgresProvider.startCluster(
            ClusterOptions.builder().fsync(false).synchronousCommit("remote_apply").build());
    exec(primary, "postgres", "create table repl_t(id int primary key, v text)");
  }

  @AfterAll
  static void closePrimary() {
    if (primary != null) {
      primary.close();
    }
  }

  @Test
  void asynchronousStandbyReplicatesAndCanBePromoted() throws Exception {
    try (PgCluster standby = primary.startStandby(false)) {
      assertNotEquals(primary.port(), standby.port());
      assertEquals(primary.source(), standby.source());
      assertEquals("t", one(standby, "postgres", "select pg_is_in_recovery()"));
      // a standby retries its primary every 200 ms, not PostgreSQL's 5 s
      assertEquals("200ms", one(standby, "postgres", "show wal_retrieve_retry_interval"));
      assertEquals("5s", one(primary, "postgres", "show wal_retrieve_retry_interval"));

      exec(primary, "postgres", "insert into repl_t values (1, 'written on the primary')");
      assertTrue(
          await(
              Duration.ofSeconds(30),
              () ->
                  "written on the primary".equals(
                      one(standby, "postgres", "select v from repl_t where id = 1"))),
          "the row reached the standby");

      SQLException readOnly =
          assertThrows(
              SQLException.class,
              () -> exec(standby, "postgres", "insert into repl_t values (2, 'x')"));
      assertTrue(readOnly.getMessage().contains("read-only"), readOnly.getMessage());

      standby.promote();

      assertEquals("f", one(standby, "postgres", "select pg_is_in_recovery()"));
      exec(standby, "postgres", "insert into repl_t values (2, 'written on the promoted standby')");
      assertEquals(
          "written on the primary,written on the promoted standby",
          one(standby, "postgres", "select string_agg(v, ',' order by id) from repl_t where id < 10"));
      assertThrows(IllegalStateException.class, standby::promote);
    }
    assertTrue(
        await(
            Duration.ofSeconds(30),
            () -> "0".equals(one(primary, "postgres", "select count(*) from pg_stat_replication"))),
        "the primary no longer feeds the closed standby");
  }

  @Test
  void synchronousStandbyHasTheRowWhenTheCommitReturns() throws Exception {
    String applicationName;
    try (PgCluster standby = primary.startStandby(true)) {
      applicationName = "gnomon_standby_" + standby.port();
      assertEquals(applicationName, one(primary, "postgres", "show synchronous_standby_names"));
      assertEquals(
          "sync",
          one(
              primary,
              "postgres",
              "select sync_state from pg_stat_replication where application_name = '"
                  + applicationName
                  + "'"));

      exec(primary, "postgres", "insert into repl_t values (10, 'synchronous')");
      // remote_apply: the commit returned only after the standby applied it, so no polling.
      assertEquals("synchronous", one(standby, "postgres", "select v from repl_t where id = 10"));
    }
    // Closing the standby removes it from synchronous_standby_names: commits stop waiting.
    assertTrue(
        await(
            Duration.ofSeconds(30),
            () -> "".equals(one(primary, "postgres", "show synchronous_standby_names"))));
    CompletableFuture<Void> insert =
        CompletableFuture.runAsync(
            () -> {
              try {
                exec(primary, "postgres", "insert into repl_t values (11, 'after the standby')");
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    insert.get(20, TimeUnit.SECONDS);
    assertFalse(insert.isCompletedExceptionally());
  }
}
