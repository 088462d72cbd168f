package io.gnomon.checker.verify;

import io.gnomon.checker.history.Op;
import io.gnomon.checker.history.Txn;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Exact replay: every logged read returns the same rows when read again as of its coordinate, once the reading
 * transaction's own changes (which a coordinate never includes) are laid on top. Reads of transactions that later
 * failed count too: what a snapshot saw does not depend on how its transaction ended.
 */
final class ReplayCheck {
  private ReplayCheck() {}

  static void run(Context c, Findings f) {
    long replayed = 0;
    long reads = 0;
    long branchReads = 0;
    long branchReplayed = 0;
    long beforeFault = 0;
    java.util.Set<String> lostKeys = new java.util.HashSet<>(); // "branch:tbl:key" a lost commit wrote
    for (long no : c.lostByFailover) {
      Txn lost = c.o.history().txn(no);
      for (io.gnomon.checker.history.Write w : lost.writes()) {
        lostKeys.add(lost.branch() + ":" + w.tbl() + ":" + w.key());
      }
    }
    for (Txn t : c.o.history().txns()) {
      for (Op read : t.ops()) {
        if (!"read".equals(read.op()) || !read.ok() || read.coord() == null) {
          continue;
        }
        reads++;
        branchReads += read.br() == null ? 0 : 1;
        String error = c.o.replayErrors().get(read.id());
        List<long[]> asOf = c.o.replays().get(read.id());
        if (error != null && error.startsWith("GN053") && read.br() != null
            && "lost".equals(c.o.branchStatus().get(read.br()))) {
          // a crash emptied the scratch branch: the read was replayed before it, or cannot be replayed at all
          Object before = c.o.scratchReplays().get(read.id());
          if (before instanceof List<?> rows) {
            @SuppressWarnings("unchecked")
            List<long[]> r = (List<long[]>) rows;
            asOf = r;
            error = null;
            beforeFault++;
          } else if (before instanceof String failed && !failed.startsWith("GN053")) {
            error = failed + " (replayed before the fault that emptied the scratch branch)";
          } else {
            f.lost("scratch branch reads not replayable (branch lost)", () -> c.name(t) + " read "
                + Context.table(read.tbl()) + " keys " + read.lo() + ".." + read.hi() + " on scratch branch "
                + read.br() + " (op #" + read.id() + "); a crash emptied the branch before the read was replayed");
            continue;
          }
        }
        if (error != null && error.startsWith("GN050") && read.br() != null && c.o.asyncStandby()
            && "missing".equals(c.o.branchStatus().get(read.br()))
            && c.failovers.stream().anyMatch(x -> x > read.id())) {
          f.lost("branch reads not replayable (branch lost by async failover)", () -> c.name(t) + " read "
              + Context.table(read.tbl()) + " keys " + read.lo() + ".." + read.hi() + " on branch " + read.br()
              + " (op #" + read.id() + "), whose creation the asynchronous failover lost");
          continue;
        }
        if (error != null && error.startsWith("GN013") && faultAfter(c, read)) {
          // Gnomon refused it rather than answer inexactly: the coordinate was captured before a crash or failover,
          // after the last tick that survived it (its transactions' ids may have been reused). Listed, not replayed.
          f.lost("reads not replayable: coordinate lost in a fault (GN013)", () -> c.name(t) + " read "
              + Context.table(read.tbl()) + " keys " + read.lo() + ".." + read.hi() + " at coordinate " + read.coord()
              + " (op #" + read.id() + "); a fault followed before a tick that survived it, so Gnomon refuses reads "
              + "as of it (GN013) rather than count in transactions that reused the ids of ones the fault forgot");
          continue;
        }
        if (error != null) {
          String err = error;
          Long own = c.o.markers().getOrDefault(t.no(), t.xid());
          Snapshot snap = Snapshot.parse(read.coord());
          f.violation("replay-error", () -> c.name(t) + " read " + Context.table(read.tbl()) + " keys " + read.lo() + ".."
              + read.hi() + " at coordinate " + read.coord() + " from gnomon.coordinate() (op #" + read.id()
              + "), but reading as of that coordinate fails: " + err
              + (own != null && own >= snap.xmax() && java.util.Arrays.binarySearch(snap.xip(), own) >= 0
                  ? "; the coordinate lists the reader's own xid " + own + " as in progress although it is not below "
                      + "its xmax " + snap.xmax()
                  : ""));
          continue;
        }
        if (asOf == null) {
          continue;
        }
        replayed++;
        branchReplayed += read.br() == null ? 0 : 1;
        TreeMap<Long, Long> expected = expected(t, read, asOf);
        TreeMap<Long, Long> seen = new TreeMap<>();
        java.util.Map<Long, java.util.Set<Long>> duplicates = new java.util.HashMap<>();
        for (long[] r : read.rows()) {
          Long before = seen.put(r[0], r[1]);
          if (before != null) {
            duplicates.computeIfAbsent(r[0], k -> new java.util.HashSet<>()).add(before);
            duplicates.get(r[0]).add(r[1]);
          }
        }
        // PostgreSQL itself: at REPEATABLE READ, a transaction that inserts a key whose row another transaction
        // deleted after the snapshot sees both its own row and the old one. Such a key is right when one of the
        // values it returned is the expected one; the strict comparison covers every other key.
        for (java.util.Map.Entry<Long, java.util.Set<Long>> d : duplicates.entrySet()) {
          if (d.getValue().contains(expected.get(d.getKey()))) {
            seen.remove(d.getKey());
            expected.remove(d.getKey());
          }
        }
        if (!seen.equals(expected)) {
          List<long[]> withoutOwn = c.o.replaysWithoutOwn().get(read.id());
          Txn reused = reusedXid(c, read, seen, expected);
          if (c.o.asyncStandby() && c.failovers.stream().anyMatch(x -> x > read.id())
              && union(seen, expected).stream().filter(k -> !java.util.Objects.equals(seen.get(k), expected.get(k)))
                  .allMatch(k -> lostKeys.contains(read.br() + ":" + read.tbl() + ":" + k))) {
            f.lost("reads that saw commits lost by async failover", () -> c.name(t) + " read "
                + Context.table(read.tbl()) + " keys " + read.lo() + ".." + read.hi() + " (op #" + read.id()
                + ") and saw " + Context.rows(read.rows()) + "; as of its coordinate the final primary has " + expected
                + ": every key that differs was written by a commit the asynchronous failover lost");
          } else if (withoutOwn != null && seen.equals(expected(t, read, withoutOwn))) {
            f.violation("coordinate-sees-own-writes", () -> ownWrites(c, t, read, seen, expected));
          } else if (reused != null) {
            f.violation("xid-reused", () -> c.name(t) + " read " + Context.table(read.tbl()) + " keys " + read.lo()
                + ".." + read.hi() + " at coordinate " + read.coord() + " (op #" + read.id() + ") and saw "
                + Context.rows(read.rows()) + "; read again as of that coordinate, Gnomon returns "
                + expected + " because of " + c.name(reused) + ", which began after that read (op #"
                + reused.ops().get(0).id() + ", at " + OutcomeCheck.seconds(reused.ops().get(0).t())
                + ") yet has an xid the coordinate counts as ended before it: after a crash or failover, the server "
                + "gave a new transaction the xid of one that had ended before the coordinate without its WAL "
                + "surviving, so reads as of coordinates from before the fault count the new transaction in.");
          } else {
            f.violation("replay-mismatch", () -> explain(c, t, read, seen, expected));
          }
        }
      }
    }
    f.checked("reads logged", reads);
    f.checked("reads replayed", replayed);
    f.checked("branch reads logged", branchReads);
    f.checked("branch reads replayed", branchReplayed);
    f.checked("scratch branch reads replayed before a fault emptied the branch", beforeFault);
  }

