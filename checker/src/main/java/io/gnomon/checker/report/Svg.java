package io.gnomon.checker.report;

import java.util.List;
import java.util.Locale;

/** Line plots over time as inline SVG, with faults drawn as shaded bands: no script, no external file. */
final class Svg {
  private static final int W = 900;
  private static final int H = 260;
  private static final int L = 60;
  private static final int R = 20;
  private static final int T = 20;
  private static final int B = 40;

  private Svg() {}

  record Line(String name, String color, double[] values) {}

  static String plot(String title, String unit, int seconds, List<Line> lines, List<Series.Fault> faults) {
    double top = 1;
    for (Line l : lines) {
      top = Math.max(top, Series.top(l.values()));
    }
    top = nice(top);
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "<svg xmlns='http://www.w3.org/2000/svg' width='%d' height='%d' "
        + "font-family='sans-serif' font-size='11'>%n", W, H));
    b.append(String.format(Locale.ROOT, "<text x='%d' y='14' font-size='13' font-weight='bold'>%s</text>%n", L,
        esc(title)));
    double span = Math.max(1, seconds);
    for (Series.Fault f : faults) {
      double x0 = x(f.from(), span);
      double x1 = Math.max(x0 + 2, x(f.to(), span));
      b.append(String.format(Locale.ROOT, "<rect x='%.1f' y='%d' width='%.1f' height='%d' fill='%s' opacity='0.25'>"
          + "<title>%s</title></rect>%n", x0, T, x1 - x0, H - T - B, color(f.kind()), esc(f.kind() + ": " + f.detail())));
      b.append(String.format(Locale.ROOT, "<text x='%.1f' y='%d' fill='%s'>%s</text>%n", x0 + 2, T + 12,
          color(f.kind()), esc(f.kind())));
    }
    for (int i = 0; i <= 4; i++) {
      double v = top * i / 4;
      double y = y(v, top);
      b.append(String.format(Locale.ROOT, "<line x1='%d' x2='%d' y1='%.1f' y2='%.1f' stroke='#ddd'/>"
          + "<text x='%d' y='%.1f' text-anchor='end'>%s</text>%n", L, W - R, y, y, L - 4, y + 4, num(v)));
    }
    int step = Math.max(1, seconds / 10);
    for (int s = 0; s <= seconds; s += step) {
      b.append(String.format(Locale.ROOT, "<text x='%.1f' y='%d' text-anchor='middle'>%ds</text>%n", x(s, span),
          H - B + 14, s));
    }
    b.append(String.format(Locale.ROOT, "<text x='%d' y='%d'>%s</text>%n", 4, T + 8, esc(unit)));
    int lx = L + 120;
    for (Line l : lines) {
      StringBuilder pts = new StringBuilder();
      for (int s = 0; s < l.values().length; s++) {
        pts.append(String.format(Locale.ROOT, "%.1f,%.1f ", x(s + 0.5, span), y(l.values()[s], top)));
      }
      b.append(String.format(Locale.ROOT, "<polyline fill='none' stroke='%s' stroke-width='1.5' points='%s'/>%n",
          l.color(), pts));
      b.append(String.format(Locale.ROOT, "<rect x='%d' y='%d' width='10' height='3' fill='%s'/>"
          + "<text x='%d' y='%d'>%s</text>%n", lx, H - 12, l.color(), lx + 14, H - 8, esc(l.name())));
      lx += 20 + 7 * l.name().length();
    }
    b.append(String.format(Locale.ROOT, "<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#888'/>%n", L,
        T, W - L - R, H - T - B));
    return b.append("</svg>\n").toString();
  }

  private static double x(double second, double span) {
    return L + (W - L - R) * second / span;
  }

  private static double y(double v, double top) {
    return T + (H - T - B) * (1 - v / top);
  }

  private static double nice(double v) {
    double p = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 2, 5, 10}) {
      if (m * p >= v) {
        return m * p;
      }
    }
    return 10 * p;
  }

  static String color(String kind) {
    return switch (kind) {
      case "kill" -> "#d62728";
      case "restart" -> "#9467bd";
      default -> "#ff7f0e";
    };
  }

  private static String num(double v) {
    return v >= 100 || v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.1f", v);
  }

  static String esc(String s) {
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("'", "&#39;").replace("\"",
        "&quot;");
  }
}
