package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Coordinates, ticks, reads as of a time, and their errors. */
class CoordinatesIT extends GnomonIT {

  @Test
  void aCoordinateRoundTripsThroughItsTextForm() {
    Coordinate c = gnomon().coordinate();
    assertEquals(c, Coordinate.parse(c.toString()));
    assertTrue(c.toString().startsWith("v2:"));
  }

  /**
   * gnomon.coordinate() builds its text in one expression of its own (for its cost): it must stay the text
   * coordinate_text gives the snapshot with the caller's own xid added, in each case: no xid, an own xid below the
   * snapshot's xmax with other transactions in progress, and in a writing transaction in REPEATABLE READ.
   */
  @Test
  void theCoordinateIsTheSnapshotTextWithTheOwnXid() throws Exception {
    sql("create table ct (id int primary key)");
    String same = "select gnomon.coordinate() = gnomon.coordinate_text(gnomon.snapshot_text(pg_current_snapshot(),"
        + " pg_current_xact_id_if_assigned())), gnomon.coordinate(), pg_current_xact_id_if_assigned()::text";
    try (Connection other = connect();
        Connection c = connect();
        Statement st = c.createStatement()) {
      other.setAutoCommit(false);
      try (Statement o = other.createStatement()) {
        o.execute("insert into ct values (1)"); // in progress below everyone's xmax
      }
      check(st, same, false);
      c.setAutoCommit(false);
      st.execute("insert into ct values (2)");
      check(st, same, true); // the newest xid: the snapshot's xmax is the own xid
      sql("insert into ct values (9)"); // a later xid commits: the own xid is below xmax now
      String withOwn = check(st, same, true);
      c.rollback();
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      st.execute("select 1"); // the transaction's snapshot, taken before its xid
      st.execute("insert into ct values (3)");
      check(st, same, true);
      c.rollback();
      other.rollback();
      // in progress: the other session's xid and the own one
      assertEquals(2, withOwn.split(":")[4].split(",").length, withOwn);
    }
  }

  private static String check(Statement st, String sql, boolean ownXid) throws java.sql.SQLException {
    try (var rs = st.executeQuery(sql)) {
      rs.next();
      assertEquals(ownXid, rs.getString(3) != null, sql);
      assertTrue(rs.getBoolean(1), "coordinate() " + rs.getString(2) + " differs from coordinate_text's text");
      if (ownXid) {
        // the own xid is in the in-progress list (or the snapshot's xmax is at or below it)
        String[] parts = rs.getString(2).split(":");
        long own = Long.parseLong(rs.getString(3));
        assertTrue(own >= Long.parseLong(parts[3]) || java.util.Arrays.asList(parts[4].split(",")).contains(String.valueOf(own)),
            rs.getString(2) + " lacks own xid " + own);
      }
      return rs.getString(2);
    }
  }

