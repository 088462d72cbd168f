package io.gnomon.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ClusterOptionsTest {

  @Test
  void defaultsChangeNothing() {
    ClusterOptions o = ClusterOptions.defaults();
    assertEquals(Map.of(), o.settings());
    assertEquals(ClusterOptions.DEFAULT_STARTUP_TIMEOUT, o.startupTimeout());
  }

  @Test
  void testDefaultsAreFastButKeepFullPageWrites() {
    ClusterOptions o = ClusterOptions.forTests();
    assertEquals(
        Map.of(
            "fsync", "off",
            "synchronous_commit", "off",
            "max_connections", "100",
            "shared_buffers", "128MB",
            "max_prepared_transactions", "10",
            "wal_level", "replica",
            "max_wal_senders", "5",
            "lock_timeout", "3min"),
        o.settings());
    assertEquals(Optional.empty(), o.setting("full_page_writes"));
  }

  @Test
  void builderAcceptsTypedAndFreeFormSettings() {
    ClusterOptions o =
        ClusterOptions.builder()
            .fsync(false)
            .fullPageWrites(true)
            .synchronousCommit("remote_apply")
            .sharedBuffers("64MB")
            .maxWalSize("2GB")
            .walLevel("logical")
            .maxWalSenders(4)
            .maxConnections(20)
            .maxPreparedTransactions(5)
            .synchronousStandbyNames("FIRST 1 (a, b)")
            .set("Work_Mem", "4MB")
            .set("pg_stat_statements.max", "1000")
            .startupTimeout(Duration.ofSeconds(5))
            .build();
    assertEquals(Optional.of("4MB"), o.setting("work_mem"));
    assertEquals(Optional.of("logical"), o.setting("WAL_LEVEL"));
    assertEquals(Duration.ofSeconds(5), o.startupTimeout());
    assertEquals(o, o.toBuilder().build());
    assertEquals(
        Optional.empty(), o.toBuilder().remove("work_mem").build().setting("work_mem"));
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                ClusterOptions.builder()
                    .set("fsync", "maybe")
                    .maxConnections(0)
                    .sharedBuffers("lots")
                    .synchronousCommit("sometimes")
                    .set("port", "5432")
                    .set("bad name;", "x")
                    .set("work_mem", "4MB\nfsync = on")
                    .walLevel("minimal")
                    .startupTimeout(Duration.ZERO)
                    .build());
    String m = e.getMessage();
    assertTrue(m.contains("fsync='maybe' is not a boolean"), m);
    assertTrue(m.contains("max_connections=0 is outside 1.."), m);
    assertTrue(m.contains("shared_buffers='lots' is not a memory size"), m);
    assertTrue(m.contains("synchronous_commit='sometimes' is not one of"), m);
    assertTrue(m.contains("port is managed by the testkit"), m);
    assertTrue(m.contains("'bad name;' is not a PostgreSQL parameter name"), m);
    assertTrue(m.contains("work_mem contains a line break"), m);
    assertTrue(m.contains("wal_level=minimal requires max_wal_senders=0"), m);
    assertTrue(m.contains("startupTimeout must be positive"), m);
  }

  @Test
  void minimalWalLevelIsFineWithoutSenders() {
    ClusterOptions o = ClusterOptions.builder().walLevel("minimal").maxWalSenders(0).build();
    assertEquals(Optional.of("minimal"), o.setting("wal_level"));
  }

  @Test
  void namesDifferingOnlyInCaseAreRejectedByTheConstructor() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new ClusterOptions(Map.of("fsync", "on", "FSYNC", "off"), Duration.ofSeconds(1)));
    assertTrue(e.getMessage().contains("fsync is given twice"), e.getMessage());
  }
}
