package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.Coordinate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Pages chosen from a batch's kept order ({@code gnomon.feed_batch}, filled by the batch's first page) are exactly
 * the pages chosen by a scan of the batch ({@code set gnomon.feed_batches = off}): on a random history (two tables,
 * one with a composite key; transactions of one to forty versions, interleaved so that their xids are not in commit
 * order; keys written again by later transactions and twice in one; deletes and inserts of a key; rolled-back
 * savepoints; writes on a branch; ticks at random points), for consumers of main that start before the writes and at a
 * coordinate in the middle, with and without images, and of the branch, read in pages of random sizes (splitting large transactions), every event's position,
 * tick, transaction, version, table, operation, key and images.
 */
@Timeout(300)
class FeedBatchOrderIT extends FeedTestBase {
  /** The columns of gnomon.feed_read these tests compare, as text. */
  static final String COLUMNS =
      "event_position, tick_id, tick_at, xid::text, txn_key, vid, table_name, op, key::text, before::text, after::text, branch";

  /** The two tracked tables interleaveWrites writes (a single and a composite key); returns their names. */
  static List<String> trackTables(FeedTestBase test) throws java.sql.SQLException {
    test.sql("create table bo_a (id integer primary key, v text not null)",
        "create table bo_b (k1 integer, k2 text, n integer, primary key (k1, k2))",
        "select gnomon.track('public.bo_a')", "select gnomon.track('public.bo_b')");
    return List.of("public.bo_a", "public.bo_b");
  }

  @Test
  void keptBatchOrdersChooseThePagesAScanChooses() throws Exception {
    long seed = seed("FeedBatchOrderIT");
    Random random = new Random(seed);
    List<String> tables = trackTables(this);
    for (String name : List.of("early_on", "early_off")) {
      feed().register(name, tables, FeedStart.now(), true);
    }
    feed().register("keys_on", List.of("public.bo_a"), FeedStart.now(), false);
    feed().register("keys_off", List.of("public.bo_a"), FeedStart.now(), false);
    sql("select gnomon.branch_create('bo_br')");
    for (String name : List.of("br_on", "br_off")) {
      feed().register(name, tables, FeedStart.now(), true, null, "bo_br");
    }
    // writers 0-2 write on main; writer 3 on the branch (its keys are its own there too)
    interleaveWrites(this, random, 160, 70, () -> {
      // a consumer that starts at a coordinate taken while transactions are open: its first batches are filtered
      // by its start, which the kept orders must not be used for
      String start = one("select gnomon.coordinate()");
      for (String name : List.of("mid_on", "mid_off")) {
        feed().register(name, tables, FeedStart.at(Coordinate.parse(start)), true);
      }
    });
    tick();
    for (String[] pair :
        new String[][] {{"early_on", "early_off"}, {"mid_on", "mid_off"}, {"keys_on", "keys_off"}, {"br_on", "br_off"}}) {
      Random sizes = new Random(seed + pair[0].hashCode());
      int pages = 0;
      int events = 0;
      try (Connection on = connect(); Connection off = connect()) {
        sql(off, "set gnomon.feed_batches = off");
        while (true) {
          // the branch's batches are small (one writer of four): small pages, so that they span several
          int pageSize = pair[0].startsWith("br")
              ? 1 + sizes.nextInt(4)
              : sizes.nextInt(4) == 0 ? 20 + sizes.nextInt(60) : 1 + sizes.nextInt(12);
          List<String> kept = page(on, pair[0], pageSize);
          List<String> scanned = page(off, pair[1], pageSize);
          assertEquals(scanned, kept, "seed " + seed + ": page " + pages + " of " + pageSize + " for " + pair[0]);
          if (kept.isEmpty()) {
            break;
          }
          pages++;
          events += kept.size();
        }
      }
      assertTrue(events >= 10 && pages >= 3, "seed " + seed + ": " + pair[0] + " read " + events + " events");
    }
    assertTrue(Integer.parseInt(one("select count(*) from gnomon.feed_batch where branch_id = 0")) > 3,
        "seed " + seed + ": pages on main were chosen from kept batch orders");
    assertTrue(Integer.parseInt(one("select count(*) from gnomon.feed_batch where branch_id <> 0")) > 0,
        "seed " + seed + ": pages on the branch were chosen from kept batch orders");
  }

