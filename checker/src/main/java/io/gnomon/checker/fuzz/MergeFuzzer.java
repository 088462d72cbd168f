package io.gnomon.checker.fuzz;

import io.gnomon.merge.Conflict;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Strategies;
import io.gnomon.merge.Strategy;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;

/**
 * The merge fuzzer: generates random base/ours/theirs values for the merge strategies of {@code io.gnomon.merge} and
 * checks the laws of a three-way merge on each (identity, one-sided, convergence, symmetry, mirroring, no loss, counter
 * arithmetic, determinism, no error). Case {@code i} of a run is generated from {@code (seed, i)} alone, so a seed
 * replays a run and {@code (seed, i)} replays one case. A failing case is shrunk and printed. Runs on the calling
 * thread, in memory; {@link #checkSqlSample} then sends a sample of the run's cases through PostgreSQL's merge
 * functions and compares their answers with the Java reference's.
 */
public final class MergeFuzzer {
  /** The name of the fuzzer's own custom strategy (a user function: the two texts, smaller first, joined by |). */
  public static final String CUSTOM = "custom";

  /** Every strategy the fuzzer knows, in the order it lists them. */
  public static final List<String> STRATEGIES = List.of("fail", "ours", "theirs", "counter", "max", "min", "union",
      "json", "text", CUSTOM);

  /** Shrunk failures printed per law; later ones are only counted. */
  private static final int SHOWN_PER_LAW = 1;

  private final long cases;
  private final long seed;
  private final long firstCase;
  private final List<String> strategies;
  private final String mutant;
  private final long progressNanos;
  private final Laws laws;

  /**
   * A fuzzer.
   *
   * @param cases how many cases to run
   * @param seed the seed of the run
   * @param firstCase the index of the first case (0 for a whole run; a failure's index to replay it)
   * @param strategies the strategies to fuzz, a non-empty subset of {@link #STRATEGIES}
   * @param mutant null, or the name of a deliberately broken strategy to run instead of the real one ({@link
   *     #mutants()})
   * @param progressMillis how often to print progress
   * @throws IllegalArgumentException on an unknown strategy or mutant, or a negative count
   */
  public MergeFuzzer(long cases, long seed, long firstCase, List<String> strategies, String mutant,
      long progressMillis) {
    if (cases < 0 || firstCase < 0) {
      throw new IllegalArgumentException("the number of cases and the first case must not be negative");
    }
    if (strategies.isEmpty()) {
      throw new IllegalArgumentException("no strategy to fuzz");
    }
    for (String s : strategies) {
      if (!STRATEGIES.contains(s)) {
        throw new IllegalArgumentException("unknown strategy '" + s + "'; known: " + String.join(", ", STRATEGIES));
      }
    }
    Map<String, Strategy> byName = new LinkedHashMap<>();
    for (String s : STRATEGIES) {
      byName.put(s, s.equals(CUSTOM) ? custom() : Strategies.byName(s).orElseThrow());
    }
    if (mutant != null) {
      Mutant m = Mutant.byName(mutant).orElseThrow(() -> new IllegalArgumentException(
          "unknown mutant '" + mutant + "'; known: " + String.join(", ", Mutant.names())));
      byName.put(m.strategy(), m.broken());
    }
    this.cases = cases;
    this.seed = seed;
    this.firstCase = firstCase;
    this.strategies = List.copyOf(strategies);
    this.mutant = mutant;
    this.progressNanos = Math.max(1, progressMillis) * 1_000_000L;
    this.laws = new Laws(byName);
  }

  /** The names of the deliberately broken strategies. */
  public static List<String> mutants() {
    return Mutant.names();
  }

  /** The custom strategy the fuzzer checks: a symmetric user function over text. */
  private static Strategy custom() {
    return Strategies.custom(CUSTOM, (column, b, o, t) -> {
      if (o == null || t == null) {
        return new Conflict(column.name(), b, o, t, CUSTOM, "a NULL side");
      }
      String x = (String) o;
      String y = (String) t;
      return Resolution.resolved(x.compareTo(y) <= 0 ? x + "|" + y : y + "|" + x);
    });
  }

