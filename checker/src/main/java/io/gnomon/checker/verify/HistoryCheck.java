package io.gnomon.checker.verify;

import io.gnomon.checker.history.Txn;
import io.gnomon.checker.history.Write;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The history tables against the log: every row change a committed transaction kept has exactly one version, no
 * version comes from a transaction that did not commit, and along each row the versions, in version-key order, form
 * one chain (each before-image is the value the previous version left), ending at the live row. A before-image that a
 * later version (larger key) wrote means version keys went backwards along the row.
 */
final class HistoryCheck {
  private HistoryCheck() {}

  /** A version with the value it left behind (null: none, or unknown when {@code known} is false). */
  private record Linked(Version v, Long after, boolean known, Txn txn) {}

  static void run(Context c, Findings f) {
    Map<String, List<Version>> byWriter = new HashMap<>();
    for (Version v : c.o.versions()) {
      byWriter.computeIfAbsent(v.tbl() + ":" + v.xid() + ":" + v.key(), x -> new ArrayList<>()).add(v);
    }
    byWriter.values().forEach(l -> l.sort(Comparator.comparingLong(Version::vid)));
    Map<Long, Linked> linked = new HashMap<>();
    for (Txn t : c.o.history().txns()) {
      Long xid = c.o.markers().get(t.no());
      if (xid == null || t.branch() != null) {
        continue; // a branch's writes must leave no version in main's history: any found is an extra version
      }
      Map<String, List<Write>> mine = new TreeMap<>();
      for (Write w : t.writes()) {
        mine.computeIfAbsent(w.tbl() + ":" + xid + ":" + w.key(), x -> new ArrayList<>()).add(w);
      }
      for (Map.Entry<String, List<Write>> e : mine.entrySet()) {
        List<Write> writes = e.getValue();
        List<Version> versions = byWriter.getOrDefault(e.getKey(), List.of());
        for (int i = 0; i < writes.size(); i++) {
          Write w = writes.get(i);
          if (i < versions.size() && versions.get(i).op() == w.op()) {
            linked.put(versions.get(i).vid(), new Linked(versions.get(i), w.value(), true, t));
          } else if (i >= versions.size()) {
            f.violation("history-missing-version", () -> c.name(t) + " committed; its op #" + w.opId() + " "
                + verb(w.op()) + " key " + w.key() + " of " + Context.table(w.tbl())
                + (w.value() == null ? "" : " (v=" + w.value() + ")") + ", but " + Context.table(w.tbl())
                + "'s history has no version of that change");
          } else {
            Version v = versions.get(i);
            f.violation("history-wrong-version", () -> c.name(t) + "'s op #" + w.opId() + " " + verb(w.op())
                + " key " + w.key() + " of " + Context.table(w.tbl()) + ", but its version vid=" + v.vid()
                + " says operation " + v.op());
          }
        }
      }
    }
    for (Version v : c.o.versions()) {
      if (!linked.containsKey(v.vid())) {
        Txn t = c.byXid.get(v.xid());
        if (t == null) {
          f.violation("history-uncommitted-version", () -> Context.table(v.tbl()) + "'s history has version vid="
              + v.vid() + " (" + v.op() + " of key " + v.key() + ") written by xid " + v.xid()
              + ", which no committed transaction of the run had");
        } else {
          f.violation("history-extra-version", () -> Context.table(v.tbl()) + "'s history has version vid=" + v.vid()
              + " (" + v.op() + " of key " + v.key() + ") by " + c.name(t) + ", which made no such change");
          linked.put(v.vid(), new Linked(v, null, false, t));
        }
      }
    }
    chains(c, f, linked);
    f.checked("versions checked", c.o.versions().size());
  }

  /** Walks each row's versions in version-key order. */
  private static void chains(Context c, Findings f, Map<Long, Linked> linked) {
    Map<String, List<Linked>> rows = new TreeMap<>();
    for (Linked l : linked.values()) {
      rows.computeIfAbsent(l.v().tbl() + ":" + l.v().key(), x -> new ArrayList<>()).add(l);
    }
    for (List<Linked> chain : rows.values()) {
      chain.sort(Comparator.comparingLong(l -> l.v().vid()));
      int tbl = chain.get(0).v().tbl();
      long key = chain.get(0).v().key();
      Long state = c.o.initial().getOrDefault(tbl, Map.of()).get(key);
      boolean known = true;
      Linked prev = null;
      for (Linked l : chain) {
        Version v = l.v();
        boolean fits = v.op() == 'I' ? state == null : state != null && state.equals(v.before());
        if (known && !fits) {
          Linked p = prev;
          Long had = state;
          Linked later = laterWriter(chain, l, v.before());
          if (later != null) {
            f.violation("vid-backwards", () -> "key " + key + " of " + Context.table(tbl) + ": version vid=" + v.vid()
                + " by " + c.name(l.txn()) + " holds the before-image v=" + v.before() + ", which "
                + c.name(later.txn()) + " wrote in its version vid=" + later.v().vid()
                + ": that change came first along the row, yet its version key is larger; version keys went backwards");
          } else {
            f.violation("history-chain-broken", () -> "key " + key + " of " + Context.table(tbl) + ": version vid="
                + v.vid() + " (" + v.op() + ") by " + c.name(l.txn()) + " holds the before-image "
                + (v.op() == 'I' ? "of an insert" : "v=" + v.before() + " (written by "
                    + c.writer(tbl, key, v.before()) + ")") + ", but the row was " + ShadowCheck.show(had)
                + (p == null ? " before its first version" : " after the previous version vid=" + p.v().vid() + " by "
                    + c.name(p.txn())) + ": a change between them has no version");
          }
        }
        state = l.after();
        known = l.known() || v.op() == 'D';
        prev = l;
      }
      Long live = c.o.live().getOrDefault(tbl, Map.of()).get(key);
      if (known && !Objects.equals(live, state)) {
        Linked last = prev;
        Long had = state;
        f.violation("history-chain-broken", () -> "key " + key + " of " + Context.table(tbl) + " is "
            + ShadowCheck.show(live) + " in the table after the run, but its last version vid=" + last.v().vid()
            + " by " + c.name(last.txn()) + " left it " + ShadowCheck.show(had));
      }
    }
  }

  private static Linked laterWriter(List<Linked> chain, Linked at, Long value) {
    if (value == null) {
      return null;
    }
    for (Linked l : chain) {
      if (l.v().vid() > at.v().vid() && l.known() && value.equals(l.after())) {
        return l;
      }
    }
    return null;
  }

  static String verb(char op) {
    return switch (op) {
      case 'I' -> "inserted";
      case 'U' -> "updated";
      default -> "deleted";
    };
  }
}
