package io.gnomon.checker.verify;

import io.gnomon.checker.history.Op;
import io.gnomon.checker.history.Txn;
import io.gnomon.checker.history.Write;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** What several checks derive from the observations: which transactions committed, and who wrote what. */
final class Context {
  final Observations o;
  /** Committed writing transactions by their 64-bit id (from the marker table). */
  final Map<Long, Txn> byXid = new HashMap<>();
  /** Which committed transaction wrote each value, by table and key ("1:7:123007"). */
  final Map<String, Txn> writerOfValue = new HashMap<>();
  /**
   * The op numbers at which faults that empty scratch branches began: every SIGKILL (of a backend: the postmaster
   * reinitialises with crash recovery; of the postmaster; of the primary at a failover), not pg_terminate_backend.
   */
  final List<Long> crashes = new java.util.ArrayList<>();
  /** The op numbers at which failovers ended (the promoted standby serves). */
  final List<Long> failovers = new java.util.ArrayList<>();
  /**
   * Writing transactions whose commit was acknowledged (or whose outcome is unknown) before a failover to an
   * asynchronous standby, and that did not survive it: lost by design (only with {@link Observations#asyncStandby}).
   */
  final java.util.Set<Long> lostByFailover = new java.util.HashSet<>();

  Context(Observations o) {
    this.o = o;
    Map<String, Op> starts = new HashMap<>();
    for (Op f : o.history().faults()) {
      String no = f.detail() == null ? "" : f.detail().split(" ", 2)[0];
      if ("start".equals(f.phase())) {
        starts.put(no, f);
      } else if ("end".equals(f.phase()) && starts.containsKey(no)) {
        long at = starts.get(no).id();
        if (!f.detail().contains("pg_terminate_backend")) {
          crashes.add(at);
        }
        if ("failover".equals(f.kind())) {
          failovers.add(f.id()); // an asynchronous standby may lack what was acknowledged until the primary died
        }
      }
    }
    for (Txn t : o.history().txns()) {
      Long xid = o.markers().get(t.no());
      if (xid != null) {
        byXid.put(xid, t);
        for (Write w : t.writes()) {
          if (w.value() != null) {
            writerOfValue.put(valueKey(w.tbl(), w.key(), w.value()), t);
          }
        }
      } else if (o.asyncStandby() && t.xid() != null && t.end() != null
          && t.reported() != Txn.Reported.ABORTED && failovers.stream().anyMatch(x -> x > t.end().id())) {
        lostByFailover.add(t.no());
      }
    }
  }

  /** Whether a crash began after op {@code after} and before op {@code before} (numbers in the history). */
  boolean crashBetween(long after, long before) {
    return crashes.stream().anyMatch(x -> x > after && x < before);
  }

  static String valueKey(int tbl, long key, long value) {
    return tbl + ":" + key + ":" + value;
  }

  boolean committed(Txn t) {
    return o.markers().containsKey(t.no());
  }

  /** "T12 (session 3, rr, xid 4711)". */
  static String name(Txn t, Long xid) {
    return "T" + t.no() + " (session " + t.session() + ", " + t.isolation() + (xid == null ? "" : ", xid " + xid)
        + (t.branch() == null ? "" : ", on branch " + t.branch()) + ")";
  }

  String name(Txn t) {
    return name(t, o.markers().getOrDefault(t.no(), t.xid()));
  }

  /** Who wrote a value, in words: "T9 (...)", or "the initial load" or "no committed transaction". */
  String writer(int tbl, long key, Long value) {
    if (value == null) {
      return "(no row)";
    }
    Long initial = o.initial().getOrDefault(tbl, Map.of()).get(key);
    if (initial != null && initial.equals(value)) {
      return "the initial load";
    }
    Txn t = writerOfValue.get(valueKey(tbl, key, value));
    return t == null ? "no committed transaction of the run" : name(t);
  }

  static String table(int tbl) {
    return "ck_t" + tbl;
  }

  static String rows(List<long[]> rows) {
    StringBuilder b = new StringBuilder("{");
    for (long[] r : rows) {
      if (b.length() > 1) {
        b.append(", ");
      }
      b.append(r[0]).append('=').append(r[1]);
    }
    return b.append('}').toString();
  }
}
