package io.gnomon.checker.run;

import io.gnomon.checker.history.Op;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * One client session: random transactions, one after another, on the current primary, until the workload stops.
 * Each transaction picks an isolation level; a writing one first inserts its number into the marker table (which
 * also tells it its xid); then it reads (with the coordinate of the reading statement), inserts, updates one row or a
 * range, deletes, changes keys, opens savepoints and rolls back to them or releases them, sometimes lingers (a long
 * transaction), and commits or rolls back. Every write goes to the tracked table and then, for the same rows, to its
 * untracked shadow. Every statement is logged with its outcome; a connection lost during COMMIT makes the outcome
 * unknown.
 */
final class Session implements Runnable {
  private static final Duration RECONNECT_PATIENCE = Duration.ofSeconds(120);

  private final int no;
  private final Workload w;
  private final Random rnd;
  private Connection c;
  volatile int pid;
  volatile boolean committing;
  volatile Throwable failure;

  // the transaction under way
  private long txn;
  private String iso;
  private String branch;
  private int savepoints;

  Session(int no, Workload w) {
    this.no = no;
    this.w = w;
    this.rnd = new Random(w.seed * 31 + no);
  }

  int no() {
    return no;
  }

  @Override
  public void run() {
    try {
      while (!w.stopping) {
        if (c == null) {
          c = w.servers.connect(RECONNECT_PATIENCE, () -> w.stopping);
          c.setAutoCommit(false);
          try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("select pg_backend_pid()")) {
            rs.next();
            pid = rs.getInt(1);
          }
          c.commit();
        }
        transaction();
      }
    } catch (SQLException | RuntimeException e) {
      if (!w.stopping) {
        failure = e;
      }
    } finally {
      close();
    }
  }

  private void transaction() throws SQLException {
    w.gate.readLock().lock();
    try {
      transactionAlone();
    } finally {
      w.gate.readLock().unlock();
    }
  }

  private void transactionAlone() throws SQLException {
    txn = w.txnNumbers.incrementAndGet();
    iso = w.isolations.get(rnd.nextInt(w.isolations.size()));
    List<String> branches = w.branches;
    branch = !branches.isEmpty() && rnd.nextInt(100) < 30 ? branches.get(rnd.nextInt(branches.size())) : null;
    savepoints = 0;
    boolean writer = rnd.nextInt(100) < 85;
    boolean lingers = rnd.nextInt(100) < 3;
    boolean rollback = rnd.nextInt(100) < 8;
    int ops = 1 + rnd.nextInt(6);
    long t0 = System.nanoTime();
    boolean atCommit = false;
    try {
      c.setTransactionIsolation(switch (iso) {
        case "rr" -> Connection.TRANSACTION_REPEATABLE_READ;
        case "ser" -> Connection.TRANSACTION_SERIALIZABLE;
        default -> Connection.TRANSACTION_READ_COMMITTED;
      });
      if (branch != null) {
        try (PreparedStatement ps = c.prepareStatement("select gnomon.branch_use(?, true)")) {
          ps.setString(1, branch);
          ps.execute();
        }
      }
      if (writer) {
        try (PreparedStatement ps = c.prepareStatement(
            "insert into ck_txn (txn, session, xid) values (?, ?, pg_current_xact_id()) returning xid::text")) {
          ps.setLong(1, txn);
          ps.setInt(2, no);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            log(Op.of("begin").xid(rs.getString(1)).outcome("ok"));
          }
        }
      } else {
        log(Op.of("begin").outcome("ok"));
      }
      for (int i = 0; i < ops && !w.stopping; i++) {
        if (lingers) {
          linger(50 + rnd.nextInt(200));
        }
        if (rnd.nextInt(100) < 10) {
          savepointBlock(writer);
        } else {
          operation(writer);
        }
      }
      if (rollback) {
        c.rollback();
        log(Op.of("rollback").outcome("ok").micros(micros(t0)));
        w.failed.incrementAndGet();
        return;
      }
      atCommit = true;
      committing = true;
      c.commit();
      committing = false;
      log(Op.of("commit").outcome("ok").micros(micros(t0)));
      w.committed.incrementAndGet();
    } catch (SQLException e) {
      boolean lost = Servers.connectionLost(e) || c.isClosed();
      committing = false;
      if (branch != null && ("GN053".equals(e.getSQLState()) || "GN050".equals(e.getSQLState()))) {
        w.lost(branch); // a crash emptied this scratch branch (or a failover lost the branch): pick others
      }
      if (atCommit && lost) {
        log(Op.of("commit").outcome("unknown").error(error(e)).micros(micros(t0)));
        w.unknown.incrementAndGet();
      } else {
        log(Op.of(atCommit ? "commit" : "abort").outcome("failed").error(error(e)).micros(micros(t0)));
        w.failed.incrementAndGet();
      }
      if (lost) {
        close();
      } else {
        try {
          c.rollback();
        } catch (SQLException ignored) {
          close();
        }
      }
    }
  }

  /** A savepoint, one or two operations, then a rollback to it or its release. */
  private void savepointBlock(boolean writer) throws SQLException {
    String name = "s" + (++savepoints);
    exec("savepoint " + name);
    log(Op.of("savepoint").savepoint(name).outcome("ok"));
    boolean failed = false;
    try {
      for (int i = 0, n = 1 + rnd.nextInt(2); i < n; i++) {
        operation(writer);
      }
    } catch (SQLException e) {
      if (Servers.connectionLost(e)) {
        throw e;
      }
      failed = true; // a failed statement inside a savepoint: roll back to it and go on
    }
    if (failed || rnd.nextBoolean()) {
      exec("rollback to savepoint " + name);
      log(Op.of("rollback_to").savepoint(name).outcome("ok"));
    } else {
      exec("release savepoint " + name);
      log(Op.of("release").savepoint(name).outcome("ok"));
    }
  }

  private void operation(boolean writer) throws SQLException {
    int tbl = 1 + rnd.nextInt(w.tables);
    int pick = writer ? rnd.nextInt(100) : 0;
    if (pick < 35) {
      read(tbl);
    } else if (branch != null && pick < 52) {
      // branch views take no ON CONFLICT
      long k = writeKey();
      write("insert", tbl, "insert into %s (id, v) select ?, ? where not exists (select 1 from %1$s where id = ?) "
          + "returning id::bigint, v", List.of(k, value(k), k), null, null);
    } else if (pick < 52) {
      long k = writeKey();
      write("insert", tbl, "insert into %s (id, v) values (?, ?) on conflict (id) do nothing returning id::bigint, v",
          List.of(k, value(k)), "insert into %s (id, v) values (?, ?) on conflict (id) do nothing", null);
    } else if (pick < 72) {
      long k = writeKey();
      write("update", tbl, "update %s set v = ? where id = ? returning id::bigint, v", List.of(value(k), k),
          "update %s set v = ? where id = ?", null);
    } else if (pick < 78) {
      long lo = writeKey();
      long hi = Math.min(branch == null ? Schema.KEYS - 1 : Schema.KEYS / 2 - 1, lo + rnd.nextInt(5));
      long wid = w.writeNumbers.incrementAndGet();
      write("update", tbl, "update %s set v = ? * 1000 + id where id between ? and ? returning id::bigint, v",
          List.of(wid, lo, hi), "update %s set v = ? * 1000 + id where id = any (?)", wid);
    } else if (pick < 90) {
      long k = writeKey();
      write("delete", tbl, "delete from %s where id = ? returning id::bigint, v", List.of(k),
          "delete from %s where id = any (?)", null);
    } else {
      long from = key();
      long to = key();
      if (from == to || branch != null) {
        read(tbl);
        return;
      }
      rekey(tbl, from, to);
    }
  }

  private void read(int tbl) throws SQLException {
    long lo = key();
    long hi = Math.min(Schema.KEYS - 1, lo + rnd.nextInt(8));
    String sql = "select gnomon.coordinate(), (select array_agg(id::bigint order by id) from %1$s where id between ? "
        + "and ?), (select array_agg(v order by id) from %1$s where id between ? and ?)";
    try (PreparedStatement ps = c.prepareStatement(sql.formatted(table(tbl)))) {
      ps.setLong(1, lo);
      ps.setLong(2, hi);
      ps.setLong(3, lo);
      ps.setLong(4, hi);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        List<long[]> rows = new ArrayList<>();
        Long[] ids = longs(rs.getArray(2));
        Long[] vs = longs(rs.getArray(3));
        for (int i = 0; i < ids.length; i++) {
          rows.add(new long[] {ids[i], vs[i]});
        }
        log(Op.of("read").table(tbl).read(rs.getString(1), (int) lo, (int) hi).rows(rows).outcome("ok"));
        w.reads.incrementAndGet();
      }
    } catch (SQLException e) {
      log(Op.of("read").table(tbl).read(null, (int) lo, (int) hi).outcome("failed").error(error(e)));
      throw e;
    }
  }

  /**
   * A write to the tracked table, then the same change to the same rows of the shadow: by key (the rows the tracked
   * statement returned), so that a concurrent commit between the two statements cannot make them differ.
   */
  private void write(String op, int tbl, String sql, List<Long> params, String shadowSql, Long wid)
      throws SQLException {
    List<long[]> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql.formatted(table(tbl)))) {
      for (int i = 0; i < params.size(); i++) {
        ps.setLong(i + 1, params.get(i));
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new long[] {rs.getLong(1), rs.getLong(2)});
        }
      }
      Integer sn = shadowSql == null && branch == null ? null : 0;
      if (!rows.isEmpty() && branch != null) {
        sn = branchShadow(tbl, op, rows);
      } else if (!rows.isEmpty() && sn != null) {
        try (PreparedStatement sh = c.prepareStatement(shadowSql.formatted(Schema.shadow(tbl)))) {
          if (shadowSql.contains("any (?)")) {
            int i = 1;
            if (wid != null) {
              sh.setLong(i++, wid);
            }
            sh.setArray(i, c.createArrayOf("bigint", rows.stream().map(r -> r[0]).toArray()));
          } else {
            for (int i = 0; i < params.size(); i++) {
              sh.setLong(i + 1, params.get(i));
            }
          }
          sn = sh.executeUpdate();
        }
      }
      Op.Builder done = Op.of(op).table(tbl).rows(rows).outcome("ok");
      log(sn == null ? done : done.shadow(sn));
    } catch (SQLException e) {
      log(Op.of(op).table(tbl).outcome("failed").error(error(e)));
      throw e;
    }
  }

  /** The same change in the branch shadow: (branch, key) → the value the write left, null for a delete. */
  private int branchShadow(int tbl, String op, List<long[]> rows) throws SQLException {
    return Schema.writeBranchShadow(c, tbl, branch, rows.stream().map(r -> r[0]).toList(),
        rows.stream().map(r -> "delete".equals(op) ? null : r[1]).toList());
  }

  /** Changes a row's key (and value): a delete of the old key and an insert of the new one, in the history. */
  private void rekey(int tbl, long from, long to) throws SQLException {
    long v = value(to);
    String t = Schema.tracked(tbl);
    List<long[]> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement("update " + t + " set id = ?, v = ? where id = ? and not exists "
        + "(select 1 from " + t + " where id = ?) returning id::bigint, v")) {
      ps.setLong(1, to);
      ps.setLong(2, v);
      ps.setLong(3, from);
      ps.setLong(4, to);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new long[] {rs.getLong(1), rs.getLong(2)});
        }
      }
      int sn = 0;
      if (!rows.isEmpty()) {
        try (PreparedStatement sh = c.prepareStatement("update " + Schema.shadow(tbl)
            + " set id = ?, v = ? where id = ?")) {
          sh.setLong(1, to);
          sh.setLong(2, v);
          sh.setLong(3, from);
          sn = sh.executeUpdate();
        }
      }
      log(Op.of("rekey").table(tbl).from(from).rows(rows).shadow(sn).outcome("ok"));
    } catch (SQLException e) {
      log(Op.of("rekey").table(tbl).from(from).outcome("failed").error(error(e)));
      throw e;
    }
  }

  /** The table, or its branch view when the transaction works on a branch. */
  private String table(int tbl) {
    return branch == null ? Schema.tracked(tbl) : Schema.BRANCH_SCHEMA + "." + Schema.tracked(tbl);
  }

  /** A key; a branch transaction writes only the lower half, so the upper half stays untouched on branches. */
  private long key() {
    return rnd.nextInt(Schema.KEYS);
  }

  private long writeKey() {
    return rnd.nextInt(branch == null ? Schema.KEYS : Schema.KEYS / 2);
  }

  /** A value no other write uses: the write's number and the key. */
  private long value(long key) {
    return w.writeNumbers.incrementAndGet() * 1000 + key;
  }

  private void linger(int millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void exec(String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private void log(Op.Builder op) {
    w.log.log(op.session(no, txn, iso).branch(branch));
  }

  private static Long[] longs(Array a) throws SQLException {
    if (a == null) {
      return new Long[0];
    }
    Object[] raw = (Object[]) a.getArray();
    Long[] out = new Long[raw.length];
    for (int i = 0; i < raw.length; i++) {
      out[i] = ((Number) raw[i]).longValue();
    }
    return out;
  }

  private static long micros(long t0) {
    return (System.nanoTime() - t0) / 1000;
  }

  static String error(SQLException e) {
    String m = e.getMessage() == null ? "" : e.getMessage().lines().findFirst().orElse("");
    return e.getSQLState() + " " + m;
  }

  void close() {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException ignored) {
        // already gone
      }
      c = null;
    }
  }
}
