package io.gnomon.cli;

import io.gnomon.checker.CheckConfig;
import io.gnomon.checker.CheckResult;
import io.gnomon.checker.Checker;
import io.gnomon.checker.SqlMutant;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code ./gnomon check}: runs the history checker ({@link Checker}) and exits 0 when the history is valid, 1 when a
 * violation was found, 2 when the run could not be carried out (or on a bad command line).
 */
final class CheckCommand implements Command {

  @Override
  public String name() {
    return "check";
  }

  @Override
  public String summary() {
    return "Check Gnomon's guarantees under concurrent sessions, kill -9, crash-restart and failover";
  }

  @Override
  public String usage() {
    StringBuilder options = new StringBuilder();
    for (Map.Entry<String, String> k : CheckConfig.KNOBS.entrySet()) {
      String[] dm = k.getValue().split(" — ", 2);
      options.append(String.format("  --%-11s %s (default: %s)%n", k.getKey(), dm[1], dm[0]));
    }
    options.append(String.format("  --%-11s %s%n", "list-mutants", "print the mutants' names, one per line, and exit"));
    return """
        usage: %1$s check [--duration 40s] [--sessions 8] [--tables 3] [--branches 3] [--scratch 4]
                             [--isolation all] [--faults kill,restart,failover] [--standby sync] [--seed S]
                             [--report DIR] [--mutant NAME] [--c-module PATH]

        Starts a throwaway PostgreSQL primary with a synchronous (or, with --standby async, asynchronous)
        streaming standby, tracks a few tables, forks logged and scratch branches (some nested) during the run,
        merges among main and the branches while the sessions write (strategies theirs, ours, max, counter and
        fail, with conflicts resolved and merged again), and runs concurrent sessions of random transactions on main and on the branches (reads with their coordinate, inserts,
        updates, deletes, key changes, savepoints, rollbacks, long transactions) at READ COMMITTED, REPEATABLE
        READ and SERIALIZABLE, while a change-feed consumer drains the feed and faults strike: kill -9 of
        backends, crash-restart of the server, failover to the standby. Every operation is logged as a JSON line.
        Afterwards it verifies that every read, on main and on branches, replays exactly as of its coordinate,
        that the feed delivered every committed version once and in commit order, that no version is missing or
        out of order, that each tracked table equals an untracked shadow written in the same transactions, that
        keys never written on a branch read as its parent did at the cutoff, that each branch equals its shadow and
        its history is a chain, that merges lost no change of either side and reported exactly the conflicts the
        three-way rule gives, that no acknowledged commit was lost (with --standby async: which ones were), that
        only crashes emptied scratch branches, and that pg_amcheck is clean. It prints the verdict and writes
        a report (index.html, result.json, history.jsonl).

        With GNOMON_JDBC_URL set it runs on that server in a database it creates and drops; faults are then
        limited to terminating backends.

        options:
        %2$s
        Exit status: 0 when the history is valid, 1 when a violation was found, 2 when the run could not be
        carried out or the command line is wrong. See docs/checker.md.
        """.formatted(Main.PROGRAM, options.toString().stripTrailing());
  }

  @Override
  public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
    Options o = Options.parse(args, Set.of("duration", "sessions", "tables", "branches", "scratch", "isolation", "faults",
        "standby", "seed", "report", "mutant", "c-module"), Set.of("list-mutants"));
    if (o.has("list-mutants")) {
      for (SqlMutant m : SqlMutant.values()) {
        out.println(m.cliName() + (m.available() ? "" : "  (slot: not built yet)"));
      }
      return OK;
    }
    CheckConfig.Builder b = CheckConfig.builder();
    if (o.get("duration").isPresent()) {
      b.duration(duration(o.get("duration").get()));
    }
    if (o.get("sessions").isPresent()) {
      b.sessions(integer(o, "sessions"));
    }
    if (o.get("tables").isPresent()) {
      b.tables(integer(o, "tables"));
    }
    if (o.get("branches").isPresent()) {
      b.branches(integer(o, "branches"));
    }
    if (o.get("scratch").isPresent()) {
      b.scratch(integer(o, "scratch"));
    }
    o.get("standby").ifPresent(b::standby);
    o.get("isolation").ifPresent(v -> b.isolations(list(v)));
    o.get("faults").ifPresent(v -> b.faults(list(v)));
    if (o.get("seed").isPresent()) {
      try {
        b.seed(Long.parseLong(o.get("seed").get().replace("_", "")));
      } catch (NumberFormatException e) {
        throw new UsageException("--seed must be a whole number, got '" + o.get("seed").get() + "'");
      }
    }
    o.get("report").ifPresent(v -> b.reportDir(Path.of(v)));
    o.get("mutant").ifPresent(b::mutant);
    o.get("c-module").ifPresent(b::cModule);
    CheckConfig config;
    try {
      config = b.build();
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage().replace("\n", "\n" + Main.PROGRAM + " check: "));
    }
    // the ticker and the feed runner warn at every failed attempt while a fault is under way: the run logs faults itself
    System.setProperty("org.slf4j.simpleLogger.log.io.gnomon",
        System.getProperty("org.slf4j.simpleLogger.log.io.gnomon", "error"));
    CheckResult r = Checker.run(config, out);
    if (r.status() == CheckResult.COULD_NOT_RUN) {
      err.println(Main.PROGRAM + " check: " + r.verdict());
    }
    return r.status();
  }

  private static List<String> list(String v) {
    return Arrays.stream(v.split(",")).map(s -> s.strip().toLowerCase(Locale.ROOT)).filter(s -> !s.isEmpty())
        .toList();
  }

  private static int integer(Options o, String name) throws UsageException {
    String v = o.get(name).orElseThrow();
    try {
      return Integer.parseInt(v.strip());
    } catch (NumberFormatException e) {
      throw new UsageException("--" + name + " must be a whole number, got '" + v + "'");
    }
  }

  /** {@code 60s}, {@code 2m}, {@code 500ms}, or a number of seconds. */
  static Duration duration(String v) throws UsageException {
    String s = v.strip().toLowerCase(Locale.ROOT);
    try {
      if (s.endsWith("ms")) {
        return Duration.ofMillis(Long.parseLong(s.substring(0, s.length() - 2)));
      }
      if (s.endsWith("s")) {
        return Duration.ofMillis(Math.round(Double.parseDouble(s.substring(0, s.length() - 1)) * 1000));
      }
      if (s.endsWith("m")) {
        return Duration.ofMillis(Math.round(Double.parseDouble(s.substring(0, s.length() - 1)) * 60_000));
      }
      return Duration.ofMillis(Math.round(Double.parseDouble(s) * 1000));
    } catch (NumberFormatException e) {
      throw new UsageException("--duration must be a time such as 60s, 2m or 500ms, got '" + v + "'");
    }
  }
}
