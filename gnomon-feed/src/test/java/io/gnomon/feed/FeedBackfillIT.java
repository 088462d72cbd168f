package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gnomon.Coordinate;
import io.gnomon.Gnomon;
import io.gnomon.GnomonConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A consistent backfill: the rows as of a consumer's start coordinate, then the changes from it, give the table as it
 * ends — with writers running throughout, rows that existed before tracking (no version until their first write),
 * and consumers started now and at an earlier coordinate.
 */
@Timeout(120)
class FeedBackfillIT extends FeedTestBase {
  private static final int ROWS = 2000;

  @Test
  void rowsAsOfTheStartPlusTheChangesGiveTheFinalTable() throws Exception {
    long seed = seed("FeedBackfillIT");
    sql("create table stock (id integer primary key, sku text not null, qty integer not null, note text)",
        "insert into stock select g, 'sku-' || g, g % 17, null from generate_series(1, " + ROWS + ") g");
    gnomon().track("public.stock"); // the rows above have no version yet: a lazy baseline
    Gnomon ticking = Gnomon.open(GnomonConfig.builder().dataSource(dataSource())
        .tickInterval(Duration.ofMillis(20)).maintainInterval(Duration.ofSeconds(5)).build());
    ticking.startTicker();
    AtomicBoolean writing = new AtomicBoolean(true);
    AtomicInteger transactions = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    Coordinate early;
    Coordinate now;
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        Random random = new Random(seed + w);
        writers.add(pool.submit(() -> {
          write(random, writing, transactions);
          return null;
        }));
      }
      awaitTransactions(transactions, 40);
      early = gnomon().coordinate();
      awaitTransactions(transactions, 80);
      feed().register("early", List.of("public.stock"), FeedStart.at(early), true);
      now = feed().register("now", List.of("public.stock"), FeedStart.backfill(), true);
      int registeredAt = transactions.get();
      awaitTransactions(transactions, registeredAt + 80);
      writing.set(false);
      for (Future<?> f : writers) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
      ticking.close();
    }
    tick();
    Map<Integer, String> live = new TreeMap<>();
    for (String row : column("select id || '|' || row_to_json(s)::text from stock s")) {
      String[] parts = row.split("\\|", 2);
      live.put(Integer.parseInt(parts[0]), new ObjectMapper().readTree(parts[1]).toString());
    }
    assertEquals(early, feed().consumer("early").orElseThrow().start());
    assertEquals(now, feed().consumer("now").orElseThrow().start());
    for (String consumer : List.of("early", "now")) {
      Map<Integer, String> replayed = new TreeMap<>();
      FeedPosition start = feed().consumer(consumer).orElseThrow().position();
      Set<String> ids = new HashSet<>();
      long rows = feed().backfill(consumer, e -> {
        assertEquals(Operation.READ, e.op());
        assertNull(e.before());
        assertEquals(start, e.position());
        assertTrue(ids.add(e.id()), "backfill ids are unique: " + e.id());
        replayed.put(e.key().get("id").asInt(), e.after().toString());
      });
      assertEquals(rows, replayed.size());
      assertTrue(rows > ROWS / 2, "the backfill read the table: " + rows);
      List<ChangeEvent> changes = drain(consumer, 500);
      assertTrue(!changes.isEmpty(), "writers changed the table after " + consumer + " started");
      for (ChangeEvent e : changes) {
        int id = e.key().get("id").asInt();
        if (e.op() == Operation.DELETE) {
          assertEquals(replayed.remove(id), e.before().toString(), "seed " + seed + ": deleted what was there");
        } else {
          if (e.op() == Operation.UPDATE) {
            assertEquals(replayed.get(id), e.before().toString(), "seed " + seed + ": updated what was there");
          } else {
            assertTrue(!replayed.containsKey(id), "seed " + seed + ": created " + id + " which was there");
          }
          replayed.put(id, e.after().toString());
        }
      }
      assertEquals(live, replayed, "seed " + seed + ": backfill of " + consumer + " plus its changes");
      System.out.printf("FeedBackfillIT seed=%d: consumer %s backfilled %d rows, then %d changes%n", seed, consumer,
          rows, changes.size());
    }
  }

  @Test
  void backfillEventsAreJsonSnapshotReads() throws Exception {
    sql("create table small (id integer primary key, v text)", "insert into small values (1, 'one'), (2, 'two')");
    gnomon().track("public.small");
    feed().register("small", List.of("public.small"), FeedStart.backfill(), false);
    sql("update small set v = 'uno' where id = 1");
    List<ChangeEvent> rows = new ArrayList<>();
    assertEquals(2, feed().backfill("small", rows::add));
    JsonNode json = new ObjectMapper().readTree(feed().toJson(rows.get(0)));
    assertEquals("r", json.get("op").asText());
    assertEquals("true", json.get("source").get("snapshot").asText());
    assertEquals("small", json.get("source").get("table").asText());
    assertTrue(json.get("id").asText().startsWith("v1:r:public.small:"), json.toString());
    assertEquals(Set.of("one", "two"), Set.of(rows.get(0).after().get("v").asText(), rows.get(1).after().get("v").asText()),
        "the rows as of the start, before the update; a backfill carries rows even without images");
  }

  private void write(Random random, AtomicBoolean writing, AtomicInteger transactions) throws Exception {
    int next = ROWS;
    try (Connection c = dataSource().getConnection()) {
      c.setAutoCommit(false);
      while (writing.get()) {
        try {
          for (int i = 0; i < 1 + random.nextInt(4); i++) {
            int id = 1 + random.nextInt(ROWS + 200);
            int op = random.nextInt(10);
            String sql = op < 5 ? "update stock set qty = qty + 1, note = ? where id = ?"
                : op < 7 ? "delete from stock where id = ? and ? is not null"
                : "insert into stock values (?, 'new', 0, ?) on conflict (id) do update set note = excluded.note";
            try (PreparedStatement ps = c.prepareStatement(sql)) {
              if (op < 5) {
                ps.setString(1, "n" + random.nextInt(1000));
                ps.setInt(2, id);
              } else if (op < 7) {
                ps.setInt(1, id);
                ps.setString(2, "x");
              } else {
                ps.setInt(1, op == 9 ? ++next + 10_000 * (random.nextInt(2) + 1) : id);
                ps.setString(2, "i" + random.nextInt(1000));
              }
              ps.executeUpdate();
            }
          }
          if (random.nextInt(8) == 0) {
            c.rollback();
          } else {
            c.commit();
          }
          transactions.incrementAndGet();
        } catch (java.sql.SQLException e) {
          if (!"40P01".equals(e.getSQLState())) {
            throw e;
          }
          c.rollback();
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(random.nextInt(3)));
      }
    }
  }

  private static void awaitTransactions(AtomicInteger transactions, int n) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (transactions.get() < n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("writers made only " + transactions.get() + " transactions");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
    }
  }
}
