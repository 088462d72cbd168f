package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/** Streaming replication between throwaway clusters: base backups, streaming checks, promotion. */
final class Replication {

  private Replication() {}

  /**
   * Fails unless {@code primary} can feed a standby: {@code wal_level} replica or logical, and two
   * WAL senders for {@code pg_basebackup -X stream}.
   */
  static void checkCanFeedStandby(JdbcServer primary) {
    String walLevel = primary.show("wal_level");
    int senders = Integer.parseInt(primary.show("max_wal_senders"));
    if ("minimal".equals(walLevel) || senders < 2) {
      throw new IllegalStateException(
          primary.describe()
              + " cannot feed a standby: wal_level="
              + walLevel
              + ", max_wal_senders="
              + senders
              + " (a standby needs wal_level replica or logical and two WAL senders while it is"
              + " created); start the primary with ClusterOptions.builder().walLevel(\"replica\")"
              + ".maxWalSenders(5)");
    }
  }

  /**
   * Copies the primary into {@code target.data()} with {@code pg_basebackup -R -X stream}, which
   * also writes {@code standby.signal} and {@code primary_conninfo}.
   */
  static void baseBackup(
      Binaries binaries, RunAs runAs, int primaryPort, ClusterDirectory target, Duration timeout) {
    List<String> cmd =
        List.of(
            binaries.tool("pg_basebackup").toString(),
            "-D",
            target.data().toString(),
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
            "--no-sync",
            "-h",
            Postmaster.HOST,
            "-p",
            Integer.toString(primaryPort),
            "-U",
            Postmaster.USER,
            "-w");
    Commands.runChecked(
        "pg_basebackup from port " + primaryPort,
        runAs.wrap(cmd),
        target.root(),
        target.root().resolve("basebackup.log"),
        timeout);
    // The copy carries the primary's synchronous_standby_names; once promoted, the standby
    // would wait for standbys of its own that do not exist.
    ServerConfig.setAuto(target.data(), "synchronous_standby_names", null);
  }

  /**
   * A standby's {@code wal_retrieve_retry_interval} unless the options set one: {@value
   * #STANDBY_RETRY_INTERVAL} instead of PostgreSQL's 5 s. After its primary restarts (a crash, a
   * killed backend), a standby waits that long before it reconnects, and every commit on the
   * primary waits for a synchronous standby in the meantime.
   */
  static final String STANDBY_RETRY_INTERVAL = "200ms";

  /** Sets the standby's retry interval in {@code postgresql.auto.conf} unless the options set one. */
  static void shortRetryInterval(ClusterDirectory target, java.util.Map<String, String> settings) {
    if (!settings.containsKey("wal_retrieve_retry_interval")) {
      ServerConfig.setAuto(target.data(), "wal_retrieve_retry_interval", STANDBY_RETRY_INTERVAL);
    }
  }

  /**
   * Waits until the primary streams to {@code applicationName} and, when {@code synchronous},
   * counts it as a synchronous standby.
   *
   * @param diagnostics log tails for the error message
   */
  static void awaitStreaming(
      JdbcServer primary,
      String applicationName,
      boolean synchronous,
      Duration timeout,
      Supplier<String> diagnostics) {
    String sql =
        "SELECT sync_state FROM pg_stat_replication"
            + " WHERE application_name = ? AND state = 'streaming'";
    boolean streaming =
        Poll.until(
            timeout,
            () -> {
              try (Connection c = primary.connect(primary.adminDatabase());
                  PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, applicationName);
                try (ResultSet rs = ps.executeQuery()) {
                  if (!rs.next()) {
                    return false;
                  }
                  String state = rs.getString(1);
                  return !synchronous || "sync".equals(state) || "quorum".equals(state);
                }
              } catch (SQLException | PgClusterException e) {
                return false;
              }
            });
    if (!streaming) {
      throw new PgClusterException(
          "Standby "
              + applicationName
              + " did not become a "
              + (synchronous ? "synchronous" : "streaming")
              + " standby of "
              + primary.describe()
              + " within "
              + timeout.toSeconds()
              + " s"
              + diagnostics.get());
    }
    if (synchronous) {
      // A new backend saw the standby as synchronous, so the postmaster has reloaded and
      // forwarded SIGHUP to its children; a checkpoint makes sure the checkpointer has processed
      // it too, since it is the process that tells committing backends to wait for standbys.
      primary.admin("run CHECKPOINT", st -> st.execute("CHECKPOINT"));
    }
  }

  /**
   * Promotes a standby with {@code pg_promote(wait => true)}.
   *
   * @throws PgClusterException if promotion fails or does not finish within {@code timeout}
   */
  static void promote(JdbcServer standby, Duration timeout, Supplier<String> diagnostics) {
    long seconds = Math.max(1, Math.min(Integer.MAX_VALUE, timeout.toSeconds()));
    boolean promoted;
    try (Connection c = standby.connect(standby.adminDatabase());
        PreparedStatement ps = c.prepareStatement("SELECT pg_promote(true, ?)")) {
      ps.setInt(1, (int) seconds);
      try (ResultSet rs = ps.executeQuery()) {
        promoted = rs.next() && rs.getBoolean(1);
      }
    } catch (SQLException e) {
      throw new PgClusterException(
          "Could not promote " + standby.describe() + ": " + e.getMessage(), e);
    }
    if (!promoted) {
      throw new PgClusterException(
          "Promotion of "
              + standby.describe()
              + " did not complete within "
              + seconds
              + " s"
              + diagnostics.get());
    }
  }
}
