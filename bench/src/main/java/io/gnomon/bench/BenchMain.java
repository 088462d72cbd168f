package io.gnomon.bench;

import io.gnomon.testkit.PgCluster;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Runs benchmark groups and writes each one's rows to {@code OUT/GROUP.json}, printing them as a
 * table. Usage: {@code BenchMain [--quick] [--out DIR] [GROUP...]}; groups are {@code write-read},
 * {@code jmh}, {@code experiments}, {@code feed}, {@code branches}, {@code merge} and {@code checker}. Without groups: all
 * of them ({@code --quick}: {@code write-read} only).
 */
public final class BenchMain {
  static final List<String> GROUPS = List.of("write-read", "jmh", "experiments", "feed", "branches", "merge", "checker");

  private BenchMain() {}

  public static void main(String[] args) {
    boolean quick = false;
    Path out = Path.of("target", "bench");
    Set<String> groups = new LinkedHashSet<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--quick":
          quick = true;
          break;
        case "--out":
          out = Path.of(args[++i]);
          break;
        case "-h":
        case "--help":
          System.out.println("usage: bench/run.sh [--quick] [GROUP...]   groups: " + String.join(", ", GROUPS));
          return;
        default:
          if (!GROUPS.contains(args[i])) {
            System.err.println("unknown group '" + args[i] + "'; groups are: " + String.join(", ", GROUPS));
            System.exit(2);
          }
          groups.add(args[i]);
      }
    }
    if (groups.isEmpty()) {
      groups.addAll(quick ? List.of("write-read") : GROUPS);
    }
    Budget budget = quick ? Budget.quickRun() : Budget.full();
    System.out.println("Gnomon benchmarks" + (quick ? " (quick: short runs, for a smoke test only)" : "")
        + ", groups " + groups + ", results in " + out.toAbsolutePath());
    List<String> summaries = new ArrayList<>();
    for (String group : groups) {
      long t0 = System.nanoTime();
      List<Metric> rows = run(group, budget, out);
      Report.write(out, group, rows);
      Report.markdown(out, group, rows);
      Report.print(System.out, group, rows);
      summaries.add(String.format("%s: %d rows in %.0f s -> %s", group, rows.size(), (System.nanoTime() - t0) / 1e9,
          out.resolve(group + ".json")));
    }
    summaries.forEach(System.out::println);
  }

  /** The checker group: verification speed, and what logging the history costs the workload (target: at least 0.9). */
  private static List<Metric> checker(Budget budget, Path out) {
    io.gnomon.bench.checker.CheckerBench.Figures f = io.gnomon.bench.checker.CheckerBench.run(
        java.time.Duration.ofSeconds(budget.quick() ? 8 : 20), budget.quick() ? 1 : 3, out.resolve("checker"),
        System.out);
    return List.of(
        Metric.single("checked_ops_per_s", f.checkedOpsPerSecond(), "ops/s", null, null,
            "history ops verified per second (reads replayed as of their coordinates, history, feed, shadow), "
                + f.opsVerified() + " ops, no faults, no branches; " + f.verdict()),
        Metric.paired("workload_tps_logging_on_vs_off", "txn/s", f.tpsPairs(), Target.atLeast(0.9),
            "committed transactions per second of ./gnomon check's workload (8 sessions, no faults, no branches), history logged "
                + "vs not logged, pairs in alternating order"));
  }

  private static List<Metric> run(String group, Budget budget, Path out) {
    System.out.println("\n== running " + group);
    switch (group) {
      case "write-read":
        try (PgCluster pg = BenchCluster.start()) {
          return WriteReadGroup.run(pg, budget, out, System.out);
        }
      case "jmh":
        return JmhGroup.run(budget, out);
      case "feed":
        return FeedGroup.run(budget, out, System.out);
      case "branches":
        try (PgCluster pg = BenchCluster.start()) {
          return BranchesGroup.run(pg, budget, out, System.out);
        }
      case "checker":
        return checker(budget, out);
      case "merge":
        return MergeGroup.run(budget, out, System.out);
      case "experiments":
        try (PgCluster pg = BenchCluster.start()) {
          return ExperimentsGroup.run(pg, budget, out, System.out);
        }
      default:
        throw new IllegalArgumentException(group);
    }
  }
}
