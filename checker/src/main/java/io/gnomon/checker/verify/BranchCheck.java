package io.gnomon.checker.verify;

import io.gnomon.checker.history.Op;
import io.gnomon.checker.history.Txn;
import io.gnomon.checker.history.Write;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * Branch cutoffs: on a branch, a key that no committed transaction wrote on it reads, after the run, exactly as the
 * branch's parent did at the branch's cutoff; for main as a parent, as main's as-of read at the cutoff says, for a
 * branch parent, as that branch read at the cutoff.
 */
final class BranchCheck {
  private BranchCheck() {}

  static void run(Context c, Findings f) {
    long keys = 0;
    for (Op b : c.o.history().branches()) {
      String branch = b.br();
      Set<String> written = new HashSet<>();
      for (Txn t : c.o.history().txns()) {
        if (branch.equals(t.branch()) && c.committed(t)) {
          for (Write w : t.writes()) {
            written.add(w.tbl() + ":" + w.key());
          }
        }
      }
      // and every key the branch shadow has: a write whose outcome was unknown may have committed
      c.o.branchShadow().getOrDefault(branch, Map.of()).forEach((tbl, rows) -> rows.keySet()
          .forEach(k -> written.add(tbl + ":" + k)));
      Map<Integer, Map<Long, Long>> now = c.o.branchNow().getOrDefault(branch, Map.of());
      Map<Integer, Map<Long, Long>> parent = c.o.parentAtCutoff().getOrDefault(branch, Map.of());
      for (Map.Entry<Integer, Map<Long, Long>> e : now.entrySet()) {
        int tbl = e.getKey();
        Map<Long, Long> mine = e.getValue();
        Map<Long, Long> theirs = parent.getOrDefault(tbl, Map.of());
        TreeSet<Long> all = new TreeSet<>(mine.keySet());
        all.addAll(theirs.keySet());
        for (long k : all) {
          if (written.contains(tbl + ":" + k)) {
            continue;
          }
          keys++;
          Long a = mine.get(k);
          Long p = theirs.get(k);
          if (!Objects.equals(a, p)) {
            f.violation("branch-cutoff", () -> "key " + k + " of " + Context.table(tbl) + " was never written on branch "
                + branch + " (forked from " + b.kind() + " at " + b.coord() + "), so it must read as " + b.kind()
                + " did at that cutoff, " + ShadowCheck.show(p) + " (written by " + c.writer(tbl, k, p) + "); the branch "
                + "reads it " + ShadowCheck.show(a) + " (written by " + c.writer(tbl, k, a) + ")");
          }
        }
      }
    }
    long together = 0;
    for (Map<String, Map<Integer, Map<Long, Long>>> read : c.o.branchNowTogether()) {
      List<String> order = new java.util.ArrayList<>(c.o.history().branches().stream().map(Op::br).toList());
      if (read != c.o.branchNowTogether().get(0)) {
        java.util.Collections.reverse(order);
      }
      for (String branch : order) {
        for (int tbl = 1; tbl <= c.o.branchNow().getOrDefault(branch, Map.of()).size(); tbl++) {
          together++;
          Map<Long, Long> alone = c.o.branchNow().get(branch).getOrDefault(tbl, Map.of());
          Map<Long, Long> withOthers = read.getOrDefault(branch, Map.of()).getOrDefault(tbl, Map.of());
          if (!alone.equals(withOthers)) {
            int t = tbl;
            TreeSet<Long> both = new TreeSet<>(alone.keySet());
            both.addAll(withOthers.keySet());
            long k = both.stream().filter(x -> !Objects.equals(alone.get(x), withOthers.get(x))).findFirst().orElseThrow();
            f.violation("point-reads-leak", () -> "read in one statement with the branches " + order + " (select ... "
                + "from unnest(branches) r(b) cross join lateral gnomon_t." + Context.table(t) + "_at(gnomon.point(r.b))), "
                + "branch " + branch + " returns " + withOthers.size() + " rows of " + Context.table(t) + ", key " + k
                + " " + ShadowCheck.show(withOthers.get(k)) + "; read alone, it returns " + alone.size() + " rows, key "
                + k + " " + ShadowCheck.show(alone.get(k)) + ": a read at one point leaks into the next");
          }
        }
      }
    }
    f.checked("branch reads compared alone and together in one statement", together);
    f.checked("branches checked", c.o.history().branches().size());
    f.checked("untouched branch keys compared with the parent at the cutoff", keys);
  }
}