  /**
   * Keeping a batch's order never makes a reader wait: a consumer whose page was read in a transaction still open (a
   * consumer applying its page exactly-once) has kept the batch's order uncommitted, and another consumer of the same
   * tables reads the same batch without waiting for that transaction (its insert of the same row would wait on the
   * unique index) and gets the same page.
   */
  @Test
  void aReaderNeverWaitsForAnotherKeepingTheSameBatch() throws Exception {
    sql("create table bo_w (id integer primary key, v text)", "select gnomon.track('public.bo_w')");
    for (String name : List.of("w1", "w2")) {
      feed().register(name, List.of("public.bo_w"), FeedStart.now(), true);
    }
    sql("insert into bo_w select i, 'v' || i from generate_series(1, 50) i");
    tick();
    try (Connection open = connect(); Connection other = connect()) {
      open.setAutoCommit(false);
      List<String> first = page(open, "w1", 20);
      assertEquals(1, Integer.parseInt(one(open, "select count(*) from gnomon.feed_batch")),
          "the open transaction kept the batch's order");
      sql(other, "set statement_timeout = '20s'");
      List<String> second = page(other, "w2", 20);
      assertEquals(first, second, "the same page, read without waiting for the open transaction");
      open.rollback();
    }
  }

  /** A batch read whole by one page, or empty, is not kept: only a reader that comes back for it writes its order. */
  @Test
  void aBatchReadByOnePageIsNotKept() throws Exception {
    sql("create table bo_k (id integer primary key, v text)", "select gnomon.track('public.bo_k')");
    feed().register("k1", List.of("public.bo_k"), FeedStart.now(), true);
    sql("insert into bo_k select i, 'v' || i from generate_series(1, 30) i");
    tick();
    tick();
    String before = one("select count(*) from gnomon.feed_batch");
    try (Connection c = connect()) {
      assertEquals(30, page(c, "k1", 30).size());
      assertEquals(before, one(c, "select count(*) from gnomon.feed_batch"), "no order kept for a batch of one page");
      sql("insert into bo_k select i, 'v' || i from generate_series(31, 60) i");
      tick();
      assertEquals(29, page(c, "k1", 29).size());
      assertEquals(Integer.parseInt(before) + 1, Integer.parseInt(one(c, "select count(*) from gnomon.feed_batch")),
          "the order of a batch larger than its first page is kept");
    }
  }

  /** What a test does at one step of {@link #interleaveWrites} (registers consumers at a coordinate). */
  interface Step {
    void run() throws SQLException;
  }

  /**
   * Random writes of four transactions kept open across ticks, on {@code t}'s database: writers 0-2 on main (tables
   * bo_a and bo_b), writer 3 on branch bo_br. For {@code steps} steps a random writer writes or, now and then, commits,
   * and one step in eight ticks; {@code middle} runs at step {@code middleStep}; then every writer commits.
   */
  static void interleaveWrites(FeedTestBase t, Random random, int steps, int middleStep, Step middle)
      throws SQLException {
    int open = 4;
    List<Connection> writers = new ArrayList<>();
    try {
      for (int i = 0; i < open; i++) {
        Connection c = t.connect();
        if (i == open - 1) {
          sql(c, "select gnomon.branch_use('bo_br')");
        }
        c.setAutoCommit(false);
        writers.add(c);
      }
      boolean[] busy = new boolean[open];
      for (int step = 0; step < steps; step++) {
        if (step == middleStep) {
          middle.run();
        }
        int w = random.nextInt(open);
        Connection c = writers.get(w);
        if (busy[w] && random.nextInt(3) == 0) {
          c.commit();
          busy[w] = false;
        } else {
          if (w == open - 1) {
            writeOnBranch(c, w, open, random);
          } else {
            write(c, w, open, random);
          }
          busy[w] = true;
        }
        if (random.nextInt(8) == 0) {
          t.tick();
        }
      }
      for (int w = 0; w < open; w++) {
        writers.get(w).commit();
      }
    } finally {
      for (Connection c : writers) {
        c.close();
      }
    }
  }