  /** What a run found. */
  public record Report(long cases, long nanos, long cpuNanos, Map<String, Long> checked, Map<String, Long> failed) {
    /** Whether no law failed. */
    public boolean passed() {
      return failed.values().stream().allMatch(n -> n == 0);
    }

    /** Cases per second of wall-clock time. */
    public double casesPerSecond() {
      return nanos == 0 ? 0 : cases * 1e9 / nanos;
    }

    /** Cases per second of the fuzzing thread's CPU time: the rate on one core, whatever else the machine runs. */
    public double casesPerCpuSecond() {
      return cpuNanos == 0 ? 0 : cases * 1e9 / cpuNanos;
    }
  }

  /** What the SQL sample found: the cases compared and the mismatches, by strategy. */
  public record SqlReport(long cases, long nanos, Map<String, Long> compared, Map<String, Long> mismatched) {
    /** Whether SQL and Java agreed on every sampled case. */
    public boolean agreed() {
      return mismatches() == 0;
    }

    /** The sampled cases on which SQL and Java disagreed. */
    public long mismatches() {
      return mismatched.values().stream().mapToLong(Long::longValue).sum();
    }
  }

  /** The seed of the run. */
  public long seed() {
    return seed;
  }

  /**
   * Prepares a database for {@link #checkSqlSample}: installs Gnomon's catalog (the merge functions) and the SQL side
   * of the fuzzer's custom strategy, {@code public.merge_test_join}.
   */
  public static void prepareDatabase(Connection c) throws SQLException {
    io.gnomon.sql.Catalog.install(c);
    SqlStrategies.createCustomFunction(c);
  }

  /**
   * Sends {@code sample} of the run's cases, spread evenly over them, through PostgreSQL's merge functions in a database
   * {@link #prepareDatabase prepared} for it, compares each answer with the Java reference's (the same value, or both a
   * conflict with the same reason and ours as the value), and prints each strategy's first mismatch shrunk, with the
   * command that replays it, and a table of cases compared and mismatched by strategy. The mutant, if any, breaks only
   * the in-memory run: the sample compares the real Java reference with the database's functions.
   */
  public SqlReport checkSqlSample(Connection c, long sample, PrintStream out) throws SQLException {
    out.printf(Locale.ROOT, "fuzz: SQL sample: %,d of the %,d cases through PostgreSQL%n", Math.min(sample, cases), cases);
    out.flush();
    String replay = "./gnomon fuzz --seed " + seed + " --first-case {case} --cases 1 --sql-sample 1"
        + (strategies.equals(STRATEGIES) ? "" : " --strategy " + String.join(",", strategies));
    return SqlSample.check(c, this, SqlSample.indices(firstCase, cases, sample), replay, out);
  }

  /** The case {@code index} of a run with {@code seed}: its own random stream, independent of the others. */
  FuzzCase generate(long index) {
    SplittableRandom r = new SplittableRandom(mix(seed, index));
    return Generators.generate(strategies.get(r.nextInt(strategies.size())), r);
  }

