package io.gnomon.checker.run;

import io.gnomon.checker.history.Op;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Merges a branch forked from main back into main, in one REPEATABLE READ transaction that logs what the verifier
 * needs to check that the merge lost nothing: per table the base (main as of the branch's cutoff), theirs (the branch
 * now) and ours (main now), the merge's status, the rows it wrote (applied to the shadow too, so the shadow check
 * holds) and main after it. Sessions wait while it runs (see {@link Workload#gate}); a serialization failure or a lost
 * connection is retried a few times.
 */
final class Merger {
  private static final String[] OPS = {"I", "U", "D"};

  private Merger() {}

  /** Returns whether the merge committed (or ended with an unknown outcome). */
  static boolean merge(Workload w, String branch, String cutoff) {
    w.gate.writeLock().lock();
    try {
      return mergeAlone(w, branch, cutoff);
    } finally {
      w.gate.writeLock().unlock();
    }
  }

  private static boolean mergeAlone(Workload w, String branch, String cutoff) {
    for (int attempt = 0; attempt < 5 && !w.stopping; attempt++) {
      long txn = w.txnNumbers.incrementAndGet();
      long t0 = System.nanoTime();
      boolean atCommit = false;
      try (Connection c = w.servers.connect()) {
        c.setAutoCommit(false);
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
        try {
          Map<Integer, String[]> generated = Schema.generated(c, w.tables);
          try (PreparedStatement ps = c.prepareStatement(
              "insert into ck_txn (txn, session, xid) values (?, 0, pg_current_xact_id()) returning xid::text")) {
            ps.setLong(1, txn);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              log(w, txn, Op.of("begin").xid(rs.getString(1)).outcome("ok"));
            }
          }
          for (int t = 1; t <= w.tables; t++) {
            log(w, txn, Op.of("merge_base").table(t).forked("main", cutoff).rows(rows(c,
                "select id::bigint, v from gnomon_t.\"" + generated.get(t)[0] + "\"(?::text)", cutoff)).outcome("ok"));
            log(w, txn, Op.of("merge_theirs").table(t).rows(rows(c,
                "select id::bigint, v from gnomon_t.\"" + generated.get(t)[2] + "\"(gnomon.point(?))", branch))
                .outcome("ok"));
            log(w, txn, Op.of("merge_ours").table(t).rows(rows(c, "select id::bigint, v from " + Schema.tracked(t)))
                .outcome("ok"));
          }
          String status;
          try (PreparedStatement ps = c.prepareStatement(
              "select status || ' (' || adds || ' adds, ' || modifications || ' modifications, ' || deletes "
                  + "|| ' deletes, ' || conflicts || ' conflicts)' from gnomon.merge(?, 'main')")) {
            ps.setString(1, branch);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              status = rs.getString(1);
            }
          }
          log(w, txn, Op.of("merge").fault(branch, null, status).outcome("ok"));
          for (int t = 1; t <= w.tables; t++) {
            written(c, w, txn, t, generated.get(t)[1]);
            log(w, txn, Op.of("merge_result").table(t).rows(rows(c, "select id::bigint, v from " + Schema.tracked(t)))
                .outcome("ok"));
          }
          atCommit = true;
          c.commit();
          log(w, txn, Op.of("commit").outcome("ok").micros((System.nanoTime() - t0) / 1000));
          w.committed.incrementAndGet();
          return true;
        } catch (SQLException e) {
          boolean lost = Servers.connectionLost(e);
          log(w, txn, Op.of(atCommit ? "commit" : "abort").outcome(atCommit && lost ? "unknown" : "failed")
              .error(Session.error(e)).micros((System.nanoTime() - t0) / 1000));
          if (atCommit && lost) {
            w.unknown.incrementAndGet();
            return true;
          }
          w.failed.incrementAndGet();
          if (!lost) {
            c.rollback();
          }
        }
      } catch (SQLException e) {
        // could not connect (a fault under way): try again
      }
    }
    return false;
  }

  /** The rows the merge wrote to a table (its own versions), applied to the shadow and logged. */
  private static void written(Connection c, Workload w, long txn, int tbl, String history) throws SQLException {
    List<long[]> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement("select h.id::bigint, coalesce(l.v, 0), h.g_op::text from gnomon_t.\""
        + history + "\" h left join " + Schema.tracked(tbl) + " l on l.id = h.id "
        + "where h.g_xid = pg_current_xact_id() order by h.g_vid")) {
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new long[] {rs.getLong(1), rs.getLong(2), List.of(OPS).indexOf(rs.getString(3))});
        }
      }
    }
    int sn = 0;
    String s = Schema.shadow(tbl);
    for (long[] r : rows) {
      String sql = switch ((int) r[2]) {
        case 0 -> "insert into " + s + " (id, v) values (?, ?)";
        case 1 -> "update " + s + " set v = ? where id = ?";
        default -> "delete from " + s + " where id = ?";
      };
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        switch ((int) r[2]) {
          case 0 -> {
            ps.setLong(1, r[0]);
            ps.setLong(2, r[1]);
          }
          case 1 -> {
            ps.setLong(1, r[1]);
            ps.setLong(2, r[0]);
          }
          default -> ps.setLong(1, r[0]);
        }
        sn += ps.executeUpdate();
      }
    }
    log(w, txn, Op.of("merge_write").table(tbl).rows(rows).shadow(sn).outcome("ok"));
  }

  private static List<long[]> rows(Connection c, String sql, String... params) throws SQLException {
    List<long[]> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql + " order by 1")) {
      for (int i = 0; i < params.length; i++) {
        ps.setString(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new long[] {rs.getLong(1), rs.getLong(2)});
        }
      }
    }
    return out;
  }

  private static void log(Workload w, long txn, Op.Builder op) {
    w.log.log(op.session(0, txn, "rr"));
  }
}