  /** One transaction's worth of writes (or more of an open one): its keys are its connection's, mod {@code open}. */
  static void write(Connection c, int w, int open, Random random) throws SQLException {
    int n = random.nextInt(10) == 0 ? 10 + random.nextInt(30) : 1 + random.nextInt(5);
    for (int i = 0; i < n; i++) {
      int id = w + open * random.nextInt(12);
      switch (random.nextInt(7)) {
        case 0 -> sql(c, "delete from bo_a where id = " + id);
        case 1 -> sql(c, "savepoint s", "insert into bo_a values (" + id + ", 'rolled back') on conflict (id) do update"
            + " set v = 'rolled back'", "rollback to savepoint s");
        case 2, 3 -> sql(c, "insert into bo_b values (" + id + ", 'k" + (id % 2) + "', 1) on conflict (k1, k2) do update"
            + " set n = bo_b.n + 1");
        case 4 -> sql(c, "delete from bo_b where k1 = " + id);
        default -> sql(c, "insert into bo_a values (" + id + ", 'v" + random.nextInt(1000) + "') on conflict (id) do"
            + " update set v = excluded.v");
      }
    }
  }

  /** Writes on the branch (through its views: no ON CONFLICT), to keys of its own. */
  static void writeOnBranch(Connection c, int w, int open, Random random) throws SQLException {
    int n = random.nextInt(10) == 0 ? 10 + random.nextInt(30) : 1 + random.nextInt(5);
    for (int i = 0; i < n; i++) {
      int id = w + open * random.nextInt(12);
      switch (random.nextInt(6)) {
        case 0 -> sql(c, "delete from bo_a where id = " + id);
        case 1 -> sql(c, "savepoint s", "update bo_a set v = 'rolled back' where id = " + id, "rollback to savepoint s");
        case 2 -> sql(c, "insert into bo_b select " + id + ", 'k', 1 where not exists (select 1 from bo_b where k1 = "
            + id + ")", "update bo_b set n = n + 1 where k1 = " + id);
        case 3 -> sql(c, "update bo_a set v = 'u" + random.nextInt(1000) + "' where id = " + id);
        default -> sql(c, "insert into bo_a select " + id + ", 'b" + random.nextInt(1000) + "' where not exists (select"
            + " 1 from bo_a where id = " + id + ")");
      }
    }
  }

  /** A page through gnomon.feed_read, each row as text, acknowledged; empty when the feed is drained. */
  static List<String> page(Connection c, String consumer, int pageSize) throws SQLException {
    return page(c, consumer, pageSize, null);
  }

  /** As {@link #page(Connection, String, int)}, handing the server's messages (notices, debug) to {@code messages}. */
  static List<String> page(Connection c, String consumer, int pageSize,
      Consumer<SQLWarning> messages) throws SQLException {
    List<String> rows = new ArrayList<>();
    String last = null;
    try (PreparedStatement ps = c.prepareStatement("select " + COLUMNS + " from gnomon.feed_read(?, ?)")) {
      ps.setString(1, consumer);
      ps.setInt(2, pageSize);
      try (ResultSet rs = ps.executeQuery()) {
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
          StringBuilder row = new StringBuilder();
          for (int i = 1; i <= n; i++) {
            row.append(rs.getString(i)).append('|');
          }
          rows.add(row.toString());
          last = rs.getString(1);
        }
      }
      if (messages != null) {
        for (SQLWarning w = ps.getWarnings(); w != null; w = w.getNextWarning()) {
          messages.accept(w);
        }
      }
    }
    if (last != null) {
      try (PreparedStatement ps = c.prepareStatement("select gnomon.feed_ack(?, ?)")) {
        ps.setString(1, consumer);
        ps.setString(2, last);
        ps.execute();
      }
    }
    return rows;
  }
}
