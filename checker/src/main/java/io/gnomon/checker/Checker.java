package io.gnomon.checker;

import io.gnomon.Gnomon;
import io.gnomon.GnomonConfig;
import io.gnomon.checker.history.History;
import io.gnomon.checker.history.HistoryLog;
import io.gnomon.checker.report.Report;
import io.gnomon.checker.run.Amcheck;
import io.gnomon.checker.run.Collector;
import io.gnomon.checker.run.FeedSink;
import io.gnomon.checker.run.Mutants;
import io.gnomon.checker.run.Schema;
import io.gnomon.checker.run.Servers;
import io.gnomon.checker.run.Workload;
import io.gnomon.checker.run.WorkloadRun;
import io.gnomon.checker.verify.Observations;
import io.gnomon.checker.verify.Verification;
import io.gnomon.checker.verify.Verifier;
import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PostgresProvider;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The history checker ({@code ./gnomon check}): starts a throwaway primary with a synchronous standby (or uses
 * {@code GNOMON_JDBC_URL}), tracks tables, runs concurrent sessions with a feed consumer while it injects faults,
 * then reads back what the database holds, verifies it against the logged history and writes the report.
 */
public final class Checker {
  /** The database the checker creates (with a random suffix on an existing server). */
  static final String DATABASE = "gnomon_check";

  private final CheckConfig config;
  private final PrintStream out;

  private Checker(CheckConfig config, PrintStream out) {
    this.config = config;
    this.out = out;
  }

  /** Runs a check, printing progress to {@code out}; never throws for a run that could not be carried out. */
  public static CheckResult run(CheckConfig config, PrintStream out) {
    return new Checker(config, out).run();
  }

  private CheckResult run() {
    long started = System.nanoTime();
    Map<String, Object> counts = new LinkedHashMap<>();
    Map<String, String> environment = new LinkedHashMap<>();
    List<String> notes = new ArrayList<>();
    out.printf(Locale.ROOT, "Gnomon check: seed %d, %s, %d sessions, %d tables, %d branches, isolation %s, faults %s%s%n",
        config.seed(), human(config.duration()), config.sessions(), config.tables(), config.branches(),
        String.join(",", config.isolations()), config.faults().isEmpty() ? "none" : String.join(",", config.faults()),
        config.mutant() == null ? "" : ", MUTANT " + config.mutant().cliName());
    PgCluster pg;
    try {
      pg = PostgresProvider.obtain(ClusterOptions.builder().fsync(false).synchronousCommit("on").walLevel("replica")
          .maxWalSenders(10).maxConnections(100).set("max_locks_per_transaction", "256").build());
    } catch (RuntimeException e) {
      return couldNotRun("no PostgreSQL to run on: " + e.getMessage(), counts, environment, notes, started);
    }
    try (pg) {
      boolean existing = !pg.supports(io.gnomon.testkit.PgCapability.LIFECYCLE);
      String database = existing ? DATABASE + "_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 40)
          : DATABASE;
      pg.createDatabase(database);
      try {
        return run(pg, database, counts, environment, notes, started);
      } finally {
        if (existing && !Boolean.getBoolean("gnomon.check.keep")) { // -Dgnomon.check.keep=true: keep it to look into
          try {
            pg.dropDatabase(database);
          } catch (RuntimeException ignored) {
            // the report says where the run was
          }
        }
      }
    } catch (SQLException | RuntimeException e) {
      return couldNotRun(e.toString(), counts, environment, notes, started);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return couldNotRun("interrupted", counts, environment, notes, started);
    }
  }

