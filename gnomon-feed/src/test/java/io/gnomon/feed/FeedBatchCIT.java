package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.util.List;
import java.util.Random;
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
    feed().register("one_on", List.of("public.bo_a"), FeedStart.now(), true);
    feed().register("one_off", List.of("public.bo_a"), FeedStart.now(), true);
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
    int pages = 0;
    int events = 0;
    try (Connection on = connect(); Connection off = connect()) {
      sql(off, "set gnomon.feed_page_c = off", "set gnomon.feed_batches = off");
      Random sizes = new Random(seed + 1);
      while (true) {
        int pageSize = 1 + sizes.nextInt(8);
        List<String> c = FeedBatchOrderIT.page(on, "one_on", pageSize);
        List<String> o = FeedBatchOrderIT.page(off, "one_off", pageSize);
        assertEquals(o, c, "seed " + seed + ": page " + pages + " of " + pageSize);
        if (c.isEmpty()) {
          break;
        }
        pages++;
        events += c.size();
      }
    }
    assertTrue(events >= 100, "seed " + seed + ": " + events + " events in " + pages + " pages");
    assertTrue(Integer.parseInt(one("select count(*) from gnomon.feed_batch")) > 0,
        "seed " + seed + ": pages smaller than their batches kept the batches' orders");
  }
}