  /** Whether a fault began after the read: only then may Gnomon refuse its coordinate with GN013. */
  private static boolean faultAfter(Context c, Op read) {
    return c.o.history().faults().stream().anyMatch(x -> x.id() > read.id());
  }

  /**
   * A committed transaction that changed a key where the replay differs, whose xid the coordinate counts as ended
   * before it, but which began after the read: its xid was reused after a crash or failover.
   */
  private static Txn reusedXid(Context c, Op read, Map<Long, Long> seen, Map<Long, Long> expected) {
    Snapshot snap = Snapshot.parse(read.coord());
    java.util.Set<Long> keys = new java.util.HashSet<>();
    for (long k : union(seen, expected)) {
      if (!java.util.Objects.equals(seen.get(k), expected.get(k))) {
        keys.add(k);
      }
    }
    for (Map.Entry<Long, Txn> e : c.byXid.entrySet()) {
      Txn later = e.getValue();
      if (snap.sees(e.getKey()) && later.ops().get(0).id() > read.id()
          && java.util.Objects.equals(later.branch(), read.br())
          && later.writes().stream().anyMatch(w -> w.tbl() == read.tbl() && keys.contains(w.key()))) {
        return later;
      }
    }
    return null;
  }

  /** The rows read as of the coordinate, with the transaction's own changes made before the read on top. */
  private static TreeMap<Long, Long> expected(Txn t, Op read, List<long[]> asOf) {
    TreeMap<Long, Long> expected = new TreeMap<>();
    for (long[] r : asOf) {
      expected.put(r[0], r[1]);
    }
    for (Map.Entry<Long, Long> w : t.overlay(read).entrySet()) {
      long k = w.getKey();
      if (k >= read.lo() && k <= read.hi()) {
        if (w.getValue() == null) {
          expected.remove(k);
        } else {
          expected.put(k, w.getValue());
        }
      }
    }
    return expected;
  }

