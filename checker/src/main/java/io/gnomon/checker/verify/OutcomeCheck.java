package io.gnomon.checker.verify;

import io.gnomon.checker.history.Txn;

/**
 * Outcomes: every acknowledged commit survived (its marker row is on the final primary: no acknowledged commit was
 * lost, across crashes and failover; with an asynchronous standby, a commit acknowledged before a failover may be lost,
 * and is listed as such); no transaction the client saw fail committed; and each unknown outcome is
 * resolved, with {@code pg_xact_status} cross-checked against the marker.
 */
final class OutcomeCheck {
  private OutcomeCheck() {}

  static void run(Context c, Findings f) {
    long resolvedCommitted = 0;
    long resolvedAborted = 0;
    long reused = 0;
    for (Txn t : c.o.history().txns()) {
      Long xid = t.xid();
      if (xid == null) {
        continue;
      }
      boolean committed = c.committed(t);
      switch (t.reported()) {
        case ACKNOWLEDGED -> {
          if (!committed && c.lostByFailover.contains(t.no())) {
            f.lost("acknowledged commits lost by async failover", () -> Context.name(t, xid) + " got its COMMIT "
                + "acknowledged at " + seconds(t.end().t()) + " (op #" + t.end().id() + "); a failover to the "
                + "asynchronous standby followed before the standby had it: its marker row is not on the final primary");
          } else if (!committed) {
            f.violation("lost-commit", () -> Context.name(t, xid) + " got its COMMIT acknowledged at "
                + seconds(t.end().t()) + ", but its marker row, inserted first in the same transaction, is not on the "
                + "final primary: an acknowledged commit was lost");
          }
        }
        case ABORTED -> {
          if (committed) {
            f.violation("aborted-but-committed", () -> Context.name(t, xid) + " ended with '" + t.end().op() + "' ("
                + (t.end().err() == null ? "rolled back" : t.end().err()) + "), yet its marker row is on the final "
                + "primary: a transaction the client saw fail committed");
          }
        }
        case UNKNOWN -> {
          String status = c.o.xactStatus().get(t.no());
          if (committed) {
            resolvedCommitted++;
            if ("aborted".equals(status)) {
              f.violation("xact-status-contradiction", () -> "pg_xact_status(" + xid + ") says aborted for "
                  + Context.name(t, xid) + ", whose commit outcome was unknown, but its marker row exists: it committed");
            }
          } else {
            resolvedAborted++;
            if ("committed".equals(status)) {
              reused++; // the id was reused after a crash lost the transaction's WAL: the marker decides
            }
          }
        }
        default -> throw new IllegalStateException();
      }
    }
    f.checked("unknown outcomes resolved as committed", resolvedCommitted);
    f.checked("unknown outcomes resolved as aborted", resolvedAborted);
    f.checked("unknown outcomes whose xid was reused after a crash", reused);
  }

  static String seconds(long millis) {
    return String.format(java.util.Locale.ROOT, "%.3f s", millis / 1000.0);
  }
}
