package io.gnomon.bench.checker;

import io.gnomon.checker.CheckConfig;
import io.gnomon.checker.CheckResult;
import io.gnomon.checker.Checker;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The checker group's measurements, each from whole {@code ./gnomon check} runs without faults and without branches,
 * logged or scratch (merges may pause the workload), on their own throwaway clusters: how fast the verifier checks a history ({@code checked_ops_per_s}), and the workload's
 * throughput with the history logged against the same workload with logging off, in pairs whose order alternates
 * ({@code workload_tps_logging_on_vs_off}).
 */
public final class CheckerBench {
  /** What was measured: ops verified per second, and per pair [tps logging on, tps logging off]. */
  public record Figures(double checkedOpsPerSecond, long opsVerified, List<double[]> tpsPairs, String verdict) {}

  private CheckerBench() {}

  public static Figures run(Duration duration, int pairs, Path out, PrintStream log) {
    double checked = 0;
    long ops = 0;
    String verdict = "";
    List<double[]> tps = new ArrayList<>();
    // a warm-up run, not measured: the first check in a JVM also pays for class loading and the JIT
    Checker.run(CheckConfig.builder().duration(Duration.ofSeconds(5)).faults(List.of()).branches(0).scratch(0)
        .seed(999).reportDir(out.resolve("checker-warm-up")).build(), log);
    for (int i = 0; i < pairs; i++) {
      boolean onFirst = i % 2 == 0;
      double on = 0;
      double off = 0;
      for (int k = 0; k < 2; k++) {
        boolean logging = (k == 0) == onFirst;
        // main tables only: a merge pauses the workload for a time that varies more than logging costs
        CheckConfig config = CheckConfig.builder().duration(duration).faults(List.of()).branches(0).scratch(0)
            .seed(1000 + i).logging(logging).reportDir(out.resolve("checker-run-" + i + (logging ? "-on" : "-off"))).build();
        CheckResult r = Checker.run(config, log);
        if (r.status() == CheckResult.COULD_NOT_RUN) {
          throw new IllegalStateException("checker run failed: " + r.verdict());
        }
        double seconds = ((Number) r.counts().get("workload seconds")).doubleValue();
        double t = ((Number) r.counts().get("transactions committed")).doubleValue() / seconds;
        if (logging) {
          on = t;
          checked = ((Number) r.counts().get("ops verified per second")).doubleValue();
          ops = ((Number) r.counts().get("ops logged")).longValue();
          verdict = r.verdict();
        } else {
          off = t;
        }
      }
      tps.add(new double[] {on, off});
    }
    return new Figures(checked, ops, tps, verdict);
  }
}
