package io.gnomon.checker.verify;

import io.gnomon.checker.history.Op;
import java.util.Map;
import java.util.TreeSet;

/**
 * Tracking never changes what main returns: each statement changed as many rows in the tracked table as in its
 * untracked shadow, and after the run each tracked table equals its shadow, written in the same transactions.
 */
final class ShadowCheck {
  private ShadowCheck() {}

  static void run(Context c, Findings f) {
    for (Op op : c.o.history().ops()) {
      if (op.isWrite() && op.ok() && op.sn() != null && op.rows() != null && op.sn() != op.rows().size()) {
        f.violation("shadow-mismatch", () -> "op #" + op.id() + " of T" + op.txn() + " (" + op.op() + " on "
            + Context.table(op.tbl()) + ") changed " + op.rows().size() + " rows of the tracked table but " + op.sn()
            + " of its untracked shadow, in the same transaction");
      }
    }
    long rows = 0;
    for (Map.Entry<Integer, Map<Long, Long>> e : c.o.live().entrySet()) {
      int tbl = e.getKey();
      Map<Long, Long> live = e.getValue();
      Map<Long, Long> shadow = c.o.shadow().getOrDefault(tbl, Map.of());
      TreeSet<Long> keys = new TreeSet<>(live.keySet());
      keys.addAll(shadow.keySet());
      for (long k : keys) {
        rows++;
        Long a = live.get(k);
        Long b = shadow.get(k);
        if (a == null ? b != null : !a.equals(b)) {
          f.violation("shadow-mismatch", () -> Context.table(tbl) + " key " + k + " is " + show(a)
              + " after the run, but its untracked shadow, written by the same statements, has " + show(b)
              + " (written by " + c.writer(tbl, k, b) + ")");
        }
      }
    }
    f.checked("rows compared with the shadow tables", rows);
  }

  static String show(Long v) {
    return v == null ? "absent" : "v=" + v;
  }
}
