package io.gnomon.checker.report;

import io.gnomon.checker.CheckConfig;
import io.gnomon.checker.CheckResult;
import io.gnomon.checker.verify.AmcheckRun;
import io.gnomon.checker.verify.Verification;
import io.gnomon.checker.verify.Violation;
import java.util.List;
import java.util.Map;

/** The report's {@code index.html}: one self-contained page, no script, plots as inline SVG. */
final class Html {
  private Html() {}

  static String page(CheckConfig config, CheckResult r, Series s, Map<String, String> env, List<String> notes,
      List<AmcheckRun> amchecks) {
    StringBuilder b = new StringBuilder();
    String color = r.status() == CheckResult.VALID ? "#2ca02c" : "#d62728";
    b.append("<!doctype html>\n<html><head><meta charset='utf-8'><title>Gnomon check, seed ").append(config.seed())
        .append("</title>\n<style>body{font-family:sans-serif;max-width:960px;margin:2em auto;color:#222}"
            + "td,th{padding:2px 10px;text-align:left;vertical-align:top}th{background:#eee}"
            + "code{background:#f4f4f4}.verdict{font-size:1.4em;font-weight:bold;color:" + color + "}</style>"
            + "</head><body>\n");
    b.append("<h1>Gnomon history check</h1>\n<p class='verdict'>").append(Svg.esc(r.verdict())).append("</p>\n");
    b.append("<p>Repeat it: <code>").append(Svg.esc(Report.replay(config))).append("</code>. History: <a href='"
        + "history.jsonl'>history.jsonl</a> (one JSON line per operation); machine-readable result: <a href='"
        + "result.json'>result.json</a>.</p>\n");
    Verification v = r.verification();
    if (v != null && !v.valid()) {
      b.append("<h2>Violations</h2>\n<table><tr><th>kind</th><th>count</th><th>witness</th></tr>\n");
      for (Map.Entry<String, Long> e : v.byKind().entrySet()) {
        Violation w = v.first(e.getKey());
        b.append("<tr><td>").append(Svg.esc(e.getKey())).append("</td><td>").append(e.getValue()).append("</td><td>")
            .append(w == null ? "" : Svg.esc(w.witness())).append("</td></tr>\n");
      }
      b.append("</table>\n");
    }
    if (v != null && !v.losses().isEmpty()) {
      b.append("<h2>Lost by design</h2>\n<p>Not violations: what an asynchronous failover or a crash may lose by "
          + "design (commits acknowledged before an asynchronous failover, scratch branches and the reads made on them)"
          + ".</p>\n<table><tr><th>kind</th><th>what</th></tr>\n");
      for (Violation l : v.losses()) {
        b.append("<tr><td>").append(Svg.esc(l.kind())).append("</td><td>").append(Svg.esc(l.witness()))
            .append("</td></tr>\n");
      }
      b.append("</table>\n");
    }
    b.append("<h2>Throughput and latency</h2>\n<p>Shaded bands are faults, from injection until the server served "
        + "again (hover for details).</p>\n");
    b.append(Svg.plot("Transactions ending per second", "txn/s", s.seconds, List.of(
        new Svg.Line("committed", "#1f77b4", s.committed), new Svg.Line("failed or rolled back", "#7f7f7f", s.failed),
        new Svg.Line("unknown", "#d62728", s.unknown)), s.faults));
    b.append(Svg.plot("Latency of committed transactions", "ms", s.seconds, List.of(
        new Svg.Line("p50", "#1f77b4", s.p50), new Svg.Line("p95", "#ff7f0e", s.p95),
        new Svg.Line("max", "#d62728", s.max)), s.faults));
    b.append("<h2>Counts</h2>\n<table>\n");
    r.counts().forEach((k, x) -> row(b, k, String.valueOf(x)));
    if (v != null) {
      v.checked().forEach((k, x) -> row(b, k, String.valueOf(x)));
    }
    b.append("</table>\n<h2>Faults</h2>\n<table><tr><th>from</th><th>to</th><th>kind</th><th>what</th></tr>\n");
    for (Series.Fault f : s.faults) {
      b.append(String.format(java.util.Locale.ROOT, "<tr><td>%.1f s</td><td>%.1f s</td><td>%s</td><td>%s</td></tr>%n",
          f.from(), f.to(), Svg.esc(f.kind()), Svg.esc(f.detail())));
    }
    b.append("</table>\n<h2>pg_amcheck</h2>\n<table>\n");
    for (AmcheckRun a : amchecks) {
      row(b, a.when(), a.status() + (a.output().isBlank() ? "" : ": " + a.output()));
    }
    b.append("</table>\n");
    if (!notes.isEmpty()) {
      b.append("<h2>Notes</h2>\n<ul>\n");
      notes.forEach(n -> b.append("<li>").append(Svg.esc(n)).append("</li>\n"));
      b.append("</ul>\n");
    }
    b.append("<h2>Server</h2>\n<table>\n");
    env.forEach((k, x) -> row(b, k, x));
    b.append("</table>\n<p>How to read this page: docs/checker.md in the repository.</p>\n</body></html>\n");
    return b.toString();
  }

  private static void row(StringBuilder b, String k, String v) {
    b.append("<tr><th>").append(Svg.esc(k)).append("</th><td>").append(Svg.esc(v)).append("</td></tr>\n");
  }
}
