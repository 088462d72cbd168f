package io.gnomon.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;

/** The jmh group: runs {@link CoordinateBenchmark} and reports it in the bench's own rows. */
final class JmhGroup {
  private JmhGroup() {}

  static List<Metric> run(Budget budget, Path out) {
    Options options = new OptionsBuilder()
        .include(CoordinateBenchmark.class.getName() + "\\.")
        .forks(1)
        .warmupIterations(budget.quick() ? 1 : 3)
        .warmupTime(TimeValue.seconds(1))
        .measurementIterations(budget.quick() ? 2 : 5)
        .measurementTime(TimeValue.seconds(budget.quick() ? 1 : 2))
        .jvmArgsAppend("-Xmx512m")
        .result(out.resolve("jmh-raw.json").toString())
        .resultFormat(org.openjdk.jmh.results.format.ResultFormatType.JSON)
        .build();
    Collection<RunResult> results;
    try {
      out.toFile().mkdirs();
      results = new Runner(options).run();
    } catch (RunnerException e) {
      throw new IllegalStateException("JMH failed: " + e.getMessage(), e);
    }
    Map<String, Result<?>> byName = new HashMap<>();
    for (RunResult r : results) {
      String label = r.getParams().getBenchmark();
      byName.put(label.substring(label.lastIndexOf('.') + 1), r.getPrimaryResult());
    }
    List<Metric> rows = new ArrayList<>();
    for (String name : List.of("parse", "format", "roundTrip")) {
      Result<?> r = byName.get(name);
      if (r != null) {
        rows.add(Metric.single("coordinate_" + snake(name) + "_ns", r.getScore(), "ns", null, null,
            "JMH average time, Coordinate." + name + error(r)));
      }
    }
    Result<?> capture = byName.get("capture");
    Result<?> selectOne = byName.get("selectOne");
    if (capture != null && selectOne != null) {
      rows.add(Metric.single("coordinate_capture_vs_select1_jdbc", capture.getScore(), "us", selectOne.getScore(),
          Target.atMost(1.1), "JMH average time per JDBC round trip on one connection, prepared: select"
              + " gnomon.coordinate() + Coordinate.parse" + error(capture) + ", against select 1" + error(selectOne)));
    }
    return rows;
  }

  private static String error(Result<?> r) {
    double e = r.getScoreError();
    return Double.isNaN(e) ? "" : String.format(Locale.ROOT, " (+-%.3g %s, 99.9%% CI)", e, r.getScoreUnit());
  }

  private static String snake(String camel) {
    return camel.replaceAll("([a-z])([A-Z])", "$1_$2").toLowerCase(Locale.ROOT);
  }
}
