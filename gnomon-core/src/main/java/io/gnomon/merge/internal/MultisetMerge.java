package io.gnomon.merge.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The union rule for arrays, as multisets with a stable order. For each distinct element (compared by {@link
 * Values#key}) with counts b, o, t in base, ours and theirs, the merged count r is:
 *
 * <ul>
 *   <li>o = b: t; t = b: o; o = t: o (one-sided changes win, equal changes converge);
 *   <li>both added (o &gt; b, t &gt; b): max(o, t); both removed (o &lt; b, t &lt; b): min(o, t);
 *   <li>one added, the other removed: o + t − b (each side's delta applies).
 * </ul>
 *
 * <p>Order: first the base's elements that are kept, in base order (the first r occurrences when fewer are kept);
 * then ours' additions in ours' order; then theirs' additions in theirs' order, up to the merged counts.
 */
public final class MultisetMerge {
  private MultisetMerge() {}

  /** Merges three lists. */
  public static List<Object> merge(List<?> base, List<?> ours, List<?> theirs) {
    Map<Object, int[]> counts = new HashMap<>();
    count(counts, base, 0);
    count(counts, ours, 1);
    count(counts, theirs, 2);
    for (int[] c : counts.values()) {
      c[3] = mergedCount(c[0], c[1], c[2]);
    }
    List<Object> out = new ArrayList<>(Math.max(ours.size(), theirs.size()));
    // c[4] = emitted so far, c[5] = occurrences seen in the list being walked
    for (Object e : base) {
      int[] c = counts.get(Values.key(e));
      if (c[4] < Math.min(c[3], c[0])) {
        c[4]++;
        out.add(e);
      }
    }
    additions(counts, ours, out);
    for (int[] c : counts.values()) {
      c[5] = 0;
    }
    additions(counts, theirs, out);
    return out;
  }

  /** The merged count of one element. */
  public static int mergedCount(int b, int o, int t) {
    if (o == b) {
      return t;
    }
    if (t == b || o == t) {
      return o;
    }
    if (o > b && t > b) {
      return Math.max(o, t);
    }
    if (o < b && t < b) {
      return Math.min(o, t);
    }
    return o + t - b;
  }

  private static void additions(Map<Object, int[]> counts, List<?> side, List<Object> out) {
    for (Object e : side) {
      int[] c = counts.get(Values.key(e));
      c[5]++;
      if (c[5] > c[0] && c[4] < c[3]) {
        c[4]++;
        out.add(e);
      }
    }
  }

  private static void count(Map<Object, int[]> counts, List<?> list, int slot) {
    for (Object e : list) {
      counts.computeIfAbsent(Values.key(e), k -> new int[6])[slot]++;
    }
  }
}
