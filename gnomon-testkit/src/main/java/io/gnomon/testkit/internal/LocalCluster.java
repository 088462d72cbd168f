package io.gnomon.testkit.internal;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCapability;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PgClusterException;
import io.gnomon.testkit.PgSource;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A throwaway cluster run from PostgreSQL binaries: a fresh {@link ClusterDirectory} initialised
 * by {@link InitdbCache}, configured by {@link ServerConfig}, run by a {@link Postmaster}; standbys
 * come from {@link Replication}.
 *
 * <p>A primary and its standbys share one lock, so operations on a replication family are
 * serialised. Every cluster registers itself with {@link ShutdownHooks}.
 */
public final class LocalCluster extends JdbcServer {

  private static final Logger LOG = LoggerFactory.getLogger(LocalCluster.class);
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration CLOSE_GRACE = Duration.ofSeconds(10);

  private final Object lock;
  private final PgSource source;
  private final Binaries binaries;
  private final RunAs runAs;
  private final ClusterOptions options;
  private final ClusterDirectory dir;
  private final Postmaster postmaster;
  private final String applicationName;
  private final LocalCluster upstream;
  private final List<LocalCluster> standbys = new ArrayList<>();
  private final Set<String> synchronousNames = new LinkedHashSet<>();
  private final Runnable unregister;
  private boolean standby;
  private boolean closed;

  private LocalCluster(
      PgSource source,
      Binaries binaries,
      RunAs runAs,
      ClusterOptions options,
      ClusterDirectory dir,
      String applicationName,
      LocalCluster upstream,
      int port) {
    this.lock = upstream == null ? new Object() : upstream.lock;
    this.source = source;
    this.binaries = binaries;
    this.runAs = runAs;
    this.options = options;
    this.dir = dir;
    this.applicationName = applicationName;
    this.upstream = upstream;
    this.standby = upstream != null;
    this.postmaster =
        new Postmaster(
            binaries, runAs, dir, applicationName, port, options.startupTimeout(), this::describe);
    this.unregister = ShutdownHooks.register("PostgreSQL cluster in " + dir, this::close);
  }

  /**
   * Initialises and starts a new cluster. On failure everything created is removed again.
   *
   * @param source how the binaries were found, reported by {@link #source()}
   * @param binaries the PostgreSQL binaries
   * @param runAs how to run them
   * @param options the cluster's settings
   * @return the running cluster
   */
  public static LocalCluster create(
      PgSource source, Binaries binaries, RunAs runAs, ClusterOptions options) {
    StaleClusters.reapOnce();
    ClusterDirectory dir = ClusterDirectory.create(runAs);
    LocalCluster cluster =
        new LocalCluster(source, binaries, runAs, options, dir, null, null, FreePorts.pick());
    try {
      InitdbCache.populate(binaries, runAs, dir, options.startupTimeout());
      ServerConfig.writeInitial(dir.data(), options, runAs);
      cluster.start();
      return cluster;
    } catch (RuntimeException e) {
      cluster.close();
      throw e;
    }
  }

  @Override
  public PgSource source() {
    return source;
  }

  @Override
  public Set<PgCapability> capabilities() {
    EnumSet<PgCapability> set =
        EnumSet.of(
            PgCapability.DATABASES,
            PgCapability.LIFECYCLE,
            PgCapability.CRASH,
            PgCapability.KILL_BACKEND);
    if (binaries.has("pg_basebackup")) {
      set.add(PgCapability.STANDBY);
    }
    return Collections.unmodifiableSet(set);
  }

  @Override
  public String host() {
    return Postmaster.HOST;
  }

  @Override
  public int port() {
    return postmaster.port();
  }

  @Override
  public String user() {
    return Postmaster.USER;
  }

  @Override
  public String jdbcUrl(String database) {
    return postmaster.jdbcUrl(database);
  }

  @Override
  String adminDatabase() {
    return Postmaster.ADMIN_DATABASE;
  }

  @Override
  String describe() {
    return (upstream != null ? "standby " + applicationName + ", a " : "")
        + "throwaway PostgreSQL "
        + binaries.majorVersion()
        + " cluster on port "
        + postmaster.port()
        + " in "
        + dir;
  }

  @Override
  public boolean isRunning() {
    return postmaster.isRunning();
  }

  @Override
  public Optional<Path> dataDirectory() {
    return Optional.of(dir.data());
  }

  @Override
  public Optional<Path> binDirectory() {
    return Optional.of(binaries.bindir());
  }

  @Override
  public String logTail(int lines) {
    return LogFiles.tail(dir.log(), lines);
  }

  // ---------------------------------------------------------------- lifecycle

  @Override
  public void start() {
    synchronized (lock) {
      requireOpen();
      if (isRunning()) {
        throw new IllegalStateException(
            describe() + " is already running; use restart() to restart it");
      }
      postmaster.start();
      LOG.info("Started {}", describe());
    }
  }

  @Override
  public void stop() {
    synchronized (lock) {
      requireOpen();
      if (!isRunning()) {
        return;
      }
      if (!postmaster.stopFast(STOP_TIMEOUT)) {
        throw new PgClusterException(
            "Fast shutdown of "
                + describe()
                + " did not finish within "
                + STOP_TIMEOUT.toSeconds()
                + " s; the cluster was killed instead"
                + LogFiles.section("server log", logTail(20)));
      }
      LOG.info("Stopped {}", describe());
    }
  }

  @Override
  public void restart() {
    synchronized (lock) {
      stop();
      start();
    }
  }

