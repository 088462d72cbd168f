package io.gnomon.testkit.internal;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCapability;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PgClusterException;
import io.gnomon.testkit.PgSource;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A throwaway cluster run from PostgreSQL binaries: a fresh {@link ClusterDirectory} initialised
 * by {@link InitdbCache}, the postmaster started as a child process of the JVM (never through
 * {@code pg_ctl start}) on a free loopback port with a private socket directory, its output
 * appended to {@code postgres.log}; readiness is a successful JDBC connection.
 *
 * <p>A primary and its standbys share one lock, so operations on a replication family are
 * serialised. Every cluster registers itself with {@link ShutdownHooks}.
 */
public final class LocalCluster extends JdbcServer {

  private static final Logger LOG = LoggerFactory.getLogger(LocalCluster.class);
  private static final String USER = "postgres";
  private static final String HOST = "127.0.0.1";
  private static final String ADMIN_DATABASE = "postgres";
  private static final Duration STOP_TIMEOUT = Duration.ofSeconds(60);
  private static final Duration KILL_TIMEOUT = Duration.ofSeconds(10);
  private static final Duration CLOSE_GRACE = Duration.ofSeconds(10);
  private static final int PORT_ATTEMPTS = 5;

  private final Object lock;
  private final PgSource source;
  private final Binaries binaries;
  private final RunAs runAs;
  private final ClusterOptions options;
  private final ClusterDirectory dir;
  private final String applicationName;
  private final LocalCluster upstream;
  private final List<LocalCluster> standbys = new ArrayList<>();
  private final Set<String> synchronousNames = new LinkedHashSet<>();
  private final Runnable unregister;
  private volatile int port;
  private volatile Process postmaster;
  private boolean portSettled;
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
    this.port = port;
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
    return HOST;
  }

  @Override
  public int port() {
    return port;
  }

  @Override
  public String user() {
    return USER;
  }

  @Override
  public String jdbcUrl(String database) {
    return JdbcUrls.of(HOST, port, database, USER);
  }

  @Override
  String adminDatabase() {
    return ADMIN_DATABASE;
  }

  @Override
  String describe() {
    return (upstream != null ? "standby " + applicationName + ", a " : "")
        + "throwaway PostgreSQL "
        + binaries.majorVersion()
        + " cluster on port "
        + port
        + " in "
        + dir;
  }

  @Override
  public boolean isRunning() {
    Process p = postmaster;
    return p != null && p.isAlive();
  }

  @Override
  public Optional<Path> dataDirectory() {
    return Optional.of(dir.data());
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
      cleanUpAfterPreviousRun();
      int attempts = portSettled ? 1 : PORT_ATTEMPTS;
      for (int attempt = 1; ; attempt++) {
        long offset = LogFiles.size(dir.log());
        launch();
        try {
          awaitReady(offset);
          portSettled = true;
          LOG.info("Started {}", describe());
          return;
        } catch (PortTakenException e) {
          if (attempt >= attempts) {
            throw new PgClusterException(
                "Port "
                    + port
                    + " is taken by another process, so "
                    + describe()
                    + " cannot start"
                    + LogFiles.section("server log", LogFiles.tailFrom(dir.log(), offset, 20)));
          }
          port = FreePorts.pick();
        }
      }
    }
  }

  @Override
  public void stop() {
    synchronized (lock) {
      requireOpen();
      Process p = postmaster;
      if (p == null || !p.isAlive()) {
        postmaster = null;
        return;
      }
      ClusterProcesses.signal(p.pid(), "INT");
      if (!Poll.exited(p, STOP_TIMEOUT)) {
        hardKill();
        throw new PgClusterException(
            "Fast shutdown of "
                + describe()
                + " did not finish within "
                + STOP_TIMEOUT.toSeconds()
                + " s; the cluster was killed instead"
                + LogFiles.section("server log", logTail(20)));
      }
      postmaster = null;
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
      hardKill();
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
      Connection sentinel = tryConnect();
      try {
        target.destroyForcibly();
        if (!Poll.until(KILL_TIMEOUT, () -> !target.isAlive())) {
          throw new PgClusterException(
              "Backend " + pid + " of " + describe() + " survived SIGKILL for 10 s");
        }
        if (sentinel != null
            && !Poll.until(options.startupTimeout(), () -> !isValid(sentinel))) {
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
      awaitReady(0);
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
      checkCanFeedStandby();
      ClusterDirectory standbyDir = ClusterDirectory.create(runAs);
      int standbyPort = FreePorts.pick();
      String name = "gnomon_standby_" + standbyPort;
      LocalCluster s =
          new LocalCluster(
              source, binaries, runAs, options, standbyDir, name, this, standbyPort);
      try {
        List<String> cmd =
            List.of(
                binaries.tool("pg_basebackup").toString(),
                "-D",
                standbyDir.data().toString(),
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync",
                "-h",
                HOST,
                "-p",
                Integer.toString(port),
                "-U",
                USER,
                "-w");
        Commands.runChecked(
            "pg_basebackup from " + describe(),
            runAs.wrap(cmd),
            standbyDir.root(),
            standbyDir.root().resolve("basebackup.log"),
            options.startupTimeout());
        // The copy carries the primary's synchronous_standby_names; once promoted, the standby
        // would wait for standbys of its own that do not exist.
        ServerConfig.setAuto(standbyDir.data(), "synchronous_standby_names", null);
        s.start();
        standbys.add(s);
        if (synchronous) {
          synchronousNames.add(name);
          applySynchronousNames();
        }
        awaitStreaming(s, synchronous);
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
      long seconds = Math.max(1, options.startupTimeout().toSeconds());
      boolean promoted;
      try (Connection c = connect(ADMIN_DATABASE);
          PreparedStatement ps = c.prepareStatement("SELECT pg_promote(true, ?)")) {
        ps.setInt(1, (int) Math.min(Integer.MAX_VALUE, seconds));
        try (ResultSet rs = ps.executeQuery()) {
          promoted = rs.next() && rs.getBoolean(1);
        }
      } catch (SQLException e) {
        throw new PgClusterException("Could not promote " + describe() + ": " + e.getMessage(), e);
      }
      if (!promoted) {
        throw new PgClusterException(
            "Promotion of "
                + describe()
                + " did not complete within "
                + seconds
                + " s"
                + LogFiles.section("server log", logTail(20)));
      }
      standby = false;
      if (upstream != null) {
        upstream.dropSynchronousName(applicationName);
      }
      LOG.info("Promoted {}", describe());
    }
  }

  private void checkCanFeedStandby() {
    String walLevel = show("wal_level");
    int senders = Integer.parseInt(show("max_wal_senders"));
    if ("minimal".equals(walLevel) || senders < 2) {
      throw new IllegalStateException(
          describe()
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
   * Sets {@code synchronous_standby_names} in {@code postgresql.auto.conf} (as ALTER SYSTEM
   * would) and reloads.
   */
  private void applySynchronousNames() {
    ServerConfig.setAuto(
        dir.data(),
        "synchronous_standby_names",
        synchronousNames.isEmpty() ? null : String.join(", ", synchronousNames));
    Process p = postmaster;
    if (p != null && p.isAlive()) {
      ClusterProcesses.signal(p.pid(), "HUP");
    }
  }

  private void dropSynchronousName(String name) {
    synchronized (lock) {
      if (synchronousNames.remove(name) && !closed) {
        applySynchronousNames();
      }
    }
  }

  private void awaitStreaming(LocalCluster s, boolean synchronous) {
    String sql =
        "SELECT sync_state FROM pg_stat_replication"
            + " WHERE application_name = ? AND state = 'streaming'";
    boolean streaming =
        Poll.until(
            options.startupTimeout(),
            () -> {
              try (Connection c = connect(ADMIN_DATABASE);
                  PreparedStatement ps = c.prepareStatement(sql)) {
                ps.setString(1, s.applicationName);
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
          s.describe()
              + " did not become a "
              + (synchronous ? "synchronous" : "streaming")
              + " standby of "
              + describe()
              + " within "
              + options.startupTimeout().toSeconds()
              + " s"
              + LogFiles.section("standby log", s.logTail(15))
              + LogFiles.section("primary log", logTail(15)));
    }
    if (synchronous) {
      // A new backend saw the standby as synchronous, so the postmaster has reloaded and
      // forwarded SIGHUP to its children; a checkpoint makes sure the checkpointer has processed
      // it too, since it is the process that tells committing backends to wait for standbys.
      admin("run CHECKPOINT", st -> st.execute("CHECKPOINT"));
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
        Process p = postmaster;
        if (p != null && p.isAlive()) {
          // Immediate shutdown: quick, and unlike SIGKILL it releases shared memory.
          ClusterProcesses.signal(p.pid(), "QUIT");
          if (!Poll.exited(p, CLOSE_GRACE)) {
            p.destroyForcibly();
          }
        }
        postmaster = null;
        ClusterProcesses.killAll(dir.root(), KILL_TIMEOUT);
        dir.delete();
        LOG.info("Removed {}", describe());
      } finally {
        unregister.run();
      }
    }
  }

  // ---------------------------------------------------------------- helpers

  private void launch() {
    List<String> cmd =
        new ArrayList<>(
            List.of(
                binaries.tool("postgres").toString(),
                "-D",
                dir.data().toString(),
                "-p",
                Integer.toString(port),
                "-k",
                dir.socketDir().toString(),
                "-c",
                "listen_addresses=" + HOST));
    if (applicationName != null) {
      // Standbys connect with cluster_name as their application_name.
      cmd.add("-c");
      cmd.add("cluster_name=" + applicationName);
    }
    ProcessBuilder pb = Commands.builder(runAs.wrap(cmd), dir.root());
    pb.redirectErrorStream(true);
    pb.redirectOutput(ProcessBuilder.Redirect.appendTo(dir.log().toFile()));
    try {
      postmaster = pb.start();
    } catch (IOException e) {
      throw new PgClusterException(
          "Could not start " + String.join(" ", pb.command()) + ": " + e.getMessage(), e);
    }
  }

  private void awaitReady(long logOffset) {
    Process p = postmaster;
    Duration timeout = options.startupTimeout();
    boolean ready = Poll.until(timeout, () -> !p.isAlive() || canConnect());
    if (!p.isAlive()) {
      String log = LogFiles.tailFrom(dir.log(), logOffset, 30);
      postmaster = null;
      ClusterProcesses.killAll(dir.root(), KILL_TIMEOUT);
      if (!portSettled
          && (log.contains("Address already in use")
              || log.contains("could not create any TCP/IP sockets"))) {
        throw new PortTakenException();
      }
      throw new PgClusterException(
          "PostgreSQL exited with code "
              + p.exitValue()
              + " while starting "
              + describe()
              + LogFiles.section("server log " + dir.log(), log));
    }
    if (!ready) {
      String log = LogFiles.tailFrom(dir.log(), logOffset, 30);
      hardKill();
      throw new PgClusterException(
          describe()
              + " did not accept connections within "
              + timeout.toSeconds()
              + " s and was killed; raise ClusterOptions.startupTimeout on a slow machine"
              + LogFiles.section("server log " + dir.log(), log));
    }
  }

  private boolean canConnect() {
    try (Connection c = DriverManager.getConnection(jdbcUrl(ADMIN_DATABASE), probeProperties())) {
      return !c.isClosed();
    } catch (SQLException e) {
      return false;
    }
  }

  private Connection tryConnect() {
    try {
      return DriverManager.getConnection(jdbcUrl(ADMIN_DATABASE), probeProperties());
    } catch (SQLException e) {
      return null;
    }
  }

  private static Properties probeProperties() {
    Properties p = new Properties();
    p.setProperty("connectTimeout", "5");
    p.setProperty("socketTimeout", "10");
    p.setProperty("ApplicationName", "gnomon-testkit");
    return p;
  }

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

  private String show(String parameter) {
    try (Connection c = connect(ADMIN_DATABASE);
        ResultSet rs = c.createStatement().executeQuery("SHOW " + parameter)) {
      rs.next();
      return rs.getString(1);
    } catch (SQLException e) {
      throw new PgClusterException(
          "Could not read " + parameter + " of " + describe() + ": " + e.getMessage(), e);
    }
  }

  /** SIGKILLs the postmaster and every process left in the cluster directory. */
  private void hardKill() {
    Process p = postmaster;
    if (p != null) {
      p.destroyForcibly();
      Poll.exited(p, KILL_TIMEOUT);
    }
    postmaster = null;
    ClusterProcesses.killAll(dir.root(), KILL_TIMEOUT);
  }

  /**
   * Makes a restart after a crash possible: kills orphaned server processes (they would keep the
   * old shared memory attached) and removes lock files naming a live process that is not ours
   * (PID reuse), which would make the postmaster refuse to start. A lock file naming a dead
   * process is left alone: PostgreSQL then recycles the old shared-memory segment itself.
   */
  private void cleanUpAfterPreviousRun() {
    ClusterProcesses.killAll(dir.root(), KILL_TIMEOUT);
    removeLockIfForeign(dir.data().resolve("postmaster.pid"));
    removeLockIfForeign(dir.socketDir().resolve(".s.PGSQL." + port + ".lock"));
  }

  private static void removeLockIfForeign(Path lockFile) {
    String text = Commands.read(lockFile);
    if (text.isEmpty()) {
      return;
    }
    try {
      long pid = Long.parseLong(text.split("\n", 2)[0].trim());
      if (ProcessHandle.of(pid).isPresent()) {
        Files.deleteIfExists(lockFile);
      }
    } catch (NumberFormatException | IOException e) {
      try {
        Files.deleteIfExists(lockFile);
      } catch (IOException ignored) {
        // PostgreSQL will report the lock file itself
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
          operation + " needs a running cluster, but " + describe() + " is not running; call start() first");
    }
  }

  /** The postmaster could not bind its port; the first start retries with another one. */
  private static final class PortTakenException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    PortTakenException() {
      super(null, null, false, false);
    }
  }
}
