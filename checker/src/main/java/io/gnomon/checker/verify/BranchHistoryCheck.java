package io.gnomon.checker.verify;

import io.gnomon.checker.history.Op;
import io.gnomon.checker.history.Txn;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * Branch writes, on every branch that is intact after the run. Its state equals its shadow: each key a branch write
 * left in the branch shadow (written in the same transaction) reads on the branch as the shadow says (absent for a
 * delete). And its history ({@code <base>_bh}) is a chain along each (branch, key), in version-key order: the first
 * version creates the branch row, and each later one holds the state the previous version's transaction left;
 * a before-image that a later version's transaction wrote means version keys went backwards.
 */
final class BranchHistoryCheck {
  private BranchHistoryCheck() {}

  static void run(Context c, Findings f) {
    long keys = 0;
    for (Op b : c.o.history().branches()) {
      if (!"intact".equals(c.o.branchStatus().getOrDefault(b.br(), "intact"))) {
        continue;
      }
      Map<Integer, Map<Long, Long>> shadow = c.o.branchShadow().getOrDefault(b.br(), Map.of());
      Map<Integer, Map<Long, Long>> now = c.o.branchNow().getOrDefault(b.br(), Map.of());
      for (Map.Entry<Integer, Map<Long, Long>> e : shadow.entrySet()) {
        int tbl = e.getKey();
        for (Map.Entry<Long, Long> k : e.getValue().entrySet()) {
          keys++;
          Long want = k.getValue();
          Long got = now.getOrDefault(tbl, Map.of()).get(k.getKey());
          if (!Objects.equals(want, got)) {
            f.violation("branch-shadow-mismatch", () -> "key " + k.getKey() + " of " + Context.table(tbl)
                + " on branch " + b.br() + " reads " + ShadowCheck.show(got) + " after the run, but the branch shadow, "
                + "written in the same transactions as the branch writes, has " + ShadowCheck.show(want)
                + " (written by " + c.writer(tbl, k.getKey(), want) + ")");
          }
        }
      }
    }
    f.checked("branch keys compared with the branch shadows", keys);
    chains(c, f);
  }

  private static void chains(Context c, Findings f) {
    Set<String> intact = c.o.branchStatus().entrySet().stream().filter(e -> "intact".equals(e.getValue()))
        .map(Map.Entry::getKey).collect(Collectors.toSet());
    Map<String, List<BranchVersion>> rows = new TreeMap<>();
    for (BranchVersion v : c.o.branchVersions()) {
      if (intact.contains(v.branch())) {
        rows.computeIfAbsent(v.branch() + ":" + v.tbl() + ":" + v.key(), x -> new ArrayList<>()).add(v);
      }
    }
    long checked = 0;
    for (List<BranchVersion> chain : rows.values()) {
      chain.sort(Comparator.comparingLong(BranchVersion::vid));
      for (int i = 0; i < chain.size(); i++) {
        checked++;
        BranchVersion v = chain.get(i);
        Txn writer = c.byXid.get(v.xid());
        if (writer == null) {
          f.violation("branch-history-uncommitted-version", () -> Context.table(v.tbl()) + "'s branch history has "
              + "version vid=" + v.vid() + " (" + v.op() + " of key " + v.key() + " on branch " + v.branch()
              + ") written by xid " + v.xid() + ", which no committed transaction of the run had");
          continue;
        }
        if (i == 0) {
          if (v.op() != 'I') {
            f.violation("branch-history-chain-broken", () -> "key " + v.key() + " of " + Context.table(v.tbl())
                + " on branch " + v.branch() + ": its first version vid=" + v.vid() + " by " + c.name(writer)
                + " holds a before-image, yet no earlier version created the branch row");
          }
          continue;
        }
        BranchVersion prev = chain.get(i - 1);
        Txn before = c.byXid.get(prev.xid());
        String state = v.op() == 'I' ? "none" : v.deleted() ? "deleted" : String.valueOf(v.before());
        if (before == null || states(before, v).contains(state)) {
          continue;
        }
        BranchVersion later = null;
        for (int j = i + 1; j < chain.size() && later == null; j++) {
          Txn t = c.byXid.get(chain.get(j).xid());
          if (t != null && !"deleted".equals(state) && states(t, v).contains(state)) {
            later = chain.get(j);
          }
        }
        BranchVersion l = later;
        if (l != null) {
          f.violation("vid-backwards", () -> "key " + v.key() + " of " + Context.table(v.tbl()) + " on branch "
              + v.branch() + ": branch version vid=" + v.vid() + " by " + c.name(writer) + " holds the before-image "
              + state + ", which " + c.name(c.byXid.get(l.xid())) + " wrote in its version vid=" + l.vid()
              + ": that change came first along the branch row, yet its version key is larger");
        } else {
          f.violation("branch-history-chain-broken", () -> "key " + v.key() + " of " + Context.table(v.tbl())
              + " on branch " + v.branch() + ": branch version vid=" + v.vid() + " (" + v.op() + ") by "
              + c.name(writer) + " holds the before-image " + state + ", but the previous version vid=" + prev.vid()
              + " is by " + c.name(before) + ", which left the row " + states(before, v));
        }
      }
    }
    f.checked("branch history versions checked along their rows", checked);
  }

  /** The states a transaction's writes left a version's key in ("deleted" or the value). */
  private static Set<String> states(Txn t, BranchVersion v) {
    return t.writes().stream().filter(w -> w.tbl() == v.tbl() && w.key() == v.key())
        .map(w -> w.op() == 'D' ? "deleted" : String.valueOf(w.value())).collect(Collectors.toSet());
  }
}
