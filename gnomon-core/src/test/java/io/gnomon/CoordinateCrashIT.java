package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.internal.Errors;
import io.gnomon.sql.Catalog;
import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PostgresProvider;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Coordinates across faults that lose WAL. A transaction that ends just before a coordinate, without its end reaching
 * the disk (a rollback is never flushed), is forgotten by a crash or a failover, and the server gives its xid to the
 * next transaction; a bare snapshot from before the fault then counts that later transaction in. Each test first shows
 * the reuse on the bare {@code v1:} form (so it demonstrates the fault it guards against, and fails when the scenario
 * did not arise), then that Gnomon's coordinate refuses the read with GN013 while a coordinate captured before a tick
 * that survived reads exactly; a clean restart keeps every coordinate readable.
 */
class CoordinateCrashIT {

  private static ClusterOptions options() {
    // the WAL writer must not flush the rollback on its own before the fault
    return ClusterOptions.builder().set("wal_writer_delay", "10000ms").build();
  }

  @Test
  void aCrashThatReusesAnXidMakesLaterCoordinatesRefusedAndEarlierOnesExact() throws Exception {
    try (PgCluster pg = PostgresProvider.startCluster(options())) {
      pg.createDatabase("coord_crash");
      DataSource ds = pg.dataSource("coord_crash");
      Before before = beforeFault(ds);

      pg.crash();
      pg.start();

      assertNotEquals(before.incarnation, one(ds, "select gnomon.incarnation()::text"), "a crash starts a new incarnation");
      afterFault(ds, before);
    }
  }

  @Test
  void aFailoverToASynchronousStandbyIsGuardedTheSameWay() throws Exception {
    ClusterOptions o = options().toBuilder().walLevel("replica").maxWalSenders(4).build();
    try (PgCluster pg = PostgresProvider.startCluster(o)) {
      pg.createDatabase("coord_failover");
      PgCluster standby = pg.startStandby(true);
      Before before = beforeFault(pg.dataSource("coord_failover"));

      pg.crash();
      standby.promote();
      DataSource ds = standby.dataSource("coord_failover");
      assertNotEquals(before.incarnation, one(ds, "select gnomon.incarnation()::text"), "a promoted standby is another incarnation");
      afterFault(ds, before);
    }
  }

  @Test
  void aCleanRestartKeepsTheIncarnationAndEveryCoordinate() throws Exception {
    try (PgCluster pg = PostgresProvider.startCluster(options())) {
      pg.createDatabase("coord_restart");
      DataSource ds = pg.dataSource("coord_restart");
      Catalog.install(ds);
      exec(ds, "create table t (id int primary key, v text)", "select gnomon.track('public.t')",
          "insert into t values (1, 'base')");
      String incarnation = one(ds, "select gnomon.incarnation()::text");
      String c = one(ds, "select gnomon.coordinate()");
      exec(ds, "insert into t values (2, 'later')");

      pg.restart();

      assertEquals(incarnation, one(ds, "select gnomon.incarnation()::text"));
      assertEquals(List.of("1=base"), rows(ds, "select id || '=' || v from gnomon_t.t_as_of('" + c + "') order by id"));
    }
  }

  /** What was captured before the fault. */
  private record Before(String incarnation, String early, String late, long rolledBackXid) {}

