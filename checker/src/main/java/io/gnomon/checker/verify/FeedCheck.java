package io.gnomon.checker.verify;

import io.gnomon.checker.history.Op;
import io.gnomon.checker.history.Txn;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The change feed: every committed version delivered exactly once, no version of a transaction that did not commit,
 * and an order consistent with commit order: along each row, its writers in the row's order; and a transaction that
 * saw another one committed (in the coordinate of one of its reads) is delivered after it.
 */
final class FeedCheck {
  private FeedCheck() {}

  static void run(Context c, Findings f) {
    if (c.o.feedProblem() != null) {
      f.violation("feed-incomplete", () -> "the feed consumer could not be drained to the end of the run: "
          + c.o.feedProblem());
    }
    Map<Long, Version> versions = new HashMap<>();
    for (Version v : c.o.versions()) {
      versions.put(v.vid(), v);
    }
    Map<Long, Delivered> byVid = new HashMap<>();
    Map<Long, Long> firstOfXid = new HashMap<>();
    long lastTick = -1;
    Delivered previous = null;
    for (Delivered d : c.o.delivered()) {
      firstOfXid.putIfAbsent(d.xid(), d.n());
      Delivered before = byVid.putIfAbsent(d.vid(), d);
      if (before != null) {
        f.violation("feed-duplicate", () -> "version vid=" + d.vid() + " (" + d.op() + " of key " + d.key() + " in "
            + Context.table(d.tbl()) + ", xid " + d.xid() + ") was delivered twice: events #" + before.n() + " and #"
            + d.n() + ", each acknowledged in the same transaction as its storage");
        continue;
      }
      Txn t = c.byXid.get(d.xid());
      Version v = versions.get(d.vid());
      if (t == null) {
        f.violation("feed-rolled-back", () -> "event #" + d.n() + " delivered version vid=" + d.vid() + " ("
            + d.op() + " of key " + d.key() + " in " + Context.table(d.tbl()) + ") of xid " + d.xid()
            + ", which no committed transaction of the run had");
      } else if (v == null) {
        f.violation("feed-phantom", () -> "event #" + d.n() + " delivered version vid=" + d.vid() + " of "
            + c.name(t) + ", which is not in the history");
      } else if (v.tbl() != d.tbl() || v.key() != d.key() || v.op() != d.op()) {
        f.violation("feed-wrong-event", () -> "event #" + d.n() + " says vid=" + d.vid() + " is " + d.op()
            + " of key " + d.key() + " in " + Context.table(d.tbl()) + ", but the history says " + v.op()
            + " of key " + v.key() + " in " + Context.table(v.tbl()));
      }
      if (d.tick() < lastTick) {
        Delivered p = previous;
        f.violation("feed-order", () -> "event #" + d.n() + " is in the batch of tick " + d.tick()
            + ", after event #" + p.n() + " of tick " + p.tick() + ": batches went backwards");
      }
      lastTick = Math.max(lastTick, d.tick());
      previous = d;
    }
    long committedVersions = 0;
    for (Version v : c.o.versions()) {
      Txn t = c.byXid.get(v.xid());
      if (t == null) {
        continue;
      }
      committedVersions++;
      if (!byVid.containsKey(v.vid()) && c.o.feedProblem() == null) {
        f.violation("feed-missing", () -> "version vid=" + v.vid() + " (" + HistoryCheck.verb(v.op()) + " key "
            + v.key() + " of " + Context.table(v.tbl()) + ") by " + c.name(t)
            + " committed, but the feed never delivered it");
      }
    }
    images(c, f, versions);
    rowOrder(c, f, firstOfXid);
    coordinateOrder(c, f, firstOfXid);
    f.checked("feed events checked", c.o.delivered().size());
    f.checked("committed versions the feed had to deliver", committedVersions);
  }

  /**
   * The events' row images: before a change, the history's image of the version (none for an insert); after it, the
   * image the key's next committed version holds from before it, else the row after the run (none for a delete).
   */
  private static void images(Context c, Findings f, Map<Long, Version> versions) {
    Map<String, List<Version>> rows = new HashMap<>();
    for (Version v : c.o.versions()) {
      if (c.byXid.containsKey(v.xid())) {
        rows.computeIfAbsent(v.tbl() + ":" + v.key(), x -> new ArrayList<>()).add(v);
      }
    }
    Map<Long, Long> afterOf = new HashMap<>();
    for (List<Version> chain : rows.values()) {
      chain.sort(Comparator.comparingLong(Version::vid));
      for (int i = 0; i < chain.size(); i++) {
        Version v = chain.get(i);
        Long after = v.op() == 'D' ? null
            : i + 1 < chain.size() ? chain.get(i + 1).before()
            : c.o.live().getOrDefault(v.tbl(), Map.of()).get(v.key());
        afterOf.put(v.vid(), after);
      }
    }
    long checked = 0;
    for (Delivered d : c.o.delivered()) {
      Version v = versions.get(d.vid());
      if (!d.images() || v == null || !c.byXid.containsKey(d.xid()) || v.op() != d.op()) {
        continue; // not stored with images, or already a violation above
      }
      checked++;
      Long before = v.op() == 'I' ? null : v.before();
      Long after = afterOf.get(d.vid());
      if (!Objects.equals(before, d.before()) || !Objects.equals(after, d.after())) {
        f.violation("feed-wrong-image", () -> "event #" + d.n() + " (" + d.op() + " of key " + d.key() + " in "
            + Context.table(d.tbl()) + ", vid=" + d.vid() + ") carries v=" + d.before() + " before and v=" + d.after()
            + " after; the history says " + before + " and " + after + " (null: no row)");
      }
    }
    f.checked("feed events' row images checked", checked);
  }

