package io.gnomon.merge.internal;

import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.Conflict;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code text}: a line-based three-way merge, like diff3. Lines end after each {@code \n} (the last line may lack
 * one, and then differs from the same line with one). Each side's hunks against the base ({@link LineDiff}) are
 * grouped: hunks of the two sides that overlap or touch (no unchanged base line between them) form one group. A group
 * with hunks of one side takes that side's lines; a group with both takes them if both sides produce the same lines
 * for it, and is a conflict otherwise. Unchanged base lines are copied. NULL base is empty text; NULL on a side
 * conflicts.
 */
public final class TextStrategy implements Strategy {
  public static final TextStrategy INSTANCE = new TextStrategy();

  private TextStrategy() {}

  @Override
  public String name() {
    return "text";
  }

  @Override
  public boolean supports(ColumnType type) {
    return type.kind() == ColumnType.Kind.TEXT;
  }

  @Override
  public Resolution resolve(Column column, Object base, Object ours, Object theirs) {
    if (ours == null || theirs == null) {
      return new Conflict(column.name(), base, ours, theirs, name(),
          (ours == null ? "ours" : "theirs") + " set " + column.name() + " to NULL while the other side changed it");
    }
    List<String> lines = new ArrayList<>();
    Map<String, Integer> ids = new HashMap<>();
    int[] b = intern(base == null ? "" : text(column, base), lines, ids);
    int[] o = intern(text(column, ours), lines, ids);
    int[] t = intern(text(column, theirs), lines, ids);
    List<int[]> ho = LineDiff.hunks(b, o);
    List<int[]> ht = LineDiff.hunks(b, t);
    StringBuilder out = new StringBuilder();
    List<String> conflicts = new ArrayList<>();
    int pos = 0;
    int i = 0;
    int j = 0;
    while (i < ho.size() || j < ht.size()) {
      boolean oursFirst = j >= ht.size() || (i < ho.size() && ho.get(i)[0] <= ht.get(j)[0]);
      int[] first = oursFirst ? ho.get(i) : ht.get(j);
      int gs = first[0];
      int ge = first[1];
      int i0 = i;
      int j0 = j;
      boolean grew = true;
      while (grew) {
        grew = false;
        if (i < ho.size() && ho.get(i)[0] <= ge) {
          ge = Math.max(ge, ho.get(i++)[1]);
          grew = true;
        }
        if (j < ht.size() && ht.get(j)[0] <= ge) {
          ge = Math.max(ge, ht.get(j++)[1]);
          grew = true;
        }
      }
      append(out, lines, b, pos, gs);
      boolean hasOurs = i > i0;
      boolean hasTheirs = j > j0;
      if (hasOurs && hasTheirs) {
        String mine = side(lines, b, o, ho.subList(i0, i), gs, ge);
        String yours = side(lines, b, t, ht.subList(j0, j), gs, ge);
        if (!mine.equals(yours)) {
          conflicts.add(gs == ge ? "different lines inserted after base line " + gs
              : "base lines " + (gs + 1) + (ge > gs + 1 ? "–" + ge : "") + " changed differently");
        }
        out.append(mine);
      } else if (hasOurs) {
        out.append(side(lines, b, o, ho.subList(i0, i), gs, ge));
      } else {
        out.append(side(lines, b, t, ht.subList(j0, j), gs, ge));
      }
      pos = ge;
    }
    append(out, lines, b, pos, b.length);
    if (conflicts.isEmpty()) {
      return new Resolved(out.toString());
    }
    return new Conflict(column.name(), base, ours, theirs, name(), "text: " + String.join("; ", conflicts));
  }

  /** One side's lines for base span [gs, ge), given that side's hunks inside the span. */
  private static String side(List<String> lines, int[] b, int[] s, List<int[]> hunks, int gs, int ge) {
    StringBuilder out = new StringBuilder();
    int cur = gs;
    for (int[] h : hunks) {
      append(out, lines, b, cur, h[0]);
      append(out, lines, s, h[2], h[3]);
      cur = h[1];
    }
    append(out, lines, b, cur, ge);
    return out.toString();
  }

  private static void append(StringBuilder out, List<String> lines, int[] seq, int from, int to) {
    for (int k = from; k < to; k++) {
      out.append(lines.get(seq[k]));
    }
  }

  /** Splits text into lines (each keeps its {@code \n}) and interns them as ints. */
  private static int[] intern(String text, List<String> lines, Map<String, Integer> ids) {
    int count = 0;
    for (int k = 0; k < text.length(); k++) {
      if (text.charAt(k) == '\n') {
        count++;
      }
    }
    if (!text.isEmpty() && text.charAt(text.length() - 1) != '\n') {
      count++;
    }
    int[] seq = new int[count];
    int start = 0;
    for (int k = 0; k < count; k++) {
      int nl = text.indexOf('\n', start);
      int end = nl < 0 ? text.length() : nl + 1;
      String line = text.substring(start, end);
      Integer id = ids.get(line);
      if (id == null) {
        id = lines.size();
        lines.add(line);
        ids.put(line, id);
      }
      seq[k] = id;
      start = end;
    }
    return seq;
  }

  private static String text(Column column, Object v) {
    if (v instanceof String s) {
      return s;
    }
    throw new IllegalArgumentException(
        "column " + column.name() + " (" + column.type() + ") holds " + Values.describe(v) + ", not a String");
  }

  @Override
  public String toString() {
    return name();
  }
}
