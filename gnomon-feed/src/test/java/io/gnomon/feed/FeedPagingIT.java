package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Pages hold whole transactions: a page never splits a transaction unless the transaction is larger than the page,
 * and then the next page resumes inside it, exactly.
 */
@Timeout(120)
class FeedPagingIT extends FeedTestBase {
  private int nextId;

  /**
   * Transactions whose xids are not in their commit order: a page's scan covers the xids of its transactions, which
   * may hold a transaction delivered on an earlier page; each version must still find its own transaction's place
   * (a lookup of only the transactions after the position gave such a version its neighbour's, and delivered it
   * twice).
   */
  @Test
  void xidsOutOfCommitOrderAreDeliveredOnce() throws Exception {
    trackedTable("interleaved");
    feed().register("interleaved", List.of("public.interleaved"));
    try (Connection t1 = connect(); Connection t2 = connect(); Connection t3 = connect()) {
      t1.setAutoCommit(false);
      t2.setAutoCommit(false);
      t3.setAutoCommit(false);
      sql(t1, "select pg_current_xact_id()"); // the smallest xid, written last but one
      sql(t2, "select pg_current_xact_id()", "insert into interleaved values (2, 'second xid, first commit')");
      t2.commit();
      sql(t3, "select pg_current_xact_id()");
      sql(t1, "insert into interleaved values (1, 'first xid, second commit')");
      t1.commit();
      sql(t3, "insert into interleaved values (3, 'third xid, third commit')");
      t3.commit();
    }
    tick();
    List<String> ids = new ArrayList<>();
    for (int size : new int[] {1, 2, 5}) {
      FeedPage page = feed().poll("interleaved", size);
      page.events().forEach(e -> ids.add(e.key().get("id").asText()));
      if (page.advances()) {
        feed().ack("interleaved", page.position());
      }
    }
    assertEquals(List.of("2", "1", "3"), ids, "each version once, in commit order");
  }

  @Test
  void aTransactionThatFitsIsNeverSplitAcrossBatches() throws Exception {
    trackedTable("across");
    feed().register("across", List.of("public.across"));
    long a = transaction("across", 3);
    tick();
    long b = transaction("across", 8);
    tick();
    long c = transaction("across", 3);
    tick();
    long d = transaction("across", 25);
    tick();
    // before the fix of R__07_feed.sql: [a x3, b x7], [b x1, c x3, d x6], ...
    assertEquals(List.of(
            List.of(a + "x3"),
            List.of(b + "x8"),
            List.of(c + "x3"),
            List.of(d + "x10"),
            List.of(d + "x10"),
            List.of(d + "x5")),
        pages("across", 10));
  }

  @Test
  void aTransactionThatFitsIsNeverSplitInsideABatch() throws Exception {
    trackedTable("inside");
    feed().register("inside", List.of("public.inside"));
    long a = transaction("inside", 3);
    long b = transaction("inside", 8);
    long c = transaction("inside", 2);
    long d = transaction("inside", 25);
    long e = transaction("inside", 1);
    tick();
    assertEquals(List.of(
            List.of(a + "x3"),
            List.of(b + "x8", c + "x2"),
            List.of(d + "x10"),
            List.of(d + "x10"),
            List.of(d + "x5", e + "x1")),
        pages("inside", 10));
  }

  @Test
  void randomTransactionsTicksAndPageSizes() throws Exception {
    long seed = seed("FeedPagingIT.randomTransactionsTicksAndPageSizes");
    Random random = new Random(seed);
    trackedTable("rnd");
    feed().register("rnd", List.of("public.rnd"));
    Map<Long, Integer> sizes = new HashMap<>();
    for (int i = 0; i < 60; i++) {
      int size = random.nextInt(10) == 0 ? 10 + random.nextInt(40) : 1 + random.nextInt(6);
      sizes.put(transaction("rnd", size), size);
      if (random.nextInt(4) == 0) {
        tick();
      }
    }
    tick();
    List<ChangeEvent> all = new ArrayList<>();
    Map<Long, Integer> seen = new HashMap<>();
    while (true) {
      int pageSize = 1 + random.nextInt(15);
      FeedPage page = feed().poll("rnd", pageSize);
      if (page.isEmpty()) {
        break;
      }
      assertTrue(page.size() <= pageSize, "seed " + seed);
      Map<Long, Integer> seenBefore = new HashMap<>(seen);
      for (int i = 0; i < page.size(); i++) {
        ChangeEvent e = page.events().get(i);
        boolean continues = seenBefore.getOrDefault(e.xid(), 0) > 0;
        boolean firstInPage = i == 0 || page.events().get(i - 1).xid() != e.xid();
        if (firstInPage && !continues) {
          int size = sizes.get(e.xid());
          int inPage = (int) page.events().stream().filter(x -> x.xid() == e.xid()).count();
          assertTrue(inPage == size || (i == 0 && size > pageSize),
              "seed " + seed + ": transaction " + e.xid() + " of " + size + " events split in a page of " + pageSize
                  + " at index " + i);
        }
        if (firstInPage && continues) {
          assertEquals(0, i, "seed " + seed + ": a transaction resumes only at the start of a page");
        }
        seen.merge(e.xid(), 1, Integer::sum);
      }
      all.addAll(page.events());
      feed().ack("rnd", page.position());
    }
    assertEquals(sizes, seen, "seed " + seed + ": every event of every transaction, once");
    for (int i = 1; i < all.size(); i++) {
      assertTrue(all.get(i).position().isAfter(all.get(i - 1).position()), "seed " + seed);
    }
  }

  /** Inserts {@code rows} rows in one transaction; returns its xid. */
  private long transaction(String table, int rows) throws Exception {
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      for (int i = 0; i < rows; i++) {
        sql(c, "insert into " + table + " values (" + (++nextId) + ", 'v')");
      }
      long xid = Long.parseLong(one(c, "select pg_current_xact_id()::text"));
      c.commit();
      return xid;
    }
  }

  /** Every page until the feed is drained, each as "xid x count" per transaction, acknowledging as it goes. */
  private List<List<String>> pages(String consumer, int pageSize) {
    List<List<String>> out = new ArrayList<>();
    while (true) {
      FeedPage page = feed().poll(consumer, pageSize);
      if (page.isEmpty()) {
        return out;
      }
      Map<Long, Integer> counts = new LinkedHashMap<>();
      page.events().forEach(e -> counts.merge(e.xid(), 1, Integer::sum));
      List<String> shape = new ArrayList<>();
      counts.forEach((xid, n) -> shape.add(xid + "x" + n));
      out.add(shape);
      feed().ack(consumer, page.position());
    }
  }
}