  @Test
  void inRepeatableReadTheCoordinateIsTheTransactionSnapshot() throws Exception {
    sql("create table rr (id int primary key, v int)");
    gnomon().track("rr");
    sql("insert into rr values (1, 1)");
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);
      Coordinate inTx = Gnomon.coordinate(c);
      sql("update rr set v = 2"); // another session commits after the snapshot
      try (Statement st = c.createStatement()) {
        var rs = st.executeQuery("select v from rr");
        rs.next();
        assertEquals(1, rs.getInt(1));
      }
      c.commit();
      assertEquals("1", one("select v from gnomon_t.rr_as_of('" + inTx + "')"));
    }
  }

  @Test
  void badCoordinatesGetGnomonErrors() throws Exception {
    sql("create table bc (id int primary key)");
    gnomon().track("bc");
    MalformedCoordinateException m =
        assertThrows(MalformedCoordinateException.class, () -> sqlTranslated("select * from gnomon_t.bc_as_of('yesterday')"));
    assertEquals("GN010", m.sqlState());
    assertThrows(MalformedCoordinateException.class, () -> sqlTranslated("select * from gnomon_t.bc_as_of('v1:9:x:')"));
    assertThrows(MalformedCoordinateException.class, () -> Coordinate.parse("v2:1:2:"));
    assertThrows(MalformedCoordinateException.class, () -> Coordinate.parse("v1:5:3:"));
    // well formed but inconsistent (xmin > xmax): a Gnomon error from the read too, not PostgreSQL's 22P02
    assertThrows(MalformedCoordinateException.class, () -> sqlTranslated("select * from gnomon_t.bc_as_of('v1:5:3:')"));
    Coordinate now = gnomon().coordinate();
    Coordinate future = Coordinate.of(now.xmax() + 1000, now.xmax() + 1000, java.util.List.of());
    CoordinateInFutureException f =
        assertThrows(CoordinateInFutureException.class, () -> sqlTranslated("select * from gnomon_t.bc_as_of('" + future + "')"));
    assertTrue(f.getMessage().contains("future"), f.getMessage());
    CoordinateTooOldException old =
        assertThrows(CoordinateTooOldException.class, () -> sqlTranslated("select * from gnomon_t.bc_as_of('v1:3:3:')"));
    assertTrue(old.getMessage().contains("bc"), "names the table: " + old.getMessage());
    // a coordinate of an incarnation this database never recorded a tick of: lost, and the detail says why
    CoordinateLostException lost = assertThrows(CoordinateLostException.class,
        () -> sqlTranslated("select * from gnomon_t.bc_as_of('v2:1:" + now.xmin() + ":" + now.xmin() + ":')"));
    assertTrue(lost.getMessage().contains("No tick of that incarnation survived"), lost.getMessage());
  }

  @Test
  void v1CoordinatesGoThroughTheCrashGuardAndMessagesNameTheCoordinateGiven() throws Exception {
    sql("create table vc (id int primary key, v int)");
    gnomon().track("vc");
    sql("insert into vc values (1, 1)");
    String inc = one("select gnomon.incarnation()::text");
    String early = coordinate();
    sql("insert into vc values (2, 2)");
    String late = coordinate();
    String earlyV1 = "v1:" + early.substring(("v2:" + inc + ":").length());
    String lateV1 = "v1:" + late.substring(("v2:" + inc + ":").length());
    // no earlier incarnation: v1 reads as the current one
    assertEquals("1:1,2:2", rows("vc", lateV1));
    long anchor = Coordinate.parse(early).xmax();
    // an earlier incarnation whose last surviving tick saw up to the early coordinate (what a crash after it leaves)
    sql("insert into gnomon.incarnation (incarnation, anchor_xmax, first_seen) values (2, '" + anchor
        + "', now() - interval '1 day')");
    try {
      assertEquals("1:1,2:2", rows("vc", late), "v2 of the current incarnation: read as always");
      assertEquals("1:1", rows("vc", earlyV1), "v1 at or below the earliest anchor: readable");
      for (String read : new String[] {"select * from gnomon_t.vc_as_of('" + lateV1 + "')",
          "select * from gnomon_t.vc_at(gnomon.point('main', '" + lateV1 + "'))",
          "select gnomon.parse_coordinate('" + lateV1 + "')"}) {
        CoordinateLostException e = assertThrows(CoordinateLostException.class, () -> sqlTranslated(read), read);
        assertEquals("GN013", e.sqlState());
        assertTrue(e.getMessage().contains("coordinate " + lateV1 + " was captured before a crash"), e.getMessage());
        assertTrue(e.getMessage().contains("A v1 coordinate does not say which incarnation"), e.getMessage());
      }
    } finally {
      sql("delete from gnomon.incarnation where incarnation = 2");
    }
    // GN011 and GN012 name the coordinate as given, in either form
    Coordinate now = Coordinate.parse(late);
    String future = "v2:" + inc + ":" + (now.xmax() + 1000) + ":" + (now.xmax() + 1000) + ":";
    CoordinateInFutureException f =
        assertThrows(CoordinateInFutureException.class, () -> sqlTranslated("select * from gnomon_t.vc_as_of('" + future + "')"));
    assertTrue(f.getMessage().contains("coordinate " + future + " is in the future"), f.getMessage());
    for (String old : new String[] {"v2:" + inc + ":3:3:", "v1:3:3:"}) {
      CoordinateTooOldException o =
          assertThrows(CoordinateTooOldException.class, () -> sqlTranslated("select * from gnomon_t.vc_as_of('" + old + "')"));
      assertTrue(o.getMessage().contains("coordinate " + old + " is older than the history of public.vc"), o.getMessage());
    }
  }

  @Test
  void aTimeBeforeAnyTickSaysWhetherThereIsOne() throws Exception {
    sql("delete from gnomon.tick");
    // format() gave the missing first tick as an empty string: "The first retained tick is at ."
    CoordinateTooOldException none =
        assertThrows(CoordinateTooOldException.class, () -> gnomon().coordinateAt(Instant.now().minus(Duration.ofDays(1))));
    assertTrue(none.getMessage().contains("No tick has been recorded yet."), none.getMessage());
    gnomon().tick();
    CoordinateTooOldException some =
        assertThrows(CoordinateTooOldException.class, () -> gnomon().coordinateAt(Instant.now().minus(Duration.ofDays(1))));
    assertTrue(some.getMessage().contains("The first retained tick is at " + one("select min(tick_at) from gnomon.tick") + "."),
        some.getMessage());
  }

  @Test
  void ticksMapTimeToCoordinates() throws Exception {
    sql("create table tk (id int primary key, v int)");
    gnomon().track("tk");
    sql("insert into tk values (1, 1)");
    gnomon().tick();
    Instant afterFirst = Instant.now();
    waitUntilServerClockPasses(afterFirst);
    sql("update tk set v = 2");
    gnomon().tick();
    assertEquals(gnomon().coordinateAt(afterFirst), gnomon().asOf(afterFirst).coordinate());
    assertEquals("1", one("select v from gnomon_t.tk_as_of('" + gnomon().coordinateAt(afterFirst) + "')"));
    assertEquals("2", one("select v from gnomon_t.tk_as_of(now())"));
    assertThrows(CoordinateInFutureException.class, () -> gnomon().coordinateAt(Instant.now().plus(Duration.ofHours(1))));
    CoordinateTooOldException tooOld =
        assertThrows(CoordinateTooOldException.class, () -> gnomon().coordinateAt(Instant.now().minus(Duration.ofDays(1))));
    assertTrue(tooOld.getMessage().contains("tick"), tooOld.getMessage());
  }

  @Test
  void aFailingUpkeepNeitherStopsNorUncountsTheTicks() throws Exception {
    // a bad setting makes gnomon.maintain() fail (GN041) on every new connection of this database
    String db = one("select current_database()");
    sql("alter database " + db + " set gnomon.tick_retention = 'banana'");
    try (io.gnomon.internal.Ticker t =
        new io.gnomon.internal.Ticker(dataSource(), Duration.ofMillis(20), Duration.ofMillis(100))) {
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (t.ticks() < 12) {
        assertTrue(System.nanoTime() < deadline, "12 ticks in 30 s; counted " + t.ticks() + ", failed "
            + t.failures() + ", upkeep failed " + t.maintainFailures());
        Thread.sleep(5);
      }
      assertEquals(0, t.failures(), "every tick was recorded");
      assertTrue(t.maintainFailures() >= 2, "upkeep ran and failed: " + t.maintainFailures());
      // every fifth tick tries the upkeep (at 20 ms ticks and 100 ms upkeep), not every tick
      assertTrue(t.maintainFailures() <= t.ticks() / 5 + 1, t.maintainFailures() + " upkeep failures in "
          + t.ticks() + " ticks");
    } finally {
      sql("alter database " + db + " reset gnomon.tick_retention");
    }
  }

  @Test
  void theTickerRecordsTicksUntilStopped() throws Exception {
    try (Gnomon g = Gnomon.open(GnomonConfig.builder().dataSource(dataSource()).tickInterval(Duration.ofMillis(50)).build())) {
      long before = Long.parseLong(one("select count(*) from gnomon.tick"));
      g.startTicker();
      assertTrue(g.tickerRunning());
      long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
      while (Long.parseLong(one("select count(*) from gnomon.tick")) < before + 3) {
        assertTrue(System.nanoTime() < deadline, "the ticker recorded no 3 ticks in 20 s");
        Thread.onSpinWait();
      }
      g.stopTicker();
      long stopped = Long.parseLong(one("select count(*) from gnomon.tick"));
      long afterStop = Long.parseLong(one("select count(*) from gnomon.tick, pg_sleep(0.2)"));
      assertEquals(stopped, afterStop, "no tick after stopTicker()");
    }
  }

  @Test
  void checkpointsGiveTheSameAnswersAsRollingBackFromNow() throws Exception {
    sql("create table cp (id int primary key, v int)");
    gnomon().track("cp");
    sql("insert into cp select g, 0 from generate_series(1, 200) g");
    String early = coordinate();
    sql("update cp set v = v + 1 where id % 2 = 0");
    sql("delete from cp where id % 10 = 0");
    String mid = coordinate();
    sql("insert into cp values (1000, 1)");
    String withoutCheckpoint = rowsSum("cp", early) + "/" + rowsSum("cp", mid);
    long id = gnomon().checkpoint("cp");
    assertTrue(id > 0);
    sql("update cp set v = v + 100");
    sql("delete from cp where id < 50");
    assertEquals(withoutCheckpoint, rowsSum("cp", early) + "/" + rowsSum("cp", mid));
    assertEquals("1", one("select count(*) from gnomon.checkpoint where table_id = " + gnomon().tracked("cp").id()));
  }

  private String rowsSum(String table, String coordinate) throws Exception {
    return one("select count(*) || ':' || coalesce(sum(id * 1000 + v), 0) from gnomon_t." + table + "_as_of('" + coordinate + "')");
  }

  private void waitUntilServerClockPasses(Instant t) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
    while (Instant.parse(one("select to_char(clock_timestamp() at time zone 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')")).compareTo(t) <= 0) {
      assertTrue(System.nanoTime() < deadline);
      Thread.onSpinWait();
    }
  }
}
