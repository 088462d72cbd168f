package io.gnomon.bench;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PostgresProvider;
import java.nio.file.Files;
import java.nio.file.Path;

/** The throwaway cluster every benchmark group runs on, started through the testkit. */
final class BenchCluster {
  private BenchCluster() {}

  /**
   * The settings of every benchmark cluster: durability off (the ratios, not the absolute numbers,
   * are the point), buffers large enough for both copies of the data, and no checkpoint during a
   * measurement unless the benchmark asks for one. Autovacuum keeps its defaults.
   */
  static ClusterOptions options() {
    return ClusterOptions.builder()
        .fsync(false)
        .synchronousCommit("off")
        .sharedBuffers("256MB")
        .maxWalSize("4GB")
        .set("checkpoint_timeout", "30min")
        .build();
  }

  /** A throwaway cluster from local binaries (never an existing server: pgbench and /proc need it here). */
  static PgCluster start() {
    return PostgresProvider.startCluster(options());
  }

  /** The directory of the PostgreSQL client binaries ({@code pgbench}, {@code pg_waldump}). */
  static Path binaries() {
    String env = System.getenv("GNOMON_PG_BINDIR");
    if (env != null && !env.isBlank()) {
      return Path.of(env);
    }
    Path debian = Path.of("/usr/lib/postgresql/15/bin");
    if (Files.isExecutable(debian.resolve("pgbench"))) {
      return debian;
    }
    throw new IllegalStateException(
        "pgbench not found in /usr/lib/postgresql/15/bin; install postgresql-15 or point GNOMON_PG_BINDIR at the"
            + " directory that holds pgbench");
  }
}
