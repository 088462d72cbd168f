package io.gnomon.checker.fuzz;

import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The fuzzer's SQL sample: a sample of a run's cases sent through PostgreSQL's merge functions ({@code
 * gnomon.merge_*}, through {@link SqlStrategies}) and compared with the Java reference. The sample is spread evenly over
 * the run's cases, so the seed replays it. Each strategy's first mismatch is shrunk (with a SQL round trip per
 * candidate, so within a smaller budget than the laws') and printed with the command that replays it.
 */
final class SqlSample {
  /** Round trips a mismatch's shrinking may take. */
  private static final int SHRINK_STEPS = 300;

  private SqlSample() {}

  /** The indices of a sample of {@code sample} cases spread evenly over {@code [first, first + cases)}. */
  static long[] indices(long first, long cases, long sample) {
    int n = (int) Math.min(Math.min(sample, cases), Integer.MAX_VALUE - 8);
    long[] out = new long[n];
    for (int k = 0; k < n; k++) {
      out[k] = first + (long) ((double) k * cases / n);
    }
    return out;
  }

  /**
   * Sends the sample through the database (the Gnomon catalog installed, {@link SqlStrategies#CUSTOM_FUNCTION_SQL}
   * created) and prints the comparison; returns the cases compared and the mismatches by strategy.
   */
  static MergeFuzzer.SqlReport check(Connection c, MergeFuzzer fuzzer, long[] sample, String replay, PrintStream out)
      throws SQLException {
    long start = System.nanoTime();
    List<FuzzCase> cases = new ArrayList<>(sample.length);
    for (long i : sample) {
      cases.add(fuzzer.generate(i));
    }
    SqlStrategies.Answer[] answers = SqlStrategies.merge(c, cases, new HashMap<>());
    Map<String, Long> checked = new LinkedHashMap<>();
    Map<String, Long> mismatched = new LinkedHashMap<>();
    for (String s : MergeFuzzer.STRATEGIES) {
      checked.put(s, 0L);
      mismatched.put(s, 0L);
    }
    for (int k = 0; k < cases.size(); k++) {
      FuzzCase fc = cases.get(k);
      checked.merge(fc.strategy(), 1L, Long::sum);
      String diff;
      try {
        diff = SqlStrategies.compare(fc, SqlStrategies.reference(fc), answers[k]);
      } catch (RuntimeException e) {
        diff = "the Java reference threw " + e; // the no-error law reports it too
      }
      if (diff != null && mismatched.merge(fc.strategy(), 1L, Long::sum) == 1) {
        FuzzCase small = shrink(c, fc);
        String smallDiff = Objects.requireNonNullElse(mismatch(c, small), diff);
        out.printf(Locale.ROOT, "fuzz: SQL and Java DISAGREE on strategy %s, case %d of seed %d%n", fc.strategy(),
            sample[k], fuzzer.seed());
        out.println("  replay: " + replay.replace("{case}", Long.toString(sample[k])));
        out.println("  minimised case: " + small.describe());
        out.println("  " + smallDiff);
        if (!small.equals(fc)) {
          out.println("  original case: " + fc.describe().replace("\n", "\n  "));
        }
        out.flush();
      }
    }
    long nanos = System.nanoTime() - start;
    MergeFuzzer.SqlReport report = new MergeFuzzer.SqlReport(cases.size(), nanos,
        Collections.unmodifiableMap(checked), Collections.unmodifiableMap(mismatched));
    out.printf(Locale.ROOT, "fuzz: SQL sample: %,d cases through PostgreSQL in %.1f s (%,.0f cases/s)%n",
        cases.size(), nanos / 1e9, nanos == 0 ? 0 : cases.size() * 1e9 / nanos);
    out.printf(Locale.ROOT, "  %-20s %14s %10s%n", "strategy", "compared", "mismatched");
    checked.forEach((s, n) -> out.printf(Locale.ROOT, "  %-20s %,14d %,10d%n", s, n, mismatched.get(s)));
    out.println(report.agreed() ? "fuzz: SQL and Java agree on every sampled case (seed " + fuzzer.seed() + ")"
        : "fuzz: SQL FAILED: " + report.mismatches() + " sampled cases where SQL and Java disagree (seed "
            + fuzzer.seed() + "); the first of each strategy is shown above, shrunk");
    out.flush();
    return report;
  }

  /** Where the SQL function and the Java reference disagree on one case, or null. */
  private static String mismatch(Connection c, FuzzCase fc) throws SQLException {
    SqlStrategies.Answer[] a = SqlStrategies.merge(c, List.of(fc), new HashMap<>());
    return SqlStrategies.compare(fc, SqlStrategies.reference(fc), a[0]);
  }

  /** Greedy shrinking while SQL and Java still disagree (one round trip per candidate). */
  static FuzzCase shrink(Connection c, FuzzCase failing) throws SQLException {
    FuzzCase current = failing;
    int steps = 0;
    boolean improved = true;
    while (improved && steps < SHRINK_STEPS) {
      improved = false;
      search:
      for (int slot = 0; slot < 3; slot++) {
        for (Object candidate : Shrinker.candidates(current.slot(slot), current.type())) {
          if (++steps > SHRINK_STEPS) {
            break search;
          }
          FuzzCase next = current.with(slot, candidate);
          if (mismatch(c, next) != null) {
            current = next;
            improved = true;
            break search;
          }
        }
      }
    }
    return current;
  }
}