  private static String ownWrites(Context c, Txn t, Op read, Map<Long, Long> seen, Map<Long, Long> expected) {
    long k = union(seen, expected).stream().filter(x -> !java.util.Objects.equals(seen.get(x), expected.get(x)))
        .findFirst().orElseThrow();
    return c.name(t) + " read " + Context.table(read.tbl()) + " keys " + read.lo() + ".." + read.hi() + " (op #"
        + read.id() + ") with coordinate " + read.coord() + " from gnomon.coordinate(), and saw k=" + k + " "
        + show(seen.get(k)) + "; read again as of that coordinate, Gnomon returns " + show(expected.get(k))
        + ": T" + t.no() + "'s own change after the read shows through. The coordinate's in-progress list leaves out the "
        + "capturing transaction's own xid (pg_current_snapshot() never lists it), so once that transaction "
        + "committed, reads as of the coordinate include all its writes. With the xid added to the in-progress list "
        + "the read replays exactly.";
  }

  /** The reads of writing transactions whose replay differs from what they saw: they need the second replay. */
  static java.util.Set<Long> suspects(Observations o) {
    java.util.Set<Long> out = new java.util.HashSet<>();
    for (Txn t : o.history().txns()) {
      if (t.xid() == null) {
        continue;
      }
      for (Op read : t.ops()) {
        List<long[]> asOf = o.replays().get(read.id());
        if ("read".equals(read.op()) && read.ok() && asOf != null) {
          TreeMap<Long, Long> seen = new TreeMap<>();
          for (long[] r : read.rows()) {
            seen.put(r[0], r[1]);
          }
          if (!seen.equals(expected(t, read, asOf))) {
            out.add(read.id());
          }
        }
      }
    }
    return out;
  }

  private static String explain(Context c, Txn t, Op read, Map<Long, Long> seen, Map<Long, Long> expected) {
    TreeMap<Long, Long[]> diff = new TreeMap<>();
    for (long k : union(seen, expected)) {
      Long a = seen.get(k);
      Long b = expected.get(k);
      if (a == null ? b != null : !a.equals(b)) {
        diff.put(k, new Long[] {a, b});
      }
    }
    long k = diff.firstKey();
    Long saw = diff.get(k)[0];
    Long replay = diff.get(k)[1];
    Snapshot snap = Snapshot.parse(read.coord());
    StringBuilder b = new StringBuilder();
    b.append(c.name(t)).append(" read ").append(Context.table(read.tbl())).append(" keys ").append(read.lo())
        .append("..").append(read.hi()).append(" at coordinate ").append(read.coord()).append(" (op #")
        .append(read.id()).append(read.br() == null ? "" : ", on branch " + read.br()).append("): it saw k=").append(k).append(' ').append(show(saw)).append(", written by ")
        .append(c.writer(read.tbl(), k, saw)).append("; read again as of that coordinate, Gnomon returns ")
        .append(show(replay)).append(", written by ").append(c.writer(read.tbl(), k, replay));
    Txn wrote = replay == null ? null : c.writerOfValue.get(Context.valueKey(read.tbl(), k, replay));
    if (wrote != null) {
      long xid = c.o.markers().get(wrote.no());
      b.append(", which ").append(snap.inProgress(xid) ? "was still in progress at the coordinate"
          : snap.sees(xid) ? "had committed before the coordinate" : "started after the coordinate");
    }
    if (diff.size() > 1) {
      b.append("; ").append(diff.size() - 1).append(" more keys of the read differ");
    }
    return b.append('.').toString();
  }

  private static java.util.SortedSet<Long> union(Map<Long, Long> a, Map<Long, Long> b) {
    java.util.TreeSet<Long> s = new java.util.TreeSet<>(a.keySet());
    s.addAll(b.keySet());
    return s;
  }

  private static String show(Long v) {
    return v == null ? "absent" : "as v=" + v;
  }
}
