package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.SQLWarning;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The C module's batch order (gnomon-c/src/feed_page.c, {@code gnomon.feed_batch_c}) against the SQL one. */
@Timeout(300)
class FeedBatchCIT extends FeedTestBase {

  /**
   * The C module's batch order ({@code gnomon.feed_batch_c}, used by gnomon.feed_batch_of for a consumer of one table
   * of main) holds exactly the arrays of the SQL statement it replaces: for every pair of consecutive ticks of a
   * history written by interleaved transactions (xids out of commit order, ticks while transactions are open, rolled
   * back savepoints), from the start of the history and from a coordinate taken while transactions were open. Then a
   * consumer of that table reads, in pages smaller than its batches (so that the orders are kept and read back), the
   * pages a consumer reads with every page chosen by a scan ({@code gnomon.feed_batches = off}, the C module off).
   */
  @Test
  void theCBatchOrderIsTheSqlBatchOrder() throws Exception {
    long seed = seed("FeedBatchCIT");
    Random random = new Random(seed);
    sql("select gnomon.use_c_module(true, '" + FeedPageCIT.cLibrary() + "')");
    FeedBatchOrderIT.trackTables(this);
    sql("select gnomon.branch_create('bo_br')");
    for (String name : List.of("one_on", "one_off", "big_on", "big_off")) {
      feed().register(name, List.of("public.bo_a"), FeedStart.now(), true);
    }
    FeedBatchOrderIT.interleaveWrites(this, random, 400, 150, () -> feed().register("one_mid",
        List.of("public.bo_a"), FeedStart.at(io.gnomon.Coordinate.parse(one("select gnomon.coordinate()"))), true));
    tick();
    String id = one("select table_id from gnomon.tracked_table where table_name = 'bo_a'");
    String changes = one("select format('select ch.xid, ch.vid from gnomon_t.%I($1, $2, $3, false) ch',"
        + " gnomon.object_name(base_name, '_changes')) from gnomon.tracked_table where table_name = 'bo_a'");
    int batches = 0;
    long transactions = 0;
    try (Connection c = connect(); Connection s = connect()) {
      sql(s, "set gnomon.feed_page_c = off");
      List<String> ticks = column("select tick_id from gnomon.tick order by tick_id");
      for (int i = 1; i < ticks.size(); i++) {
        for (String start : column("select start_snapshot::text from gnomon.consumer"
            + " where consumer_name in ('one_on', 'one_mid')")) {
          String args = "(select snapshot from gnomon.tick where tick_id = " + ticks.get(i - 1) + "), (select snapshot"
              + " from gnomon.tick where tick_id = " + ticks.get(i) + "), '" + start + "'::pg_snapshot";
          String inC = one(c, "select row(b.*)::text from gnomon.feed_batch_c(" + id + ", " + args + ") b");
          // the SQL statement of gnomon.feed_batch_of (nothing kept: a page larger than any batch)
          String inSql = one(s, "select row(f.txn_xid, f.txn_key, f.txn_upto, f.xid_sorted, f.key_by_xid)::text from"
              + " gnomon.feed_batch_of(-1, 0, array[" + id + "], " + args + ", '" + changes.replace("'", "''")
              + "', 1000000) f");
          assertEquals(inSql, inC, "seed " + seed + ": the batch of tick " + ticks.get(i) + " from start " + start);
          batches++;
          transactions += Long.parseLong(one(c, "select cardinality(txn_xid) from gnomon.feed_batch_c(" + id + ", "
              + args + ")"));
        }
      }
    }
    System.out.printf("FeedBatchCIT: %d batches, %d transactions%n", batches, transactions);
    assertTrue(batches >= 10 && transactions >= 50, "seed " + seed + ": " + batches + " batches, " + transactions
        + " transactions");
    // pages of whole batches or more (a page's last batch reads the rows its order's scan kept; first: the orders the
    // other pair keeps in gnomon.feed_batch serve every consumer of the same tables, without a scan), then pages
    // smaller than their batches (the batch's first page keeps its order and reads the rows its scan kept)
    for (String[] pair : new String[][] {{"big_on", "big_off"}, {"one_on", "one_off"}}) {
      int pages = 0;
      int events = 0;
      long[] fromScan = new long[2];
      try (Connection on = connect(); Connection off = connect()) {
        sql(off, "set gnomon.feed_page_c = off", "set gnomon.feed_batches = off");
        sql(on, "set client_min_messages = debug1");
        Random sizes = new Random(seed + pair[0].hashCode());
        while (true) {
          int pageSize = pair[0].startsWith("one") ? 1 + sizes.nextInt(8) : 20 + sizes.nextInt(200);
          List<String> c = FeedBatchOrderIT.page(on, pair[0], pageSize, countSources(fromScan));
          List<String> o = FeedBatchOrderIT.page(off, pair[1], pageSize);
          assertEquals(o, c, "seed " + seed + ": page " + pages + " of " + pageSize + " for " + pair[0]);
          if (c.isEmpty()) {
            break;
          }
          pages++;
          events += c.size();
        }
      }
      System.out.printf("FeedBatchCIT %s: %d events in %d pages; the page's versions kept by the order's scan %d"
          + " times, read from the history %d times%n", pair[0], events, pages, fromScan[0], fromScan[1]);
      assertTrue(events >= 100, "seed " + seed + ": " + events + " events in " + pages + " pages");
      assertTrue(fromScan[0] > 0 && fromScan[1] > 0, "seed " + seed + ": " + pair[0] + " read versions kept by the"
          + " order's scan " + fromScan[0] + " times, from the history " + fromScan[1] + " times");
    }
    assertTrue(Integer.parseInt(one("select count(*) from gnomon.feed_batch")) > 0,
        "seed " + seed + ": pages smaller than their batches kept the batches' orders");
  }

