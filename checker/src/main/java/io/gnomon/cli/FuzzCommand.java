package io.gnomon.cli;

import io.gnomon.checker.fuzz.MergeFuzzer;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/** {@code ./gnomon fuzz}: runs {@link MergeFuzzer} in memory and exits 0 when no law failed, 1 otherwise. */
final class FuzzCommand implements Command {
  static final long DEFAULT_CASES = 1_000_000;

  @Override
  public String name() {
    return "fuzz";
  }

  @Override
  public String summary() {
    return "Fuzz the merge strategies against the laws of a three-way merge (in memory)";
  }

  @Override
  public String usage() {
    return """
        usage: %1$s fuzz [--cases N] [--seed S] [--strategy NAME[,NAME...]] [--first-case I]

        Generates random base, ours and theirs values for the merge strategies (%2$s) over their
        column types, merges them with the Java reference functions, and checks the laws: identity, one-sided
        changes win, equal changes converge, symmetry (mirroring for ours/theirs), no loss (each side's
        change is in the result or a conflict is reported), counter arithmetic and overflow, determinism.
        It prints its seed first, progress every few seconds, each law's first failure with a minimised case
        and the command that replays it, and at the end cases/s and failures by law.

        The cases run in memory, on one thread. Sending a sample of them through PostgreSQL and comparing
        with the SQL merge statements comes with the SQL side of merges, which is not built yet.

        options:
          --cases N          how many cases (default %3$,d)
          --seed S           the seed (default: random, printed); the same seed replays the same run
          --strategy NAMES   only these strategies, comma-separated (default: all)
          --first-case I     start at case I of the seed's sequence (with --cases 1: replay one failure)

        Exit status: 0 when no law failed, 1 when one did, 2 on a bad command line.
        """
        .formatted(Main.PROGRAM, String.join(", ", MergeFuzzer.STRATEGIES), DEFAULT_CASES);
  }

  @Override
  public int run(List<String> args, PrintStream out, PrintStream err) throws UsageException {
    Options options = Options.parse(args, Set.of("cases", "seed", "strategy", "first-case", "mutant"), Set.of());
    long cases = number(options, "cases", DEFAULT_CASES);
    long first = number(options, "first-case", 0);
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
    return fuzzer.run(out).passed() ? OK : FAILED;
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