  @Override
  public void crash() {
    synchronized (lock) {
      requireOpen();
      requireRunning("crash()");
      long pid = postmaster.pid();
      postmaster.kill();
      LOG.info("Crashed {} (SIGKILL to postmaster {} and all its processes)", describe(), pid);
    }
  }

  @Override
  public void killBackend(int pid) {
    synchronized (lock) {
      requireOpen();
      requireRunning("killBackend(" + pid + ")");
      long postmasterPid = postmaster.pid();
      ProcessHandle target =
          ProcessHandle.of(pid)
              .filter(h -> h.parent().map(p -> p.pid() == postmasterPid).orElse(false))
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "Process "
                              + pid
                              + " is not a child of the postmaster (pid "
                              + postmasterPid
                              + ") of "
                              + describe()
                              + "; pass a pid from 'select pg_backend_pid()', or use crash() to"
                              + " kill the postmaster"));
      // A session opened before the kill: the postmaster terminates it while reinitialising,
      // which tells us the crash cycle has begun before we wait for readiness again.
      Connection sentinel = postmaster.tryConnect();
      try {
        target.destroyForcibly();
        if (!Poll.until(KILL_TIMEOUT, () -> !target.isAlive())) {
          throw new PgClusterException(
              "Backend " + pid + " of " + describe() + " survived SIGKILL for 10 s");
        }
        if (sentinel != null && !Poll.until(options.startupTimeout(), () -> !isValid(sentinel))) {
          throw new PgClusterException(
              "The postmaster of "
                  + describe()
                  + " did not reinitialise after backend "
                  + pid
                  + " was killed"
                  + LogFiles.section("server log", logTail(20)));
        }
      } finally {
        closeQuietly(sentinel);
      }
      postmaster.awaitReady();
      LOG.info("Killed backend {} of {}; it accepts connections again", pid, describe());
    }
  }

  // ---------------------------------------------------------------- replication

  @Override
  public PgCluster startStandby(boolean synchronous) {
    synchronized (lock) {
      requireOpen();
      if (!binaries.has("pg_basebackup")) {
        throw unsupported("startStandby(" + synchronous + ")", PgCapability.STANDBY);
      }
      requireRunning("startStandby(" + synchronous + ")");
      Replication.checkCanFeedStandby(this);
      ClusterDirectory standbyDir = ClusterDirectory.create(runAs);
      int standbyPort = FreePorts.pick();
      String name = "gnomon_standby_" + standbyPort;
      LocalCluster s =
          new LocalCluster(source, binaries, runAs, options, standbyDir, name, this, standbyPort);
      try {
        Replication.baseBackup(binaries, runAs, port(), standbyDir, options.startupTimeout());
        Replication.shortRetryInterval(standbyDir, options.settings());
        s.start();
        standbys.add(s);
        if (synchronous) {
          synchronousNames.add(name);
          applySynchronousNames();
        }
        Replication.awaitStreaming(
            this,
            name,
            synchronous,
            options.startupTimeout(),
            () ->
                LogFiles.section("standby log", s.logTail(15))
                    + LogFiles.section("primary log", logTail(15)));
        LOG.info("Started {} ({})", s.describe(), synchronous ? "synchronous" : "asynchronous");
        return s;
      } catch (RuntimeException e) {
        s.close();
        throw e;
      }
    }
  }

  @Override
  public void promote() {
    synchronized (lock) {
      requireOpen();
      if (!standby) {
        throw new IllegalStateException(
            describe()
                + " is not a standby; only clusters returned by startStandby(...) can be promoted");
      }
      requireRunning("promote()");
      Replication.promote(
          this, options.startupTimeout(), () -> LogFiles.section("server log", logTail(20)));
      standby = false;
      if (upstream != null) {
        upstream.dropSynchronousName(applicationName);
      }
      LOG.info("Promoted {}", describe());
    }
  }

  /**
   * Sets {@code synchronous_standby_names} in {@code postgresql.auto.conf} (as ALTER SYSTEM
   * would, without needing a connection) and reloads.
   */
  private void applySynchronousNames() {
    ServerConfig.setAuto(
        dir.data(),
        "synchronous_standby_names",
        synchronousNames.isEmpty() ? null : String.join(", ", synchronousNames));
    postmaster.reload();
  }

  private void dropSynchronousName(String name) {
    synchronized (lock) {
      if (synchronousNames.remove(name) && !closed) {
        applySynchronousNames();
      }
    }
  }

  // ---------------------------------------------------------------- close

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      try {
        List<LocalCluster> mine = new ArrayList<>(standbys);
        Collections.reverse(mine);
        for (LocalCluster s : mine) {
          s.close();
        }
        if (upstream != null) {
          upstream.standbys.remove(this);
          upstream.dropSynchronousName(applicationName);
        }
        postmaster.shutDownImmediately(CLOSE_GRACE);
        dir.delete();
        LOG.info("Removed {}", describe());
      } finally {
        unregister.run();
      }
    }
  }

  // ---------------------------------------------------------------- helpers

  private static boolean isValid(Connection c) {
    try {
      return c.isValid(2);
    } catch (SQLException e) {
      return false;
    }
  }

  private static void closeQuietly(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // the session is gone already
      }
    }
  }

  private void requireOpen() {
    if (closed) {
      throw new IllegalStateException(describe() + " is closed");
    }
  }

  private void requireRunning(String operation) {
    if (!isRunning()) {
      throw new IllegalStateException(
          operation
              + " needs a running cluster, but "
              + describe()
              + " is not running; call start() first");
    }
  }
}