  /**
   * The rows the batch order's scan keeps serve the pages of the same transaction only while the history's columns
   * are those they were read with: a column added in between (the history follows the table) sends the page back to
   * the history, and its images are the SQL page's.
   */
  @Test
  void aColumnAddedInTheTransactionIsInThePage() throws Exception {
    sql("select gnomon.use_c_module(true, '" + FeedPageCIT.cLibrary() + "')",
        "create table ac_t (id integer primary key, v integer)", "select gnomon.track('public.ac_t')");
    for (String name : List.of("ac_on", "ac_off")) {
      feed().register(name, List.of("public.ac_t"), FeedStart.now(), true);
    }
    // (a consumer's first batch, which its start may cut into, is chosen by a scan: the writes go in the second)
    tick();
    sql("insert into ac_t select i, i from generate_series(1, 40) i",
        "update ac_t set v = v + 1 where id % 3 = 0");
    tick();
    List<String> c;
    try (Connection on = connect()) {
      on.setAutoCommit(false);
      sql(on, "set local client_min_messages = debug1");
      long[] kept = new long[2];
      // a page of 5: the batch's order is computed (its rows kept) and the page reads the kept rows
      List<String> first = FeedBatchOrderIT.page(on, "ac_on", 5, countSources(kept));
      assertEquals(5, first.size());
      assertEquals(1, kept[0], "the first page read the rows its batch's order kept");
      sql(on, "alter table ac_t add column w integer default 7");
      c = FeedBatchOrderIT.page(on, "ac_on", 1000, countSources(kept));
      assertEquals(1, kept[0], "after the column was added, the page read the history");
      on.commit();
    }
    List<String> o;
    try (Connection off = connect()) {
      sql(off, "set gnomon.feed_page_c = off", "set gnomon.feed_batches = off");
      FeedBatchOrderIT.page(off, "ac_off", 5);
      o = FeedBatchOrderIT.page(off, "ac_off", 1000);
    }
    assertEquals(o, c);
    assertEquals(48, c.size(), "40 inserts and 13 updates, 5 of them on the first page");
  }

  /**
   * Counts, from the C page's debug messages, the pages whose versions came from the rows the batch order's scan
   * kept ({@code counts[0]}) and those read from the history ({@code counts[1]}).
   */
  private static Consumer<SQLWarning> countSources(long[] counts) {
    return w -> {
      if (w.getMessage().contains("versions of the batch kept by its order's scan")) {
        counts[0]++;
      } else if (w.getMessage().contains("versions of the batch read from the history")) {
        counts[1]++;
      }
    };
  }
}
