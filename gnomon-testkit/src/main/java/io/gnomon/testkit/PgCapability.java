package io.gnomon.testkit;

/**
 * What a {@link PgCluster} can do beyond connecting. Operations whose capability is missing throw
 * {@link UnsupportedOperationException}; check {@link PgCluster#supports(PgCapability)} first when
 * a test can run without them.
 */
public enum PgCapability {
  /** {@link PgCluster#createDatabase(String)}, {@link PgCluster#dropDatabase(String)} and friends. */
  DATABASES,
  /** {@link PgCluster#stop()}, {@link PgCluster#start()} and {@link PgCluster#restart()}. */
  LIFECYCLE,
  /** {@link PgCluster#crash()}: SIGKILL of the postmaster, then crash recovery on start. */
  CRASH,
  /** {@link PgCluster#killBackend(int)}: SIGKILL of one server process. */
  KILL_BACKEND,
  /** {@link PgCluster#startStandby(boolean)} and {@link PgCluster#promote()}. */
  STANDBY
}
