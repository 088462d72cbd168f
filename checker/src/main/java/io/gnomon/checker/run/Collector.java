package io.gnomon.checker.run;

import io.gnomon.checker.history.History;
import io.gnomon.checker.history.Op;
import io.gnomon.checker.history.Txn;
import io.gnomon.checker.verify.AmcheckRun;
import io.gnomon.checker.verify.BranchVersion;
import io.gnomon.checker.verify.Delivered;
import io.gnomon.checker.verify.Observations;
import io.gnomon.checker.verify.Version;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/** Reads back from the final primary what the verifier needs, and replays every logged read as of its coordinate. */
public final class Collector {
  private static final int REPLAY_BATCH = 400;
  /**
   * Branch reads replayed at most: each is a statement of its own (see {@link #replay}) costing a few milliseconds, so
   * beyond this many a sample of this size, fixed by the history, is replayed.
   */
  public static final int MAX_BRANCH_REPLAYS = 2000;

  private Collector() {}

  public static Observations collect(Connection c, History history, int tables, Map<Integer, Map<Long, Long>> initial,
      String feedProblem, List<AmcheckRun> amchecks, Map<Long, Object> scratchReplays, boolean asyncStandby)
      throws SQLException {
    c.setAutoCommit(true);
    Map<Integer, String[]> generated = Schema.generated(c, tables);
    Map<Long, Long> markers = new HashMap<>();
    query(c, "select txn, xid::text from ck_txn", rs -> markers.put(rs.getLong(1), Long.parseLong(rs.getString(2))));
    Map<Long, String> xactStatus = new HashMap<>();
    for (Txn t : history.txns()) {
      if (t.reported() == Txn.Reported.UNKNOWN && t.xid() != null) {
        try (PreparedStatement ps = c.prepareStatement("select pg_xact_status(?::xid8)")) {
          ps.setString(1, Long.toString(t.xid()));
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            xactStatus.put(t.no(), rs.getString(1));
          }
        } catch (SQLException e) {
          xactStatus.put(t.no(), "error: " + e.getMessage());
        }
      }
    }
    List<Version> versions = new ArrayList<>();
    Map<Integer, Map<Long, Long>> live = new TreeMap<>();
    Map<Integer, Map<Long, Long>> shadow = new TreeMap<>();
    for (int t = 1; t <= tables; t++) {
      int tbl = t;
      query(c, "select g_vid, g_xid::text, g_op::text, id, v from gnomon_t.\"" + generated.get(t)[1] + "\"",
          rs -> versions.add(new Version(tbl, rs.getLong(1), Long.parseLong(rs.getString(2)), rs.getString(3).charAt(0),
              rs.getLong(4), (Long) rs.getObject(5))));
      Map<Long, Long> l = new TreeMap<>();
      query(c, "select id, v from " + Schema.tracked(t), rs -> l.put(rs.getLong(1), rs.getLong(2)));
      live.put(t, l);
      Map<Long, Long> s = new TreeMap<>();
      query(c, "select id, v from " + Schema.shadow(t), rs -> s.put(rs.getLong(1), rs.getLong(2)));
      shadow.put(t, s);
    }
    List<Delivered> delivered = new ArrayList<>();
    query(c, "select n, tbl, key, xid::text, vid, op::text, tick, (before->>'v')::bigint, (after->>'v')::bigint"
            + " from ck_feed order by n",
        rs -> delivered.add(new Delivered(rs.getLong(1), rs.getInt(2), rs.getLong(3), Long.parseLong(rs.getString(4)),
            rs.getLong(5), rs.getString(6).charAt(0), rs.getLong(7), true, (Long) rs.getObject(8),
            (Long) rs.getObject(9))));
    Set<Long> sampled = branchSample(history);
    Map<Long, String> replayErrors = new HashMap<>();
    Map<Long, List<long[]>> replays = replay(c, history, generated,
        op -> op.br() == null || sampled.contains(op.id()), false, replayErrors);
    Map<Long, List<long[]>> withoutOwn = Map.of();
    Map<String, Map<Integer, Map<Long, Long>>> branchNow = new TreeMap<>();
    Map<String, Map<Integer, Map<Long, Long>>> parentAtCutoff = new TreeMap<>();
    Map<String, String> status = branchStatus(c, history, generated);
    for (Op b : history.branches()) {
      if (!"intact".equals(status.get(b.br()))) {
        continue;
      }
      Map<Integer, Map<Long, Long>> now = new TreeMap<>();
      Map<Integer, Map<Long, Long>> parent = new TreeMap<>();
      for (int t = 1; t <= tables; t++) {
        now.put(t, rows(c, "select id::bigint, v from gnomon_t.\"" + generated.get(t)[2] + "\"(gnomon.point(?))",
            b.br()));
        parent.put(t, "main".equals(b.kind())
            ? rows(c, "select id::bigint, v from gnomon_t.\"" + generated.get(t)[0] + "\"(?::text)", b.coord())
            : rows(c, "select id::bigint, v from gnomon_t.\"" + generated.get(t)[2] + "\"(gnomon.point(?, ?))",
                b.kind(), b.coord()));
      }
      branchNow.put(b.br(), now);
      parentAtCutoff.put(b.br(), parent);
    }
    // the same reads at several points in one statement (a lateral join, as a user reading many branches would)
    List<Map<String, Map<Integer, Map<Long, Long>>>> together = new ArrayList<>();
    List<String> names = history.branches().stream().map(Op::br).filter(b -> "intact".equals(status.get(b))).toList();
    if (names.size() > 1) {
      List<String> reversed = new ArrayList<>(names);
      java.util.Collections.reverse(reversed);
      for (List<String> order : List.of(names, reversed)) {
        Map<String, Map<Integer, Map<Long, Long>>> byBranch = new TreeMap<>();
        for (int t = 1; t <= tables; t++) {
          try (PreparedStatement ps = c.prepareStatement("select r.b, a.id::bigint, a.v from unnest(?::text[]) "
              + "with ordinality r(b, o) cross join lateral gnomon_t.\"" + generated.get(t)[2] + "\"(gnomon.point(r.b)) a")) {
            ps.setArray(1, c.createArrayOf("text", order.toArray()));
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                byBranch.computeIfAbsent(rs.getString(1), x -> new TreeMap<>()).computeIfAbsent(t, x -> new TreeMap<>())
                    .put(rs.getLong(2), rs.getLong(3));
              }
            }
          }
        }
        together.add(byBranch);
      }
    }
    Map<String, Map<Integer, Map<Long, Long>>> branchShadow = new TreeMap<>();
    List<BranchVersion> branchVersions = new ArrayList<>();
    for (int t = 1; t <= tables; t++) {
      int tbl = t;
      query(c, "select b, id, v from " + Schema.branchShadow(t), rs -> branchShadow.computeIfAbsent(rs.getString(1),
          x -> new TreeMap<>()).computeIfAbsent(tbl, x -> new TreeMap<>()).put(rs.getLong(2), (Long) rs.getObject(3)));
      query(c, "select b.branch_name, h.g_vid, h.g_xid::text, h.g_op::text, coalesce(h.g_del, false), h.id, h.v "
              + "from gnomon_t.\"" + generated.get(t)[3] + "\" h join gnomon.branches() b on b.branch_id = h.g_branch",
          rs -> branchVersions.add(new BranchVersion(tbl, rs.getString(1), rs.getLong(2),
              Long.parseLong(rs.getString(3)), rs.getString(4).charAt(0), rs.getBoolean(5), rs.getLong(6),
              (Long) rs.getObject(7))));
    }
    return new Observations(history, markers, xactStatus, initial, versions, live, shadow, delivered, feedProblem,
        replays, withoutOwn, amchecks, branchNow, parentAtCutoff, together, replayErrors, asyncStandby, status,
        branchShadow, branchVersions, scratchReplays);
  }

  /**
   * Each branch of the history after the run: {@code intact} when it reads, {@code lost} when reading it raises GN053
   * (a crash emptied the scratch branch), {@code missing} for GN050, {@code lost-but-readable} when it reads although
   * gnomon.branches() says it is not intact.
   */
  private static Map<String, String> branchStatus(Connection c, History history, Map<Integer, String[]> generated)
      throws SQLException {
    Map<String, Boolean> intact = new HashMap<>();
    query(c, "select branch_name, intact from gnomon.branches()", rs -> intact.put(rs.getString(1), rs.getBoolean(2)));
    Map<String, String> out = new TreeMap<>();
    for (Op b : history.branches()) {
      try (PreparedStatement ps = c.prepareStatement("select count(*) from gnomon_t.\"" + generated.get(1)[2]
          + "\"(gnomon.point(?))")) {
        ps.setString(1, b.br());
        ps.executeQuery().close();
        out.put(b.br(), Boolean.FALSE.equals(intact.get(b.br())) ? "lost-but-readable" : "intact");
      } catch (SQLException e) {
        out.put(b.br(), "GN053".equals(e.getSQLState()) ? "lost" : "GN050".equals(e.getSQLState()) ? "missing"
            : "error: " + e.getSQLState() + " " + e.getMessage().lines().findFirst().orElse(""));
      }
    }
    return out;
  }

  /**
   * Replays the given reads of writing transactions as of their coordinate with the reader's own xid added to its
   * in-progress list: what the coordinate should mean. Only reads whose plain replay differed need it.
   */
  public static Map<Long, List<long[]>> replayWithoutOwn(Connection c, History history, int tables, Set<Long> reads)
      throws SQLException {
    return replay(c, history, Schema.generated(c, tables), op -> reads.contains(op.id()), true);
  }

  /** The branch reads to replay: all of them, or a sample of {@link #MAX_BRANCH_REPLAYS} fixed by their numbers. */
  private static Set<Long> branchSample(History history) {
    List<Long> ids = new ArrayList<>();
    for (Op op : history.ops()) {
      if ("read".equals(op.op()) && op.ok() && op.coord() != null && op.br() != null) {
        ids.add(op.id());
      }
    }
    ids.sort(java.util.Comparator.comparingLong(id -> Long.hashCode(id * 0x9E3779B97F4A7C15L) & 0xffffffffL));
    return new java.util.HashSet<>(ids.subList(0, Math.min(ids.size(), MAX_BRANCH_REPLAYS)));
  }

  /** The chosen successful reads, read again as of their coordinate, in batches of a few hundred per statement. */
  private static Map<Long, List<long[]>> replay(Connection c, History history, Map<Integer, String[]> generated,
      java.util.function.Predicate<Op> which, boolean withoutOwn) throws SQLException {
    return replay(c, history, generated, which, withoutOwn, new HashMap<>());
  }

  private static Map<Long, List<long[]>> replay(Connection c, History history, Map<Integer, String[]> generated,
      java.util.function.Predicate<Op> which, boolean withoutOwn, Map<Long, String> errors) throws SQLException {
    Map<Long, List<long[]>> out = new HashMap<>();
    Map<Integer, List<Op>> byTable = new TreeMap<>();
    Map<Long, String> coordinates = new HashMap<>();
    for (Txn t : history.txns()) {
      Long own = t.xid();
      if (withoutOwn && own == null) {
        continue;
      }
      for (Op op : t.ops()) {
        if ("read".equals(op.op()) && op.ok() && op.coord() != null && which.test(op)) {
          byTable.computeIfAbsent(op.br() == null ? op.tbl() : -op.tbl(), x -> new ArrayList<>()).add(op);
          coordinates.put(op.id(), withoutOwn ? withInProgress(op.coord(), own) : op.coord());
        }
      }
    }
    for (Map.Entry<Integer, List<Op>> e : byTable.entrySet()) {
      // main reads through the as-of function, branch reads (negative keys here) through the read at a point
      String sql = e.getKey() > 0
          ? "select r.i, a.id::bigint, a.v from unnest(?::text[], ?::int[], ?::int[], ?::bigint[], ?::text[]) "
              + "r(c, lo, hi, i, b) cross join lateral gnomon_t.\"" + generated.get(e.getKey())[0] + "\"(r.c) a "
              + "where a.id between r.lo and r.hi"
          : "select r.i, a.id::bigint, a.v from unnest(?::text[], ?::int[], ?::int[], ?::bigint[], ?::text[]) "
              + "r(c, lo, hi, i, b) cross join lateral gnomon_t.\"" + generated.get(-e.getKey())[2]
              + "\"(gnomon.point(r.b, r.c)) a where a.id between r.lo and r.hi";
      List<Op> reads = e.getValue();
      if (e.getKey() < 0) {
        // one statement per branch read: called laterally for several points in one statement, the read at a point
        // leaks state from one point to the next (rows of one point missing or taken from another; reported)
        try (PreparedStatement ps = c.prepareStatement(branchReplaySql(generated, -e.getKey()))) {
          for (Op op : reads) {
            try {
              out.put(op.id(), replayBranchRead(ps, op, coordinates.get(op.id())));
            } catch (SQLException failed) {
              errors.put(op.id(), failed.getSQLState() + " " + failed.getMessage().lines().findFirst().orElse(""));
            }
          }
        }
        continue;
      }
      for (int from = 0; from < reads.size(); from += REPLAY_BATCH) {
        List<Op> all = reads.subList(from, Math.min(reads.size(), from + REPLAY_BATCH));
        try {
          replayBatch(c, sql, all, coordinates, out);
        } catch (SQLException failed) {
          // one unreadable coordinate fails the batch: read them one by one to know which
          for (Op op : all) {
            try {
              replayBatch(c, sql, List.of(op), coordinates, out);
            } catch (SQLException one) {
              out.remove(op.id());
              errors.put(op.id(), one.getSQLState() + " " + one.getMessage().lines().findFirst().orElse(""));
            }
          }
        }
      }
    }
    return out;
  }

  /** The statement that replays one branch read of a table: parameters branch, coordinate, lowest and highest key. */
  static String branchReplaySql(Map<Integer, String[]> generated, int tbl) {
    return "select id::bigint, v from gnomon_t.\"" + generated.get(tbl)[2] + "\"(gnomon.point(?, ?)) "
        + "where id between ? and ?";
  }

  /** Replays one branch read as of a coordinate with a statement of {@link #branchReplaySql}. */
  static List<long[]> replayBranchRead(PreparedStatement ps, Op op, String coordinate) throws SQLException {
    ps.setString(1, op.br());
    ps.setString(2, coordinate);
    ps.setInt(3, op.lo());
    ps.setInt(4, op.hi());
    List<long[]> rows = new ArrayList<>();
    try (ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        rows.add(new long[] {rs.getLong(1), rs.getLong(2)});
      }
    }
    return rows;
  }

  private static void replayBatch(Connection c, String sql, List<Op> batch, Map<Long, String> coordinates,
      Map<Long, List<long[]>> out) throws SQLException {
    int n = batch.size();
    String[] coords = new String[n];
    Integer[] lo = new Integer[n];
    Integer[] hi = new Integer[n];
    Long[] ids = new Long[n];
    String[] branches = new String[n];
    for (int i = 0; i < n; i++) {
      Op op = batch.get(i);
      coords[i] = coordinates.get(op.id());
      lo[i] = op.lo();
      hi[i] = op.hi();
      ids[i] = op.id();
      branches[i] = op.br();
      out.put(op.id(), new ArrayList<>());
    }
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setArray(1, c.createArrayOf("text", coords));
      ps.setArray(2, c.createArrayOf("integer", lo));
      ps.setArray(3, c.createArrayOf("integer", hi));
      ps.setArray(4, c.createArrayOf("bigint", ids));
      ps.setArray(5, c.createArrayOf("text", branches));
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.get(rs.getLong(1)).add(new long[] {rs.getLong(2), rs.getLong(3)});
        }
      }
    }
  }

  /** The coordinate with {@code xid} in its in-progress list (xmin lowered to it if need be). */
  static String withInProgress(String coordinate, long xid) {
    String[] p = coordinate.split(":", -1);
    String prefix = "v1:";
    if (p.length == 5) { // v2:incarnation:xmin:xmax:xip
      prefix = "v2:" + p[1] + ":";
      p = new String[] {"v1", p[2], p[3], p[4]};
    }
    long xmin = Long.parseLong(p[1]);
    long xmax = Long.parseLong(p[2]);
    if (xid >= xmax) {
      return coordinate;
    }
    java.util.TreeSet<Long> xip = new java.util.TreeSet<>();
    if (!p[3].isEmpty()) {
      for (String x : p[3].split(",")) {
        xip.add(Long.parseLong(x));
      }
    }
    xip.add(xid);
    return prefix + Math.min(xmin, xid) + ":" + xmax + ":" + String.join(",", xip.stream().map(String::valueOf)
        .toList());
  }

  private static Map<Long, Long> rows(Connection c, String sql, String... params) throws SQLException {
    Map<Long, Long> out = new TreeMap<>();
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      for (int i = 0; i < params.length; i++) {
        ps.setString(i + 1, params[i]);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          out.put(rs.getLong(1), rs.getLong(2));
        }
      }
    }
    return out;
  }

  @FunctionalInterface
  private interface Row {
    void accept(ResultSet rs) throws SQLException;
  }

  private static void query(Connection c, String sql, Row row) throws SQLException {
    try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        row.accept(rs);
      }
    }
  }
}
