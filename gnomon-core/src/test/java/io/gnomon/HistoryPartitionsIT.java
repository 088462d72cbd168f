package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** History partitions: rolling the open partition keeps every read exact and sends new versions to the new one. */
class HistoryPartitionsIT extends GnomonIT {

  private void burnXids(int n) throws Exception {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      for (int i = 0; i < n; i++) {
        st.execute("select pg_current_xact_id()");
      }
    }
  }

  @Test
  void rollingTheOpenPartitionKeepsReadsExact() throws Exception {
    sql("create table ph (id int primary key, v int)");
    gnomon().track("ph");
    sql("insert into ph select g, 0 from generate_series(1, 100) g");
    String c1 = coordinate();
    sql("update ph set v = 1 where id <= 10");
    assertEquals("ph_h_1", one("select gnomon.roll_history('ph', 1000)"));
    String c2 = coordinate();
    sql("update ph set v = 2 where id <= 5"); // still below the boundary: the old partition takes it
    burnXids(1100);
    String c3 = coordinate();
    sql("update ph set v = 3 where id <= 3"); // past the boundary: the new partition
    assertEquals("3", one("select count(*) from gnomon_t.ph_h_1"));
    assertEquals("0:100", one("select sum(v) || ':' || count(*) from gnomon_t.ph_as_of('" + c1 + "')"));
    assertEquals("10:100", one("select sum(v) || ':' || count(*) from gnomon_t.ph_as_of('" + c2 + "')"));
    assertEquals("15:100", one("select sum(v) || ':' || count(*) from gnomon_t.ph_as_of('" + c3 + "')"));
    assertEquals("18:100", one("select sum(v) || ':' || count(*) from gnomon_t.ph_as_of(gnomon.coordinate())"));
    assertEquals("2", one("select count(*) from pg_inherits where inhparent = 'gnomon_t.ph_h'::regclass"));
    assertThrows(InvalidArgumentException.class, () -> sqlTranslated("select gnomon.roll_history('ph', 10)"));
  }

  @Test
  void aWriterThatStaysConnectedFollowsARoll() throws Exception {
    // the C write path keeps the partition a session wrote last, and its range, between statements: a roll by
    // another session must reach it before its next write
    sql("create table pw (id int primary key, v int)");
    gnomon().track("pw");
    sql("insert into pw select g, 0 from generate_series(1, 10) g");
    try (Connection w = connect();
        Statement st = w.createStatement()) {
      st.execute("update pw set v = 1 where id = 1");
      assertEquals("pw_h_1", one("select gnomon.roll_history('pw', 1000)"));
      st.execute("update pw set v = 2 where id = 2"); // below the new boundary: the old partition still
      burnXids(1100);
      st.execute("update pw set v = 3 where id = 3"); // past it: the new partition
      w.setAutoCommit(false);
      st.execute("update pw set v = 4 where id = 4");
      st.execute("update pw set v = 5 where id = 5"); // the same transaction, the same partition
      w.commit();
      w.setAutoCommit(true);
      // and a column added by another session: the next version has it
      sql("alter table pw add column w int default 7");
      st.execute("update pw set w = 8 where id = 6");
    }
    assertEquals("U 6 0 7", one("select g_op::text || ' ' || id || ' ' || v || ' ' || w from gnomon_t.pw_h where id = 6 and g_op = 'U'"));
    assertEquals("12", one("select count(*) from gnomon_t.pw_h_0"), "10 inserts and 2 updates before the boundary");
    assertEquals("4", one("select count(*) from gnomon_t.pw_h_1"));
    assertEquals("15:10", one("select sum(v) || ':' || count(*) from gnomon_t.pw_as_of(gnomon.coordinate())"));
  }

  @Test
  void aRollWaitsForAWriterThatReadsTheHistoryAfterWriting() throws Exception {
    // A writer's transaction holds the history (the C path kept its partition from the statement before); a roll
    // queues behind it; the writer then reads the history. The roll takes the parent before the partition, so a
    // writer holding the partition without the parent would wait for the parent here: a deadlock (40P01).
    sql("create table pd (id int primary key, v int)");
    gnomon().track("pd");
    sql("insert into pd select g, 0 from generate_series(1, 10) g");
    try (Connection w = connect();
        Statement st = w.createStatement();
        Connection r = connect()) {
      st.execute("update pd set v = 1 where id = 1");
      w.setAutoCommit(false);
      st.execute("update pd set v = 2 where id = 2");
      int rollerPid = pid(r);
      CompletableFuture<String> roll = CompletableFuture.supplyAsync(() -> {
        try (Statement rs = r.createStatement();
            ResultSet one = rs.executeQuery("select gnomon.roll_history('pd', 1000)")) {
          one.next();
          return one.getString(1);
        } catch (SQLException e) {
          throw new IllegalStateException(e);
        }
      });
      awaitLockWait(rollerPid, roll);
      try (ResultSet rs = st.executeQuery("select count(*) from gnomon_t.pd_h")) {
        rs.next();
        assertEquals(12, rs.getInt(1), "10 inserts and 2 updates");
      }
      w.commit();
      assertEquals("pd_h_1", roll.get(60, TimeUnit.SECONDS));
    }
  }

  @Test
  void rollingAgainBeforeAnythingIsWrittenDoesNothing() throws Exception {
    sql("create table pr (id int primary key, v int)");
    gnomon().track("pr");
    assertEquals("pr_h_0", one("select gnomon.roll_history('pr', 1000)"), "an empty history stays in one partition");
    sql("insert into pr values (1, 0)");
    assertEquals("pr_h_1", one("select gnomon.roll_history('pr', 1000)"));
    // twice in a row: the second call found the new partition empty, and used to close it after one xid
    assertEquals("pr_h_1", one("select gnomon.roll_history('pr', 1000)"));
    assertEquals("2", one("select count(*) from pg_inherits where inhparent = 'gnomon_t.pr_h'::regclass"));
    assertEquals("pr_h_1", one("select gnomon.roll_history('pr', 1000)"));
    burnXids(1100);
    sql("update pr set v = 1");
    assertEquals("1", one("select count(*) from gnomon_t.pr_h_1"), "the write past the margin went to the open one");
    assertEquals("pr_h_2", one("select gnomon.roll_history('pr', 1000)"), "once written to, it rolls");
    assertEquals("3", one("select count(*) from pg_inherits where inhparent = 'gnomon_t.pr_h'::regclass"));
  }

  @Test
  void maintainRollsPartitionsPastTheirRowLimit() throws Exception {
    sql("create table pm (id int primary key, v int)", "create table pq (id int primary key, v int)");
    gnomon().track("pm");
    gnomon().track("pq");
    sql("insert into pm select g, 0 from generate_series(1, 500) g", "insert into pq values (1, 1)",
        "analyze gnomon_t.pm_h_0", "analyze gnomon_t.pq_h_0");
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("set gnomon.history_partition_rows = 100");
      var rs = st.executeQuery("select gnomon.maintain()");
      rs.next();
      assertEquals(1, rs.getInt(1), "only the history past 100 rows rolls");
    }
    assertEquals("2", one("select count(*) from pg_inherits where inhparent = 'gnomon_t.pm_h'::regclass"));
    assertEquals("1", one("select count(*) from pg_inherits where inhparent = 'gnomon_t.pq_h'::regclass"));
    assertEquals("0", one("select gnomon.maintain()"), "at the default limit nothing rolls");
  }

  @Test
  void maintainDeletesOldTicksButNotWhatAConsumerStillNeeds() throws Exception {
    sql("create table tr (id int primary key)");
    gnomon().track("tr");
    for (int i = 0; i < 3; i++) {
      sql("insert into gnomon.tick (tick_at, snapshot) values (now() - interval '30 days', pg_current_snapshot())");
    }
    String first = one("select min(tick_id) from gnomon.tick");
    long second = Long.parseLong(first) + 1;
    sql("select gnomon.feed_register('keep', array['tr'])",
        "update gnomon.consumer set tick_id = " + second, // it has read only up to the second old tick
        "select gnomon.tick()");
    sql("select gnomon.maintain()");
    assertEquals("3", one("select count(*) from gnomon.tick"), "only the first old tick goes");
    assertEquals("0", one("select count(*) from gnomon.tick where tick_id = " + first));
    sql("update gnomon.consumer set max_lag = interval '1 day'", "select gnomon.maintain()");
    assertEquals("1", one("select count(*) from gnomon.tick"), "the consumer was expired, so its ticks went too");
    ConsumerExpiredException e =
        assertThrows(ConsumerExpiredException.class, () -> sqlTranslated("select * from gnomon.feed_read('keep', 10)"));
    assertTrue(e.getMessage().contains("max_lag"), e.getMessage());
  }

  @Test
  void aConsumerThatNeverAcknowledgedStillExpires() throws Exception {
    sql("create table nx (id int primary key)");
    gnomon().track("nx");
    // registered before any tick, so its position is tick 0
    sql("select gnomon.feed_register('idle', array['nx'], max_lag => interval '1 hour')",
        "update gnomon.consumer set registered_at = now() - interval '2 hours'",
        "select gnomon.tick()", "select gnomon.maintain()");
    assertEquals("1", one("select count(*) from gnomon.consumer where expired_at is not null"));
    assertThrows(ConsumerExpiredException.class, () -> sqlTranslated("select * from gnomon.feed_read('idle', 10)"));
  }
}
