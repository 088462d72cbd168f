package io.gnomon.merge.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The difference between two sequences of lines (as interned ints), as hunks {@code {baseStart, baseEnd, sideStart,
 * sideEnd}}: base lines {@code [baseStart, baseEnd)} are replaced by side lines {@code [sideStart, sideEnd)}. Hunks are
 * sorted and separated by at least one unchanged line. A longest common subsequence after trimming the common prefix
 * and suffix; when the middle parts are so long that the table would exceed {@link #MAX_CELLS}, the middle is one hunk
 * (coarser, so more edits overlap and conflict, never a wrong merge).
 */
public final class LineDiff {
  /** The largest LCS table, in cells (about 16 MB of ints). */
  public static final int MAX_CELLS = 4_000_000;

  private LineDiff() {}

  /** The hunks that turn {@code base} into {@code side}. */
  public static List<int[]> hunks(int[] base, int[] side) {
    int n = base.length;
    int m = side.length;
    int p = 0;
    while (p < n && p < m && base[p] == side[p]) {
      p++;
    }
    int s = 0;
    while (s < n - p && s < m - p && base[n - 1 - s] == side[m - 1 - s]) {
      s++;
    }
    int bn = n - p - s;
    int sn = m - p - s;
    List<int[]> hunks = new ArrayList<>();
    if (bn == 0 && sn == 0) {
      return hunks;
    }
    if (bn == 0 || sn == 0 || (long) (bn + 1) * (sn + 1) > MAX_CELLS) {
      hunks.add(new int[] {p, p + bn, p, p + sn});
      return hunks;
    }
    int w = sn + 1;
    int[] lcs = new int[(bn + 1) * w]; // lcs[i*w+j] = LCS of base[p+i..] and side[p+j..]
    for (int i = bn - 1; i >= 0; i--) {
      for (int j = sn - 1; j >= 0; j--) {
        lcs[i * w + j] = base[p + i] == side[p + j]
            ? lcs[(i + 1) * w + j + 1] + 1
            : Math.max(lcs[(i + 1) * w + j], lcs[i * w + j + 1]);
      }
    }
    int i = 0;
    int j = 0;
    int hi = -1;
    int hj = -1;
    while (i < bn && j < sn) {
      if (base[p + i] == side[p + j]) {
        if (hi >= 0) {
          hunks.add(new int[] {p + hi, p + i, p + hj, p + j});
          hi = -1;
        }
        i++;
        j++;
        continue;
      }
      if (hi < 0) {
        hi = i;
        hj = j;
      }
      if (lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
        i++;
      } else {
        j++;
      }
    }
    if (hi < 0 && (i < bn || j < sn)) {
      hi = i;
      hj = j;
    }
    if (hi >= 0) {
      hunks.add(new int[] {p + hi, p + bn, p + hj, p + sn});
    }
    return hunks;
  }
}
