package io.gnomon.checker.verify;

import io.gnomon.checker.history.Op;
import io.gnomon.checker.history.Txn;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A merge loses nothing: for every merge of a branch into main, each key's result (main read in the merge's own
 * transaction, after it) is what the three-way rule gives from the base (main at the branch's cutoff), ours (main
 * before the merge) and theirs (the branch), all read in that transaction: a one-sided change wins, equal changes
 * converge, a column both sides changed takes theirs (the checker declares strategy theirs), and an update wins over
 * a delete (rule update_wins). So every change of each side is in the result.
 */
final class MergeCheck {
  private MergeCheck() {}

  static void run(Context c, Findings f) {
    long keys = 0;
    long merges = 0;
    for (Txn t : c.o.history().txns()) {
      Op merge = null;
      Map<Integer, Map<String, Map<Long, Long>>> sides = new TreeMap<>();
      for (Op op : t.ops()) {
        if (op.op().startsWith("merge_") && !"merge_write".equals(op.op()) && op.rows() != null) {
          Map<Long, Long> rows = new TreeMap<>();
          for (long[] r : op.rows()) {
            rows.put(r[0], r[1]);
          }
          sides.computeIfAbsent(op.tbl(), x -> new HashMap<>()).put(op.op().substring("merge_".length()), rows);
        } else if ("merge".equals(op.op())) {
          merge = op;
        }
      }
      if (merge == null) {
        continue;
      }
      merges++;
      Op m = merge;
      for (Map.Entry<Integer, Map<String, Map<Long, Long>>> e : sides.entrySet()) {
        Map<String, Map<Long, Long>> s = e.getValue();
        if (!s.containsKey("result")) {
          continue; // the merge failed before it was read back
        }
        Map<Long, Long> base = s.get("base");
        Map<Long, Long> ours = s.get("ours");
        Map<Long, Long> theirs = s.get("theirs");
        Map<Long, Long> result = s.get("result");
        TreeSet<Long> all = new TreeSet<>();
        for (Map<Long, Long> side : List.of(base, ours, theirs, result)) {
          all.addAll(side.keySet());
        }
        int tbl = e.getKey();
        for (long k : all) {
          keys++;
          Long b = base.get(k);
          Long o = ours.get(k);
          Long th = theirs.get(k);
          Long want = expected(b, o, th);
          Long got = result.get(k);
          if (!Objects.equals(want, got)) {
            String lost = Objects.equals(got, o) && !Objects.equals(th, b) ? "theirs' (the branch's) change"
                : Objects.equals(got, th) && !Objects.equals(o, b) ? "ours' (main's) change" : "a change";
            f.violation("merge-lost-change", () -> c.name(t) + " merged branch " + m.kind() + " into main ("
                + m.detail() + "): key " + k + " of " + Context.table(tbl) + " was " + show(b) + " at the base, "
                + show(o) + " on main, " + show(th) + " on the branch, so the merge must leave " + show(want)
                + ", but main holds " + show(got) + " after it: " + lost + " was lost, and no conflict was reported");
          }
        }
      }
    }
    f.checked("merges checked", merges);
    f.checked("keys of merges checked against the three-way rule", keys);
  }

  /** The three-way rule with strategy theirs and update_wins; null is an absent row. */
  static Long expected(Long base, Long ours, Long theirs) {
    if (Objects.equals(theirs, base) || Objects.equals(ours, theirs)) {
      return ours;
    }
    if (Objects.equals(ours, base)) {
      return theirs;
    }
    return theirs != null ? theirs : ours; // both changed: theirs; a delete against an update: the update
  }

  private static String show(Long v) {
    return v == null ? "absent" : "v=" + v;
  }
}
