package io.gnomon.checker.fuzz;

import io.gnomon.merge.Conflict;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An independent expectation for the text strategy, without a diff algorithm. It applies when every base line is
 * unique, each side keeps base lines in their order, and the lines a side adds appear neither in the base nor on the
 * other side. Each side's edit is then a set of regions of the base (replaced by that side's new lines). If no region
 * of ours overlaps or touches a region of theirs, the merge must resolve to the base with both sides' regions applied;
 * if some do (and they are not the same deletion), it must be a conflict.
 */
final class TextOracle {
  private TextOracle() {}

  /** A region: base lines [from, to) replaced by {@code lines}. */
  private record Region(int from, int to, List<String> lines) {}

  static String check(Object b, Object o, Object t, Resolution r) {
    if (!(o instanceof String os && t instanceof String ts) || !(b == null || b instanceof String)) {
      return null;
    }
    List<String> base = lines(b == null ? "" : (String) b);
    Map<String, Integer> index = new HashMap<>();
    for (int i = 0; i < base.size(); i++) {
      if (index.put(base.get(i), i) != null) {
        return null; // repeated base lines: the oracle does not apply
      }
    }
    List<String> ol = lines(os);
    List<String> tl = lines(ts);
    Set<String> oFresh = fresh(ol, index);
    Set<String> tFresh = fresh(tl, index);
    for (String line : oFresh) {
      if (tFresh.contains(line)) {
        return null;
      }
    }
    List<Region> or = regions(ol, index, base.size());
    List<Region> tr = regions(tl, index, base.size());
    if (or == null || tr == null) {
      return null;
    }
    for (Region x : or) {
      for (Region y : tr) {
        if (x.from <= y.to && y.from <= x.to) {
          if (x.equals(y)) {
            continue; // the same deletion on both sides converges
          }
          return r instanceof Conflict ? null
              : "edits at base lines " + (x.from + 1) + "–" + x.to + " (ours) and " + (y.from + 1) + "–" + y.to
                  + " (theirs) overlap or touch, so the merge must conflict; it gave " + Laws.show(r);
        }
      }
    }
    StringBuilder expected = new StringBuilder();
    List<Region> all = new ArrayList<>(or);
    for (Region y : tr) {
      if (!or.contains(y)) {
        all.add(y);
      }
    }
    all.sort((x, y) -> Integer.compare(x.from, y.from));
    int pos = 0;
    for (Region x : all) {
      for (int i = pos; i < x.from; i++) {
        expected.append(base.get(i));
      }
      x.lines.forEach(expected::append);
      pos = x.to;
    }
    for (int i = pos; i < base.size(); i++) {
      expected.append(base.get(i));
    }
    if (r instanceof Resolved v && expected.toString().equals(v.value())) {
      return null;
    }
    return "separate edits must merge to " + FuzzCase.show(expected.toString()) + " but the merge gave " + Laws.show(r);
  }

  private static Set<String> fresh(List<String> side, Map<String, Integer> index) {
    Set<String> s = new HashSet<>();
    for (String line : side) {
      if (!index.containsKey(line)) {
        s.add(line);
      }
    }
    return s;
  }

  /** The side's regions, or null when it reorders or repeats base lines. */
  private static List<Region> regions(List<String> side, Map<String, Integer> index, int n) {
    List<Region> regions = new ArrayList<>();
    int prev = -1;
    List<String> added = new ArrayList<>();
    for (String line : side) {
      Integer i = index.get(line);
      if (i == null) {
        added.add(line);
        continue;
      }
      if (i <= prev) {
        return null;
      }
      if (i > prev + 1 || !added.isEmpty()) {
        regions.add(new Region(prev + 1, i, added));
        added = new ArrayList<>();
      }
      prev = i;
    }
    if (n > prev + 1 || !added.isEmpty()) {
      regions.add(new Region(prev + 1, n, added));
    }
    return regions;
  }

  static List<String> lines(String s) {
    List<String> l = new ArrayList<>();
    int start = 0;
    while (start < s.length()) {
      int nl = s.indexOf('\n', start);
      int end = nl < 0 ? s.length() : nl + 1;
      l.add(s.substring(start, end));
      start = end;
    }
    return l;
  }
}
