package io.gnomon.testkit.internal;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PostgresProvider;

/** Run in a child JVM by {@link CleanupIT}: starts a cluster, then fails like a broken test. */
public final class ClusterCleanupMain {

  private ClusterCleanupMain() {}

  public static void main(String[] args) {
    PgCluster pg = PostgresProvider.startCluster(ClusterOptions.builder().fsync(false).build());
    System.out.println("DATA=" + pg.dataDirectory().orElseThrow());
    System.out.flush();
    throw new IllegalStateException("simulated test failure without close()");
  }
}