  private static Before beforeFault(DataSource ds) throws SQLException {
    Catalog.install(ds);
    exec(ds, "create table t (id int primary key, v text)", "select gnomon.track('public.t')",
        "insert into t values (1, 'base')");
    String incarnation = one(ds, "select gnomon.incarnation()::text");
    String early = one(ds, "select gnomon.coordinate()");
    assertTrue(early.startsWith("v2:" + incarnation + ":"), early);
    exec(ds, "select gnomon.tick()"); // committed (and flushed) after `early`: it anchors it
    long xid;
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      try (ResultSet rs = st.executeQuery("select pg_current_xact_id()::text::bigint")) {
        rs.next();
        xid = rs.getLong(1);
      }
      c.rollback(); // its abort record stays in the WAL buffers
    }
    String late = one(ds, "select gnomon.coordinate()");
    return new Before(incarnation, early, late, xid);
  }

  private static void afterFault(DataSource ds, Before before) throws SQLException {
    long reused;
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      c.setAutoCommit(false);
      st.execute("insert into t values (3, 'after the fault')");
      try (ResultSet rs = st.executeQuery("select pg_current_xact_id()::text::bigint")) {
        rs.next();
        reused = rs.getLong(1);
      }
      c.commit();
    }
    assertEquals(before.rolledBackXid, reused, "the server should have reused the xid of the transaction it forgot");
    String snapshot = before.late.substring(("v2:" + before.incarnation + ":").length());
    String bare = "v1:" + snapshot;
    // the fault Gnomon guards against: the bare snapshot counts the later transaction in
    assertEquals(List.of("true"),
        rows(ds, "select pg_visible_in_snapshot('" + reused + "'::xid8, '" + snapshot + "'::pg_snapshot)::text"));
    // Gnomon's coordinate refuses it, in every read that takes a coordinate, and so does the older v1 form, which
    // names no incarnation: it is read as one of the earliest recorded, whose last surviving tick it is after
    for (String sql : List.of("select count(*) from gnomon_t.t_as_of('" + before.late + "')",
        "select count(*) from gnomon_t.t_at(gnomon.point('main', '" + before.late + "'))",
        "select gnomon.parse_coordinate('" + before.late + "')",
        "select gnomon.branch_create('late', 'main', '" + before.late + "')",
        "select count(*) from gnomon_t.t_as_of('" + bare + "')",
        "select count(*) from gnomon_t.t_at(gnomon.point('main', '" + bare + "'))")) {
      CoordinateLostException e = assertThrows(CoordinateLostException.class, () -> translated(ds, sql), sql);
      assertEquals("GN013", e.sqlState());
      assertTrue(e.getMessage().contains("after the last tick that survived it"), e.getMessage());
    }
    AsOf asOf = Gnomon.open(ds).asOf(Coordinate.parse(before.late));
    try (Connection c = ds.getConnection(); java.sql.PreparedStatement ps = asOf.prepare(c, "public.t", "true")) {
      SQLException e = assertThrows(SQLException.class, () -> ps.executeQuery().close());
      assertEquals("GN013", e.getSQLState());
    }
    // the coordinate captured before the surviving tick reads exactly, as does a branch forked there
    assertEquals(List.of("1=base"), rows(ds, "select id || '=' || v from gnomon_t.t_as_of('" + before.early + "') order by id"));
    String bareEarly = "v1:" + before.early.substring(("v2:" + before.incarnation + ":").length());
    assertEquals(List.of("1=base"), rows(ds, "select id || '=' || v from gnomon_t.t_as_of('" + bareEarly + "') order by id"));
    exec(ds, "select gnomon.branch_create('early', 'main', '" + before.early + "')");
    assertEquals(List.of("1=base"), rows(ds, "select id || '=' || v from gnomon_t.t_at(gnomon.point('early')) order by id"));
    // and so does a coordinate of the new incarnation
    String now = one(ds, "select gnomon.coordinate()");
    assertEquals(List.of("1=base", "3=after the fault"),
        rows(ds, "select id || '=' || v from gnomon_t.t_as_of('" + now + "') order by id"));
  }

  private static void translated(DataSource ds, String sql) {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      st.executeQuery(sql).close();
    } catch (SQLException e) {
      throw Errors.translate("reading", e);
    }
  }

  private static void exec(DataSource ds, String... statements) throws SQLException {
    try (Connection c = ds.getConnection(); Statement st = c.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    }
  }

  private static String one(DataSource ds, String sql) throws SQLException {
    List<String> r = rows(ds, sql);
    assertEquals(1, r.size(), sql);
    return r.get(0);
  }

  private static List<String> rows(DataSource ds, String sql) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Connection c = ds.getConnection(); Statement st = c.createStatement(); ResultSet rs = st.executeQuery(sql)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }
}
