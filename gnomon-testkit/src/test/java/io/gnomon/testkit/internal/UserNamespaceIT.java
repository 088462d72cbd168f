package io.gnomon.testkit.internal;

import static io.gnomon.testkit.TestSql.one;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgSource;
import java.nio.file.Files;
import java.util.ArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The user-namespace mode that embedded binaries use as root, exercised with the local binaries
 * (the embedded ones are not tested here: local binaries take precedence on these machines).
 */
@Timeout(120)
class UserNamespaceIT {

  @Test
  void clusterRunsAsRootInsideAUserNamespace() throws Exception {
    assumeTrue(RunAs.isRoot(), "only meaningful when the JVM is root");
    RunAs userns = RunAs.of(RunAs.Mode.USER_NAMESPACE);
    Binaries binaries =
        Binaries.inspect(BinaryLocator.findLocal(new ArrayList<>()).orElseThrow(), userns);
    try (LocalCluster pg =
        LocalCluster.create(
            PgSource.LOCAL_BINARIES,
            binaries,
            userns,
            ClusterOptions.builder().fsync(false).build())) {
      assertEquals("postgres", one(pg, "postgres", "select current_user"));
      assertEquals(
          "root",
          Files.getOwner(pg.dataDirectory().orElseThrow()).getName(),
          "outside the namespace the files belong to root");
      pg.crash();
      pg.start();
      assertEquals("1", one(pg, "postgres", "select 1"));
      assertTrue(pg.logTail(100).contains("automatic recovery in progress"), pg.logTail(100));
    }
  }
}