  /** Runs the fuzzer, printing its seed first, progress, shrunk failures, and a summary. */
  public Report run(PrintStream out) {
    out.printf(Locale.ROOT, "fuzz: seed %d, %,d cases from case %d, strategies %s%s%n", seed, cases, firstCase,
        String.join(", ", strategies), mutant == null ? "" : " (mutant " + mutant + ")");
    out.println("fuzz: in memory, on one thread");
    out.flush();
    Law[] all = Law.values();
    long[] checked = new long[all.length];
    long[] failed = new long[all.length];
    boolean[][] applies = new boolean[STRATEGIES.size()][all.length];
    for (int s = 0; s < STRATEGIES.size(); s++) {
      for (Law law : all) {
        applies[s][law.ordinal()] = Laws.applies(law, STRATEGIES.get(s));
      }
    }
    java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
    long cpuStart = threads.isCurrentThreadCpuTimeSupported() ? threads.getCurrentThreadCpuTime() : -1;
    long start = System.nanoTime();
    long lastPrint = start;
    long end = firstCase + cases;
    for (long i = firstCase; i < end; i++) {
      FuzzCase c = generate(i);
      int s = STRATEGIES.indexOf(c.strategy());
      String[] failures = laws.checkAll(c);
      for (Law law : all) {
        if (!applies[s][law.ordinal()]) {
          continue;
        }
        checked[law.ordinal()]++;
        String failure = failures[law.ordinal()];
        if (failure != null && failed[law.ordinal()]++ < SHOWN_PER_LAW) {
          report(out, i, c, law, failure);
        }
      }
      if ((i & 1023) == 0) {
        long now = System.nanoTime();
        if (now - lastPrint >= progressNanos) {
          lastPrint = now;
          long done = i - firstCase + 1;
          out.printf(Locale.ROOT, "fuzz: %,d of %,d cases, %,.0f cases/s, %d failures%n", done, cases,
              done * 1e9 / (now - start), sum(failed));
          out.flush();
        }
      }
    }
    long nanos = System.nanoTime() - start;
    long cpuNanos = cpuStart < 0 ? nanos : threads.getCurrentThreadCpuTime() - cpuStart;
    Map<String, Long> checkedBy = new LinkedHashMap<>();
    Map<String, Long> failedBy = new LinkedHashMap<>();
    for (Law law : all) {
      checkedBy.put(law.label(), checked[law.ordinal()]);
      failedBy.put(law.label(), failed[law.ordinal()]);
    }
    Report report = new Report(cases, nanos, cpuNanos, Collections.unmodifiableMap(checkedBy),
        Collections.unmodifiableMap(failedBy));
    out.printf(Locale.ROOT, "fuzz: %,d cases in %.1f s, %,.0f cases/s (%.1f s of CPU on one thread: %,.0f cases per"
        + " CPU second)%n", cases, nanos / 1e9, report.casesPerSecond(), cpuNanos / 1e9, report.casesPerCpuSecond());
    out.printf(Locale.ROOT, "  %-20s %14s %10s%n", "law", "checked", "failed");
    for (Law law : all) {
      out.printf(Locale.ROOT, "  %-20s %,14d %,10d%n", law.label(), checked[law.ordinal()], failed[law.ordinal()]);
    }
    out.println(report.passed() ? "fuzz: no law failed (seed " + seed + ")"
        : "fuzz: FAILED: " + sum(failed) + " failures (seed " + seed + "); the first of each law is shown above, shrunk");
    out.flush();
    return report;
  }

  private void report(PrintStream out, long index, FuzzCase c, Law law, String failure) {
    FuzzCase small = Shrinker.shrink(c, law, laws);
    String smallFailure = Objects.requireNonNullElse(laws.check(small, law), failure);
    out.printf(Locale.ROOT, "fuzz: law %s FAILED on case %d of seed %d%n", law.label(), index, seed);
    out.println("  replay: ./gnomon fuzz --seed " + seed + " --first-case " + index + " --cases 1"
        + (strategies.equals(STRATEGIES) ? "" : " --strategy " + String.join(",", strategies))
        + (mutant == null ? "" : " --mutant " + mutant));
    out.println("  minimised case: " + small.describe());
    out.println("  " + smallFailure);
    if (!small.equals(c)) {
      out.println("  original case: " + c.describe().replace("\n", "\n  "));
    }
    out.flush();
  }

  private static long sum(long[] a) {
    long s = 0;
    for (long x : a) {
      s += x;
    }
    return s;
  }

  /** SplitMix64 of the seed and the index: well-spread, independent streams per case. */
  static long mix(long seed, long index) {
    long z = seed + 0x9E3779B97F4A7C15L * (index + 1);
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }

  /** The failures of every law on one case of the run, for tests. */
  List<String> failures(long index) {
    FuzzCase c = generate(index);
    List<String> out = new ArrayList<>();
    for (Law law : Law.values()) {
      if (Laws.applies(law, c.strategy())) {
        String f = laws.check(c, law);
        if (f != null) {
          out.add(law.label() + ": " + f);
        }
      }
    }
    return out;
  }
}
