package io.gnomon.cli;

import io.gnomon.checker.fuzz.MergeFuzzer;
import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCapability;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PostgresProvider;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * {@code ./gnomon fuzz}: runs {@link MergeFuzzer} in memory, then sends a sample of its cases through PostgreSQL (a
 * throwaway cluster, or the server of {@code GNOMON_JDBC_URL}) and compares the SQL merge functions' answers with the
 * Java reference's; exits 0 when no law failed and SQL agreed, 1 otherwise.
 */
final class FuzzCommand implements Command {
  static final long DEFAULT_CASES = 1_000_000;
  static final long DEFAULT_SQL_SAMPLE = 20_000;

  @Override
  public String name() {
    return "fuzz";
  }

  @Override
  public String summary() {
    return "Fuzz the merge strategies against the laws of a three-way merge, and SQL against Java";
  }

  @Override
  public String usage() {
    return """
        usage: %1$s fuzz [--cases N] [--seed S] [--strategy NAME[,NAME...]] [--first-case I] [--sql-sample N]

        Generates random base, ours and theirs values for the merge strategies (%2$s) over their
        column types, merges them with the Java reference functions, and checks the laws: identity, one-sided
        changes win, equal changes converge, symmetry (mirroring for ours/theirs), no loss (each side's
        change is in the result or a conflict is reported), counter arithmetic and overflow, determinism.
        It prints its seed first, progress every few seconds, each law's first failure with a minimised case
        and the command that replays it, and at the end cases/s and failures by law.

        The cases run in memory, on one thread. Then a sample of them, spread evenly over the run, goes
        through PostgreSQL's merge functions (gnomon.merge_<strategy>, the ones gnomon.merge calls) and each
        answer is compared with the Java reference's: the same value, or both a conflict with the same reason.
        Each strategy's first mismatch is printed minimised, with the command that replays it. The database
        is a throwaway cluster started from the local PostgreSQL binaries, or a scratch database on the
        server of GNOMON_JDBC_URL (created and dropped again).

        options:
          --cases N          how many cases (default %3$,d)
          --seed S           the seed (default: random, printed); the same seed replays the same run
          --strategy NAMES   only these strategies, comma-separated (default: all)
          --first-case I     start at case I of the seed's sequence (with --cases 1: replay one failure)
          --sql-sample N     how many of the cases go through PostgreSQL (default %4$,d, at most --cases;
                             0: in memory only)

        Exit status: 0 when no law failed and SQL agreed with Java, 1 otherwise (also when the SQL sample
        could not run), 2 on a bad command line.
        """
        .formatted(Main.PROGRAM, String.join(", ", MergeFuzzer.STRATEGIES), DEFAULT_CASES, DEFAULT_SQL_SAMPLE);
  }

  @Override
  public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
    Options options = Options.parse(args, Set.of("cases", "seed", "strategy", "first-case", "mutant", "sql-sample"), Set.of());
    long cases = number(options, "cases", DEFAULT_CASES);
    long first = number(options, "first-case", 0);
    long sample = Math.min(cases, number(options, "sql-sample", DEFAULT_SQL_SAMPLE));
    long seed = options.get("seed").isPresent() ? parse("seed", options.get("seed").get())
        : ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    List<String> strategies = options.get("strategy")
        .map(s -> Arrays.stream(s.split(",")).map(String::strip).filter(x -> !x.isEmpty()).toList())
        .orElse(MergeFuzzer.STRATEGIES);
    String mutant = options.get("mutant").orElse(null); // hidden: a deliberately broken strategy
    MergeFuzzer fuzzer;
    try {
      fuzzer = new MergeFuzzer(cases, seed, first, strategies, mutant, 3_000);
    } catch (IllegalArgumentException e) {
      throw new UsageException(e.getMessage());
    }
    boolean passed = fuzzer.run(out).passed();
    if (sample > 0) {
      passed &= sqlSample(fuzzer, sample, out, err);
    }
    return passed ? OK : FAILED;
  }

  /** The SQL sample on a throwaway cluster (or a scratch database of GNOMON_JDBC_URL's server); false when it failed. */
  private static boolean sqlSample(MergeFuzzer fuzzer, long sample, PrintStream out, PrintStream err) {
    PgCluster pg;
    try {
      pg = PostgresProvider.obtain(ClusterOptions.builder().fsync(false).synchronousCommit("off").build());
    } catch (RuntimeException e) {
      err.println("fuzz: the SQL sample needs PostgreSQL and none could be had: " + e.getMessage());
      err.println("fuzz: set GNOMON_JDBC_URL or GNOMON_PG_BINDIR, or pass --sql-sample 0 to fuzz in memory only");
      return false;
    }
    try (pg) {
      boolean existing = !pg.supports(PgCapability.LIFECYCLE);
      String database = "gnomon_fuzz" + (existing ? "_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 24) : "");
      pg.createDatabase(database);
      try (Connection c = pg.connect(database)) {
        MergeFuzzer.prepareDatabase(c);
        return fuzzer.checkSqlSample(c, sample, out).agreed();
      } finally {
        if (existing) {
          pg.dropDatabase(database);
        }
      }
    } catch (SQLException | RuntimeException e) {
      err.println("fuzz: the SQL sample failed: " + e);
      return false;
    }
  }

  private static long number(Options options, String name, long otherwise) throws UsageException {
    if (options.get(name).isEmpty()) {
      return otherwise;
    }
    long v = parse(name, options.get(name).get());
    if (v < 0) {
      throw new UsageException("--" + name + " must not be negative, got " + v);
    }
    return v;
  }

  private static long parse(String name, String value) throws UsageException {
    try {
      return Long.parseLong(value.replace("_", ""));
    } catch (NumberFormatException e) {
      throw new UsageException("--" + name + " must be a whole number, got '" + value + "'");
    }
  }
}
