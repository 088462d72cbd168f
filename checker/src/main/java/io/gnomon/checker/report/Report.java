package io.gnomon.checker.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.gnomon.checker.CheckConfig;
import io.gnomon.checker.CheckResult;
import io.gnomon.checker.history.History;
import io.gnomon.checker.verify.AmcheckRun;
import io.gnomon.checker.verify.Verification;
import io.gnomon.checker.verify.Violation;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A check's report: {@code result.json} (machine-readable), {@code index.html} (self-contained: the verdict, counts,
 * violations with their witnesses, SVG plots of throughput and latency with the faults marked, the server and its
 * settings) beside the history file {@code history.jsonl}; and the summary on the console.
 */
public final class Report {
  private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);

  private Report() {}

  public static void write(CheckConfig config, CheckResult r, History history, Map<String, String> environment,
      List<String> notes, List<AmcheckRun> amchecks) {
    Path dir = config.reportDir();
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("verdict", r.verdict());
    json.put("status", r.status());
    json.put("seed", config.seed());
    json.put("replay", replay(config));
    Map<String, Object> cfg = new LinkedHashMap<>();
    cfg.put("duration_ms", config.duration().toMillis());
    cfg.put("sessions", config.sessions());
    cfg.put("tables", config.tables());
    cfg.put("branches", config.branches());
    cfg.put("scratch", config.scratch());
    cfg.put("standby", config.standby());
    cfg.put("isolations", config.isolations());
    cfg.put("faults", config.faults());
    cfg.put("mutant", config.mutant() == null ? null : config.mutant().cliName());
    cfg.put("c_module", config.cModule());
    json.put("config", cfg);
    json.put("counts", r.counts());
    Verification v = r.verification();
    if (v != null) {
      json.put("violations", v.byKind());
      json.put("witnesses", v.witnesses());
      json.put("checked", v.checked());
      json.put("losses", v.losses());
    }
    json.put("amcheck", amchecks);
    json.put("notes", notes);
    json.put("environment", environment);
    json.put("files", Map.of("history", "history.jsonl", "html", "index.html"));
    try {
      Files.createDirectories(dir);
      Files.writeString(dir.resolve("result.json"), JSON.writeValueAsString(json), StandardCharsets.UTF_8);
      Files.writeString(dir.resolve("index.html"), Html.page(config, r, new Series(history), environment, notes,
          amchecks), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the report in " + dir + ": " + e.getMessage(), e);
    }
  }

  /** The command line that repeats the run's choices. */
  static String replay(CheckConfig c) {
    return "./gnomon check --seed " + c.seed() + " --duration " + c.duration().toMillis() + "ms --sessions "
        + c.sessions() + " --tables " + c.tables() + " --branches " + c.branches() + " --scratch " + c.scratch() + " --isolation " + String.join(",", c.isolations())
        + " --faults " + (c.faults().isEmpty() ? "none" : String.join(",", c.faults()))
        + " --standby " + c.standby() + (c.mutant() == null ? "" : " --mutant " + c.mutant().cliName())
        + (c.cModule() == null ? "" : " --c-module " + c.cModule());
  }

  /** The summary on the console: verdict, counts, violations with their first witness, where the report is. */
  public static void console(PrintStream out, CheckConfig config, CheckResult r, List<String> notes) {
    out.println();
    for (Map.Entry<String, Object> e : r.counts().entrySet()) {
      out.printf("  %-52s %s%n", e.getKey(), e.getValue());
    }
    Verification v = r.verification();
    if (v != null) {
      for (Map.Entry<String, Long> e : v.checked().entrySet()) {
        out.printf("  %-52s %s%n", e.getKey(), e.getValue());
      }
      for (Map.Entry<String, Long> e : v.byKind().entrySet()) {
        Violation w = v.first(e.getKey());
        out.println();
        out.println("  VIOLATION " + e.getKey() + " x" + e.getValue() + ":");
        out.println("    " + (w == null ? "" : w.witness()));
      }
    }
    if (v != null && !v.losses().isEmpty()) {
      out.println();
      v.losses().stream().limit(5).forEach(l -> out.println("  lost by design (" + l.kind() + "): " + l.witness()));
      if (v.losses().size() > 5) {
        out.println("  ... " + (v.losses().size() - 5) + " more losses listed in the report");
      }
    }
    for (String n : notes) {
      out.println("  note: " + n);
    }
    out.println();
    out.println(r.verdict());
    out.println("seed " + config.seed() + "; report: " + config.reportDir().toAbsolutePath().resolve("index.html"));
  }
}
