package io.gnomon.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** Writes a group's rows as {@code GROUP.json} and prints them as a table. */
final class Report {
  private Report() {}

  static void write(Path dir, String group, List<Metric> rows) {
    StringBuilder b = new StringBuilder("[\n");
    for (int i = 0; i < rows.size(); i++) {
      b.append("  ").append(rows.get(i).toJson()).append(i + 1 < rows.size() ? ",\n" : "\n");
    }
    b.append("]\n");
    Path file = dir.resolve(group + ".json");
    try {
      Files.createDirectories(dir);
      Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  /** The rows as the Markdown table docs/performance.md shows, written to {@code GROUP.md}. */
  static void markdown(Path dir, String group, List<Metric> rows) {
    StringBuilder b = new StringBuilder();
    b.append("| metric | value | baseline | ratio | spread | best-of ratio | target | met? |\n");
    b.append("|---|---:|---:|---:|---:|---:|---|---|\n");
    for (Metric m : rows) {
      Boolean met = m.met();
      b.append("| `").append(m.metric()).append("` | ").append(num(m.value())).append(' ').append(m.unit())
          .append(" | ").append(m.baseline() == null ? "" : num(m.baseline()) + " " + m.unit())
          .append(" | ").append(m.ratio() == null ? "" : String.format(Locale.ROOT, "%.2f", m.ratio()))
          .append(" | ").append(m.spread())
          .append(" | ").append(m.bestRatio() == null ? "" : String.format(Locale.ROOT, "%.2f", m.bestRatio()))
          .append(" | ").append(m.target() == null ? "" : m.target().toString().replace("<=", "≤").replace(">=", "≥"))
          .append(" | ").append(met == null ? "" : met ? "yes" : "**no**").append(" |\n");
    }
    Path file = dir.resolve(group + ".md");
    try {
      Files.createDirectories(dir);
      Files.writeString(file, b.toString(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }

  static void print(PrintStream out, String group, List<Metric> rows) {
    out.println();
    out.println("== " + group + " (ratio = value / baseline, medians; spread = smallest-largest per-repeat ratio;"
        + " best = best repeat / best repeat)");
    String fmt = "%-44s %12s %12s %-6s %7s %11s %6s  %-10s %s%n";
    out.printf(Locale.ROOT, fmt, "metric", "value", "baseline", "unit", "ratio", "spread", "best", "target", "met");
    for (Metric m : rows) {
      Boolean met = m.met();
      out.printf(Locale.ROOT, fmt, m.metric(), num(m.value()), m.baseline() == null ? "" : num(m.baseline()),
          m.unit(), m.ratio() == null ? "" : String.format(Locale.ROOT, "%.2f", m.ratio()), m.spread(),
          m.bestRatio() == null ? "" : String.format(Locale.ROOT, "%.2f", m.bestRatio()),
          m.target() == null ? "" : shortTarget(m.target()), met == null ? "" : met ? "yes" : "NO");
    }
  }

  private static String shortTarget(Target t) {
    return t.kind() == Target.Kind.NO_SLOWER ? "~1.00" : t.toString();
  }

  static String num(double d) {
    if (Math.abs(d) >= 1000) {
      return String.format(Locale.ROOT, "%,.0f", d);
    }
    if (Math.abs(d) >= 10) {
      return String.format(Locale.ROOT, "%.1f", d);
    }
    return String.format(Locale.ROOT, "%.3f", d);
  }
}