  private CheckResult run(PgCluster pg, String database, Map<String, Object> counts, Map<String, String> environment,
      List<String> notes, long started) throws SQLException, InterruptedException {
    Servers servers = new Servers(pg, database, !config.asyncStandby());
    List<String> faults = new ArrayList<>(config.faults());
    if (!servers.controlled()) {
      if (faults.remove("restart") | faults.remove("failover")) {
        notes.add("The server named by GNOMON_JDBC_URL is not under the checker's control: restart and failover were "
            + "not injected, and kill used pg_terminate_backend instead of SIGKILL.");
      }
    } else if (faults.contains("failover") && !servers.canReplicate()) {
      faults.remove("failover");
      notes.add("No pg_basebackup on this machine: failover was not injected.");
    }
    Map<Integer, Map<Long, Long>> initial = Schema.create(servers.dataSource(), config.tables());
    try (Connection c = servers.connect()) {
      if (config.mutant() != null) {
        if (config.scratch() > 0) {
          // the first scratch branch makes Gnomon regenerate the read functions (to read the unlogged partitions),
          // which would undo a mutant made in them: make one first (s0, never used)
          Schema.createBranch(c, "s0", "main", true);
        }
        Mutants.apply(c, config.mutant(), config.tables());
        notes.add("Mutant " + config.mutant().cliName() + ": " + config.mutant().description() + ".");
      }
      if (config.cModule() != null) {
        useCModule(c, config.cModule(), config.tables());
        environment.put("write path", "the C module " + config.cModule());
        notes.add("Tracked tables wrote their versions through the C module (" + config.cModule() + ").");
      }
      describe(c, pg, environment);
      String patch = System.getProperty("gnomon.check.sql"); // hidden: try a fix of Gnomon's SQL in the run's database
      if (patch != null) {
        try (Statement st = c.createStatement()) {
          st.execute(java.nio.file.Files.readString(java.nio.file.Path.of(patch)));
        } catch (java.io.IOException e) {
          throw new SQLException("cannot read " + patch + ": " + e.getMessage(), e);
        }
        notes.add("Gnomon's SQL was patched for this run with " + patch + ".");
      }
    }
    if (faults.contains("failover")) {
      out.println("Starting " + (config.asyncStandby() ? "an asynchronous" : "a synchronous")
          + " standby for failover...");
      PgCluster standby = servers.startStandby();
      try (Connection c = standby.connect("postgres"); Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("show wal_retrieve_retry_interval")) {
        rs.next();
        environment.put("standby wal_retrieve_retry_interval", rs.getString(1));
      }
    }
    out.println("Running on " + environment.get("server") + "; report in " + config.reportDir().toAbsolutePath());
    HistoryLog log = config.logging() ? HistoryLog.to(config.reportDir().resolve("history.jsonl"))
        : HistoryLog.disabled();
    Workload workload = new Workload(servers, log, config.tables(), config.isolations(), config.seed());
    try (Connection c = servers.connect()) {
      workload.generated(Schema.generated(c, config.tables()));
    }
    Amcheck amcheck = new Amcheck(servers);
    GnomonConfig gc = GnomonConfig.builder().dataSource(servers.dataSource()).tickInterval(Duration.ofMillis(100))
        .build();
    String feedProblem;
    WorkloadRun result;
    try (Gnomon gnomon = Gnomon.open(gc); FeedSink sink = new FeedSink(servers)) {
      gnomon.startTicker();
      result = WorkloadRun.run(config, servers, workload, faults, amcheck, sink, out);
      out.println("Workload stopped; draining the feed...");
      feedProblem = result.problem() == null ? sink.drain(servers, Duration.ofSeconds(60)) : null;
      counts.put("feed events stored", sink.events.get());
      counts.put("feed runner retries", sink.retries());
    } finally {
      log.close();
    }
    counts.putAll(result.counts());
    if (result.problem() != null) {
      return couldNotRun(result.problem(), counts, environment, notes, started);
    }
    if (!config.logging()) {
      return new CheckResult(CheckResult.VALID, "NOT VERIFIED: logging was off", null, config.reportDir(), counts);
    }
    amcheck.run("at the end");
    amcheck.runs().stream().filter(a -> "unavailable".equals(a.status())).findFirst().ifPresent(a ->
        notes.add("pg_amcheck could not check the database (" + a.when() + "): " + a.output()));
    out.println("Verifying...");
    long v0 = System.nanoTime();
    History history = History.of(log.ops());
    Observations o;
    try (Connection c = servers.connect()) {
      o = Collector.collect(c, history, config.tables(), initial, feedProblem, amcheck.runs(), workload.scratchReplays(),
          config.asyncStandby());
      o = o.withReplaysWithoutOwn(Collector.replayWithoutOwn(c, history, config.tables(), Verifier.replaySuspects(o)));
    }
    counts.put("collection and replay seconds", Math.round((System.nanoTime() - v0) / 1e8) / 10.0);
    Verification verification = Verifier.verify(o);
    double verifySeconds = (System.nanoTime() - v0) / 1e9;
    counts.put("verification seconds", Math.round(verifySeconds * 10) / 10.0);
    counts.put("ops verified per second", Math.round(history.ops().size() / Math.max(verifySeconds, 1e-3)));
    int status = verification.valid() ? CheckResult.VALID : CheckResult.VIOLATION;
    String verdict = verdict(verification);
    counts.put("run seconds", Math.round((System.nanoTime() - started) / 1e8) / 10.0);
    CheckResult r = new CheckResult(status, verdict, verification, config.reportDir(), counts);
    Report.write(config, r, history, environment, notes, amcheck.runs());
    Report.console(out, config, r, notes);
    return r;
  }