  /** Along each row, the transaction of an earlier version is delivered first. */
  private static void rowOrder(Context c, Findings f, Map<Long, Long> firstOfXid) {
    Map<String, List<Version>> rows = new TreeMap<>();
    for (Version v : c.o.versions()) {
      if (c.byXid.containsKey(v.xid())) {
        rows.computeIfAbsent(v.tbl() + ":" + v.key(), x -> new ArrayList<>()).add(v);
      }
    }
    for (List<Version> chain : rows.values()) {
      chain.sort(Comparator.comparingLong(Version::vid));
      for (int i = 1; i < chain.size(); i++) {
        Version a = chain.get(i - 1);
        Version b = chain.get(i);
        Long pa = firstOfXid.get(a.xid());
        Long pb = firstOfXid.get(b.xid());
        if (a.xid() != b.xid() && pa != null && pb != null && pb < pa) {
          f.violation("feed-order", () -> "key " + a.key() + " of " + Context.table(a.tbl()) + " was changed by "
              + c.name(c.byXid.get(a.xid())) + " (vid=" + a.vid() + ") and then by " + c.name(c.byXid.get(b.xid()))
              + " (vid=" + b.vid() + "), which waited for the first to commit; the feed delivered the second first "
              + "(event #" + pb + " before #" + pa + ")");
        }
      }
    }
  }

  /**
   * A transaction B that read at a coordinate where A had committed committed after A; the feed must deliver A first.
   * Every writer with an id below the coordinate's xmin had committed, so one prefix maximum per read suffices; the
   * few ids between xmin and xmax are tested one by one.
   */
  private static void coordinateOrder(Context c, Findings f, Map<Long, Long> firstOfXid) {
    long[] xids = firstOfXid.keySet().stream().filter(c.byXid::containsKey).mapToLong(Long::longValue).sorted()
        .toArray();
    if (xids.length == 0) {
      return;
    }
    long[] prefixMaxPos = new long[xids.length];
    int[] prefixArg = new int[xids.length];
    for (int i = 0; i < xids.length; i++) {
      long p = firstOfXid.get(xids[i]);
      if (i == 0 || p > prefixMaxPos[i - 1]) {
        prefixMaxPos[i] = p;
        prefixArg[i] = i;
      } else {
        prefixMaxPos[i] = prefixMaxPos[i - 1];
        prefixArg[i] = prefixArg[i - 1];
      }
    }
    long pairs = 0;
    long independent = 0;
    for (Txn b : c.o.history().txns()) {
      Long bx = c.o.markers().get(b.no());
      Long pb = bx == null ? null : firstOfXid.get(bx);
      if (pb == null) {
        continue;
      }
      for (Op read : b.ops()) {
        if (!"read".equals(read.op()) || !read.ok() || read.coord() == null) {
          continue;
        }
        // B's writes after this read may depend on what it saw: those must follow every transaction it saw committed
        boolean dependent = b.writes().stream().anyMatch(w -> w.opId() > read.id());
        Snapshot s = Snapshot.parse(read.coord());
        int below = lowerBound(xids, s.xmin()) - 1;
        Long inverted = null;
        if (below >= 0 && prefixMaxPos[below] > pb) {
          inverted = xids[prefixArg[below]];
          if (!beganBefore(c, inverted, read)) {
            // an xid reused after a crash or failover by a transaction that began after the read: not the one the
            // coordinate saw; look for one that did begin before it (rare, so one by one)
            inverted = null;
            for (int i = 0; inverted == null && i <= below; i++) {
              if (firstOfXid.get(xids[i]) > pb && beganBefore(c, xids[i], read)) {
                inverted = xids[i];
              }
            }
          }
        }
        for (int i = Math.max(0, below + 1); inverted == null && i < xids.length && xids[i] < s.xmax(); i++) {
          pairs++;
          if (xids[i] != bx && s.sees(xids[i]) && firstOfXid.get(xids[i]) > pb && beganBefore(c, xids[i], read)) {
            inverted = xids[i];
          }
        }
        pairs += Math.max(0, below + 1);
        if (inverted != null && dependent) {
          report(c, f, b, read, inverted, firstOfXid.get(inverted), pb);
        } else if (inverted != null) {
          independent++;
        }
      }
    }
    f.checked("reads after which the feed delivered an independent transaction out of commit order", independent);
    f.checked("commit-order pairs checked against the feed", pairs);
  }

  /** Whether the transaction with this xid began before the read (else the read cannot have seen it commit). */
  private static boolean beganBefore(Context c, long xid, Op read) {
    return c.byXid.get(xid).ops().get(0).id() < read.id();
  }

  private static void report(Context c, Findings f, Txn b, Op read, long ax, long pa, long pb) {
    Txn a = c.byXid.get(ax);
    f.violation("feed-order", () -> c.name(b) + " read at coordinate " + read.coord() + " (op #" + read.id()
        + "), in which " + c.name(a) + " had committed, and changed rows after that read, so T" + b.no()
        + "'s changes may depend on T" + a.no() + "'s and it committed after it; the feed delivered T" + b.no()
        + " (event #" + pb + ") before T" + a.no() + " (event #" + pa + ")");
  }

  private static int lowerBound(long[] a, long x) {
    int lo = 0;
    int hi = a.length;
    while (lo < hi) {
      int mid = (lo + hi) >>> 1;
      if (a[mid] < x) {
        lo = mid + 1;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
