package io.gnomon.checker.run;

import io.gnomon.checker.history.Op;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * Merges while the sessions run: a branch into main (while other sessions write main), main into a branch (a
 * refresh), a branch into another (parent, child or sibling), among the logged branches, one merge at a time, with a
 * strategy for the value column chosen per merge ({@code theirs}, {@code ours}, {@code max}, {@code counter}, or
 * {@code fail}, Gnomon's default, which reports a conflict) and a delete-against-update rule. A merge that reports
 * conflicts must change nothing; its conflicts are then resolved ({@code ours}, {@code theirs}, {@code base} or a
 * value) and the merge runs again in the same transaction.
 *
 * <p>Each merge is one REPEATABLE READ transaction that logs what the verifier needs to check that it lost nothing:
 * per table ours (the target) and theirs (the source), read in the merge's snapshot; the merge's status; the base
 * (read at the base point Gnomon recorded for the merge); the conflicts and resolutions; the rows it wrote (applied to
 * the shadow of main or of the target branch, so that the shadow checks hold) and the target after it. A
 * serialization failure (a concurrent write to a row the merge reads or writes) is retried; after three in a row the
 * merge runs alone (the sessions wait at their next transaction, see {@link Workload#gate}).
 */
final class Merger implements Runnable {
  static final List<String> STRATEGIES = List.of("theirs", "counter", "fail", "max", "ours", "theirs", "fail");
  private static final List<String> RULES = List.of("update_wins", "delete_wins", "conflict");
  private static final String[] OPS = {"I", "U", "D"};

  private final Workload w;
  private final Random rnd;
  private final long firstAt;
  private final long every;
  private int no;
  /** Merges that committed. */
  private int done;
  volatile Throwable failure;

  /**
   * @param firstAt when the first merge runs (ms since the start), once a branch exists
   * @param every the mean time between merges (ms)
   */
  Merger(Workload w, long firstAt, long every) {
    this.w = w;
    this.rnd = new Random(w.seed * 17 + 5);
    this.firstAt = firstAt;
    this.every = every;
  }

  @Override
  public void run() {
    try {
      long next = firstAt;
      while (!w.stopping) {
        if (w.log.elapsedMillis() < next || w.logged.isEmpty()) {
          Thread.sleep(20);
          continue;
        }
        mergeOnce(false);
        next = w.log.elapsedMillis() + every / 2 + rnd.nextLong(Math.max(1, every));
      }
      if (done == 0 && !w.logged.isEmpty()) {
        mergeOnce(true); // none got through while the sessions ran (a short run, a loaded machine): one now, alone
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      failure = e;
    }
  }

  /**
   * Picks a pair and a strategy, and merges (retrying serialization failures, then alone). {@code last}: the
   * workload is stopping; merge anyway.
   */
  private void mergeOnce(boolean last) {
    no++;
    List<String> logged = List.copyOf(w.logged);
    String source;
    String target;
    int pick = rnd.nextInt(100);
    String b = logged.get(rnd.nextInt(logged.size()));
    if (no <= 2) { // b1 into main with theirs: the merges the mutant merge-drops-side must not pass
      pick = 0;
      b = logged.get(0);
    } else if (no == 4) { // the newest branch forked from main into main, its first merge: likely conflicts
      pick = 0;
      b = logged.stream().filter(x -> "main".equals(Schema.parent(Integer.parseInt(x.substring(1)))))
          .reduce((x, y) -> y).orElse(logged.get(0));
    }
    if (pick < 40 || logged.size() < 2 && pick >= 60) {
      source = b;
      target = "main";
    } else if (pick < 60) {
      source = "main";
      target = b;
    } else {
      source = b;
      List<String> others = new ArrayList<>(logged);
      others.remove(b);
      target = others.get(rnd.nextInt(others.size()));
    }
    String strategy = no <= 2 ? "theirs" : no == 4 ? "fail" : STRATEGIES.get(rnd.nextInt(STRATEGIES.size()));
    String rule = "fail".equals(strategy) ? "conflict" : RULES.get(rnd.nextInt(2));
    for (int attempt = 0; attempt < 8 && (last || !w.stopping); attempt++) {
      boolean alone = attempt >= 3 || last;
      if (attempt > 0) {
        try {
          Thread.sleep(Math.min(1000, 50L << attempt)); // a fault may be under way
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
      if (alone) {
        w.gate.writeLock().lock();
      }
      try {
        String outcome = merge(source, target, strategy, rule, alone);
        if (outcome != null) {
          w.merges.merge(outcome, 1, Integer::sum);
          done += outcome.startsWith("failed") || outcome.startsWith("unknown") ? 0 : 1;
          return;
        }
        w.merges.merge("retried after a serialization failure or a fault", 1, Integer::sum);
      } finally {
        if (alone) {
          w.gate.writeLock().unlock();
        }
      }
    }
    w.merges.merge("given up", 1, Integer::sum);
  }

  /** One attempt; returns how it ended (for the counts), or null to try again. */
  private String merge(String source, String target, String strategy, String rule, boolean alone) {
    long txn = w.txnNumbers.incrementAndGet();
    String br = "main".equals(target) ? null : target;
    long t0 = System.nanoTime();
    boolean atCommit = false;
    try (Connection c = w.servers.connect()) {
      // declared in a transaction of their own (only the merges declare them), so that the merge's snapshot is taken
      // by gnomon.merge itself: the shorter the time between snapshot and merge, the fewer serialization failures
      // when a session writes a row the merge locks. Declared again before every attempt, on the server the merge
      // runs on: an asynchronous failover may have lost an earlier declaration
      for (int t = 1; t <= w.tables; t++) {
        exec(c, "select gnomon.set_merge_strategy(?, 'v', ?)", "public." + Schema.tracked(t), strategy);
        exec(c, "select gnomon.set_merge_rule(?, ?)", "public." + Schema.tracked(t), rule);
      }
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      try {
        Map<Integer, String[]> generated = w.generated;
        Step first = runMerge(c, source, target);
        try (PreparedStatement ps = c.prepareStatement(
            "insert into ck_txn (txn, session, xid) values (?, 0, pg_current_xact_id()) returning xid::text")) {
          ps.setLong(1, txn);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            log(txn, br, Op.of("begin").xid(rs.getString(1)).outcome("ok"));
          }
        }
        log(txn, br, Op.of("merge").merge(source, target, strategy + "/" + rule, first.id(), first.text())
            .outcome("ok"));
        // ours and theirs as the merge saw them: as of the transaction's snapshot, without its own writes
        for (int t = 1; t <= w.tables; t++) {
          log(txn, br, Op.of("merge_ours").table(t).rows(state(c, generated, t, target, first.coordinate()))
              .outcome("ok"));
          log(txn, br, Op.of("merge_theirs").table(t).rows(state(c, generated, t, source, first.coordinate()))
              .outcome("ok"));
        }
        logStep(c, txn, br, generated, target, first);
        String outcome = first.status();
        if ("conflicts".equals(first.status())) {
          resolve(c, txn, br);
          Step again = runMerge(c, source, target);
          log(txn, br, Op.of("merge").merge(source, target, strategy + "/" + rule, again.id(), again.text())
              .outcome("ok"));
          logStep(c, txn, br, generated, target, again);
          outcome = "conflicts, then " + again.status() + " once resolved";
        }
        atCommit = true;
        c.commit();
        log(txn, br, Op.of("commit").outcome("ok").micros((System.nanoTime() - t0) / 1000));
        w.committed.incrementAndGet();
        return (alone ? "run alone: " : "") + outcome;
      } catch (SQLException e) {
        boolean lost = Servers.connectionLost(e);
        log(txn, br, Op.of(atCommit ? "commit" : "abort").outcome(atCommit && lost ? "unknown" : "failed")
            .error(Session.error(e)).micros((System.nanoTime() - t0) / 1000));
        if (atCommit && lost) {
          w.unknown.incrementAndGet();
          return "unknown outcome";
        }
        w.failed.incrementAndGet();
        if (!lost) {
          c.rollback();
        }
        if ("GN050".equals(e.getSQLState()) || "GN053".equals(e.getSQLState())) {
          return "failed: a branch is lost";
        }
        return "40001".equals(e.getSQLState()) || "40P01".equals(e.getSQLState()) || lost ? null
            : "failed: " + Session.error(e);
      }
    } catch (SQLException e) {
      return null; // could not connect (a fault under way): try again
    }
  }

  /** A gnomon.merge call: the merge's id, status, status in words, and the coordinate of its snapshot. */
  private record Step(long id, String status, String text, String coordinate) {}

  /** Runs gnomon.merge (the transaction's first statement takes its snapshot). */
  private static Step runMerge(Connection c, String source, String target) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("select merge_id, status, status || ' (' || adds || ' adds, ' "
        + "|| modifications || ' modifications, ' || deletes || ' deletes, ' || conflicts || ' conflicts)', "
        + "gnomon.coordinate() from gnomon.merge(?, ?)")) {
      ps.setString(1, source);
      ps.setString(2, target);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return new Step(rs.getLong(1), rs.getString(2), rs.getString(3), rs.getString(4));
      }
    }
  }

  /** Logs a merge's base, its conflicts, the rows it wrote and the target after it. */
  private void logStep(Connection c, long txn, String br, Map<Integer, String[]> generated, String target, Step step)
      throws SQLException {
    long id = step.id();
    for (int t = 1; t <= w.tables; t++) {
      List<long[]> base = rows(c, "select id::bigint, v from gnomon_t.\"" + generated.get(t)[2]
          + "\"((select base from gnomon.merge where merge_id = ?))", id);
      log(txn, br, Op.of("merge_base").table(t).rows(base).outcome("ok"));
      List<long[]> conflicts = new ArrayList<>();
      try (PreparedStatement ps = c.prepareStatement("select (key->>'id')::bigint, case kind when 'column' then 0 "
          + "when 'delete_vs_update' then 1 else 2 end from gnomon.merge_conflicts(?) where table_name = ? "
          + "order by 1")) {
        ps.setLong(1, id);
        ps.setString(2, "public." + Schema.tracked(t));
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            conflicts.add(new long[] {rs.getLong(1), rs.getLong(2)});
          }
        }
      }
      if (!conflicts.isEmpty()) {
        log(txn, br, Op.of("merge_conflicts").table(t).rows(conflicts).outcome("ok"));
      }
      written(c, txn, br, generated, t, target);
      log(txn, br, Op.of("merge_result").table(t).rows(state(c, generated, t, target, null)).outcome("ok"));
    }
  }

  /**
   * Declares a resolution for every conflict of the last merge: {@code ours}, {@code theirs}, {@code base} (when there
   * was a base value) or a new value for a column; {@code ours} or {@code theirs} for a row. Logged per table as rows
   * {@code [key, choice (0 ours, 1 theirs, 2 base, 3 value), value]}.
   */
  private void resolve(Connection c, long txn, String br) throws SQLException {
    List<Object[]> conflicts = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement("select table_name, key::text, column_name, (key->>'id')::bigint, "
        + "base is not null and base <> 'null'::jsonb from gnomon.merge_conflicts((select max(merge_id) from "
        + "gnomon.merge where merge_xid = pg_current_xact_id())) order by 1, 4")) {
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          conflicts.add(new Object[] {rs.getString(1), rs.getString(2), rs.getString(3), rs.getLong(4),
              rs.getBoolean(5)});
        }
      }
    }
    Map<Integer, List<long[]>> byTable = new java.util.TreeMap<>();
    for (Object[] x : conflicts) {
      String column = (String) x[2];
      boolean row = column.isEmpty();
      int choice = rnd.nextInt(row ? 2 : 4);
      if (choice == 2 && !(Boolean) x[4]) {
        choice = 3; // no base value to take (both sides inserted the key)
      }
      long value = choice == 3 ? w.writeNumbers.incrementAndGet() * 1000 + (Long) x[3] : 0;
      try (PreparedStatement ps = c.prepareStatement("select gnomon.merge_resolve((select max(merge_id) from "
          + "gnomon.merge where merge_xid = pg_current_xact_id()), ?, ?::jsonb, ?, ?, ?::jsonb)")) {
        ps.setString(1, (String) x[0]);
        ps.setString(2, (String) x[1]);
        ps.setString(3, column);
        ps.setString(4, List.of("ours", "theirs", "base", "value").get(choice));
        ps.setString(5, choice == 3 ? Long.toString(value) : null);
        ps.execute();
      }
      int tbl = Integer.parseInt(((String) x[0]).substring(("public." + "ck_t").length()));
      byTable.computeIfAbsent(tbl, k -> new ArrayList<>()).add(new long[] {(Long) x[3], choice, value});
    }
    byTable.forEach((t, rows) -> log(txn, br, Op.of("merge_resolve").table(t).rows(rows).outcome("ok")));
  }

  /**
   * A table's rows at main or a branch: as of a coordinate, or now (null: in the merge's snapshot, with its own
   * writes).
   */
  private static List<long[]> state(Connection c, Map<Integer, String[]> generated, int tbl, String at,
      String coordinate) throws SQLException {
    if (coordinate != null) {
      return "main".equals(at)
          ? rows(c, "select id::bigint, v from gnomon_t.\"" + generated.get(tbl)[0] + "\"(?::text)", coordinate)
          : rows(c, "select id::bigint, v from gnomon_t.\"" + generated.get(tbl)[2] + "\"(gnomon.point(?, ?))", at,
              coordinate);
    }
    return "main".equals(at) ? rows(c, "select id::bigint, v from " + Schema.tracked(tbl))
        : rows(c, "select id::bigint, v from gnomon_t.\"" + generated.get(tbl)[2] + "\"(gnomon.point(?))", at);
  }

  /**
   * The rows the merge wrote to a table (its own versions: in main's history, or in the branch history of the
   * target), applied to the shadow (main's, or the target's branch shadow) and logged as {@code [id, v, 0 insert | 1
   * update | 2 delete]}.
   */
  private void written(Connection c, long txn, String br, Map<Integer, String[]> generated, int tbl, String target)
      throws SQLException {
    List<long[]> rows = new ArrayList<>();
    if (br == null) {
      String sql = "select h.id::bigint, coalesce(l.v, 0), h.g_op::text from gnomon_t.\"" + generated.get(tbl)[1]
          + "\" h left join " + Schema.tracked(tbl) + " l on l.id = h.id where h.g_xid = pg_current_xact_id() "
          + "order by h.g_vid";
      try (PreparedStatement ps = c.prepareStatement(sql); ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          rows.add(new long[] {rs.getLong(1), rs.getLong(2), List.of(OPS).indexOf(rs.getString(3))});
        }
      }
    } else {
      String sql = "select h.id::bigint, a.v from (select distinct id from gnomon_t.\"" + generated.get(tbl)[3]
          + "\" where g_xid = pg_current_xact_id() and g_branch = (select branch_id from gnomon.branches() where "
          + "branch_name = ?)) h left join gnomon_t.\"" + generated.get(tbl)[2] + "\"(gnomon.point(?)) a "
          + "on a.id = h.id order by 1";
      try (PreparedStatement ps = c.prepareStatement(sql)) {
        ps.setString(1, target);
        ps.setString(2, target);
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            Object v = rs.getObject(2);
            rows.add(new long[] {rs.getLong(1), v == null ? 0 : ((Number) v).longValue(), v == null ? 2 : 1});
          }
        }
      }
    }
    int sn = 0;
    if (!rows.isEmpty()) {
      if (br == null) {
        String s = Schema.shadow(tbl);
        for (long[] r : rows) {
          if (r[2] == 2) {
            try (PreparedStatement ps = c.prepareStatement("delete from " + s + " where id = ?")) {
              ps.setLong(1, r[0]);
              sn += ps.executeUpdate();
            }
          } else {
            try (PreparedStatement ps = c.prepareStatement(r[2] == 0 ? "insert into " + s + " (v, id) values (?, ?)"
                : "update " + s + " set v = ? where id = ?")) {
              ps.setLong(1, r[1]);
              ps.setLong(2, r[0]);
              sn += ps.executeUpdate();
            }
          }
        }
      } else {
        sn = Schema.writeBranchShadow(c, tbl, br, rows.stream().map(r -> r[0]).toList(),
            rows.stream().map(r -> r[2] == 2 ? null : r[1]).toList());
      }
    }
    log(txn, br, Op.of("merge_write").table(tbl).rows(rows).shadow(sn).outcome("ok"));
  }

  private static void exec(Connection c, String sql, String... params) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setString(i + 1, params[i]);
      }
      ps.execute();
    }
  }

  private static List<long[]> rows(Connection c, String sql, Object... params) throws SQLException {
    List<long[]> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(sql + " order by 1")) {
      for (int i = 0; i < params.length; i++) {
        ps.setObject(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.add(new long[] {rs.getLong(1), rs.getLong(2)});
        }
      }
    }
    return out;
  }

  private void log(long txn, String br, Op.Builder op) {
    w.log.log(op.session(0, txn, "rr").branch(br));
  }
}