  private static String verdict(Verification v) {
    if (v.valid()) {
      return "VALID: no violation found";
    }
    long n = v.violations().values().stream().mapToLong(Long::longValue).sum();
    return "INVALID: " + n + " violation" + (n == 1 ? "" : "s") + " of " + v.violations().size() + " kind"
        + (v.violations().size() == 1 ? "" : "s") + " (" + String.join(", ", v.byKind().keySet()) + ")";
  }

  /** Switches every tracked table to the C module's write path, and checks that each one's triggers now call it. */
  private static void useCModule(Connection c, String library, int tables) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("select gnomon.use_c_module(true, ?)")) {
      ps.setString(1, library);
      ps.execute();
    }
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(
        "select count(distinct tgrelid) from pg_trigger where tgfoid = 'gnomon.write_c()'::regprocedure")) {
      rs.next();
      if (rs.getInt(1) != tables) {
        throw new SQLException("gnomon.use_c_module(true) left " + rs.getInt(1) + " of " + tables
            + " tracked tables on the C write path");
      }
    }
  }

  private CheckResult couldNotRun(String why, Map<String, Object> counts, Map<String, String> environment,
      List<String> notes, long started) {
    String verdict = "COULD NOT RUN: " + why;
    counts.put("run seconds", Math.round((System.nanoTime() - started) / 1e8) / 10.0);
    CheckResult r = new CheckResult(CheckResult.COULD_NOT_RUN, verdict, null, config.reportDir(), counts);
    try {
      Report.write(config, r, History.of(List.of()), environment, notes, List.of());
    } catch (RuntimeException ignored) {
      // the console has the verdict
    }
    Report.console(out, config, r, notes);
    return r;
  }

  private static void describe(Connection c, PgCluster pg, Map<String, String> env) throws SQLException {
    try (Statement st = c.createStatement()) {
      try (ResultSet rs = st.executeQuery("select version()")) {
        rs.next();
        env.put("server", rs.getString(1));
      }
      env.put("source", pg.source().toString());
      try (ResultSet rs = st.executeQuery("select name, setting || coalesce(' ' || unit, '') from pg_settings where "
          + "name in ('fsync', 'synchronous_commit', 'synchronous_standby_names', 'wal_level', 'max_connections', "
          + "'shared_buffers', 'default_transaction_isolation', 'full_page_writes', 'max_wal_senders', "
          + "'max_locks_per_transaction', 'server_version_num') order by name")) {
        while (rs.next()) {
          env.put(rs.getString(1), rs.getString(2));
        }
      }
    }
  }

  static String human(Duration d) {
    return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
  }
}
