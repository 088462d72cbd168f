package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.gnomon.Gnomon;
import io.gnomon.GnomonConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
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
 * Invariant 2 under concurrency: writers run short and long transactions, rollbacks, savepoints rolled back and
 * released, and transactions that take their xid early and commit late (after several ticks), on two tables with few
 * keys (so they wait for each other's row locks and deadlock now and then), while a ticker ticks every 20 ms and a
 * consumer drains the feed in pages of random sizes, "crashing" at random points (its connection dropped, with or
 * without acknowledging its last page) and starting again from its acknowledged position.
 *
 * <p>Counting, in each pass, only the events up to the position it acknowledged: every committed version is
 * delivered exactly once, no rolled-back version ever, positions only go forward, an event re-delivered after a
 * crash has the same id and content, a transaction's events are contiguous, and along each key the events chain
 * (each one's before image is the previous one's after image) in version order — commit order for conflicting
 * writes.
 */
@Timeout(180)
class FeedConcurrencyIT extends FeedTestBase {
  private static final int WRITERS = 4;
  private static final int KEYS = 24;
  private static final long WRITE_MILLIS = 6_000;
  private static final String[] TABLES = {"acct", "note"};

  /** A version a writer committed: its identity is the unique value it wrote (or, for a delete, removed). */
  record Version(String table, String op, int key, String value) {}

  private final ConcurrentLinkedQueue<Version> committed = new ConcurrentLinkedQueue<>();
  private final AtomicInteger rolledBack = new AtomicInteger();
  private final AtomicInteger deadlocks = new AtomicInteger();
  private final AtomicInteger lateCommits = new AtomicInteger();
  private final Set<Long> lateXids = java.util.concurrent.ConcurrentHashMap.newKeySet();

  @Test
  void everyCommittedVersionExactlyOnceAcrossCrashes() throws Exception {
    long seed = seed("FeedConcurrencyIT");
    for (String t : TABLES) {
      trackedTable(t);
    }
    feed().register("drain", List.of("public.acct", "public.note"));
    Gnomon ticking = Gnomon.open(GnomonConfig.builder().dataSource(dataSource())
        .tickInterval(Duration.ofMillis(20)).maintainInterval(Duration.ofSeconds(5)).build());
    ticking.startTicker();
    AtomicBoolean writing = new AtomicBoolean(true);
    ExecutorService pool = Executors.newFixedThreadPool(WRITERS + 1);
    Consumer consumer = new Consumer(new Random(seed), writing);
    List<ChangeEvent> delivered;
    try {
      Future<List<ChangeEvent>> draining = pool.submit(consumer::run);
      List<Future<?>> writers = new ArrayList<>();
      long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(WRITE_MILLIS);
      for (int w = 0; w < WRITERS; w++) {
        Random random = new Random(seed * 31 + w);
        int writer = w;
        writers.add(pool.submit(() -> {
          write(writer, random, until);
          return null;
        }));
      }
      for (Future<?> f : writers) {
        f.get(60, TimeUnit.SECONDS);
      }
      awaitTicks(2); // a tick that began after every writer's last commit
      writing.set(false);
      delivered = draining.get(120, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
      ticking.close();
    }
    System.out.printf("FeedConcurrencyIT seed=%d: %d versions committed, %d transactions rolled back, %d deadlocks,"
            + " %d late commits; %d passes (%d crashes before an ack), %d pages, %d events counted, %d re-delivered%n",
        seed, committed.size(), rolledBack.get(), deadlocks.get(), lateCommits.get(), consumer.passes,
        consumer.crashesBeforeAck, consumer.pages, delivered.size(), consumer.redelivered);
    check(seed, delivered);
    assertTrue(consumer.crashesLosingEvents == 0 || consumer.redelivered > 0,
        "seed " + seed + ": events handled but not acknowledged before a crash come again");
  }

  // ---- writers ----

  private void write(int writer, Random random, long until) throws SQLException {
    int seq = 0;
    try (Connection c = dataSource().getConnection()) {
      c.setAutoCommit(false);
      while (System.nanoTime() < until) {
        List<Version> versions = new ArrayList<>();
        int kind = random.nextInt(20);
        try {
          if (kind < 2) { // takes its xid, waits until the consumer read past it, then writes and commits late
            long xid = Long.parseLong(one(c, "select pg_current_xact_id()::text"));
            awaitConsumerPast(Long.parseLong(one("select coalesce(max(tick_id), 0) from gnomon.tick")) + 1);
            for (int i = 0; i < 1 + random.nextInt(3); i++) {
              statement(c, random, "w" + writer + "-" + (++seq), versions);
            }
            c.commit();
            lateCommits.incrementAndGet();
            lateXids.add(xid);
          } else if (kind < 5) { // rolled back
            for (int i = 0; i < 1 + random.nextInt(3); i++) {
              statement(c, random, "w" + writer + "-" + (++seq), versions);
            }
            c.rollback();
            versions.clear();
            rolledBack.incrementAndGet();
          } else if (kind < 8) { // a savepoint rolled back, another released
            statement(c, random, "w" + writer + "-" + (++seq), versions);
            sql(c, "savepoint a");
            List<Version> undone = new ArrayList<>();
            statement(c, random, "w" + writer + "-" + (++seq), undone);
            statement(c, random, "w" + writer + "-" + (++seq), undone);
            sql(c, "rollback to savepoint a");
            sql(c, "savepoint b");
            statement(c, random, "w" + writer + "-" + (++seq), versions);
            sql(c, "release savepoint b");
            c.commit();
          } else if (kind < 10) { // long: several statements with pauses, holding row locks
            for (int i = 0; i < 3 + random.nextInt(4); i++) {
              statement(c, random, "w" + writer + "-" + (++seq), versions);
              LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5 + random.nextInt(25)));
            }
            c.commit();
          } else { // short
            for (int i = 0; i < 1 + random.nextInt(2); i++) {
              statement(c, random, "w" + writer + "-" + (++seq), versions);
            }
            c.commit();
          }
          committed.addAll(versions);
        } catch (SQLException e) {
          if (!"40P01".equals(e.getSQLState())) {
            throw e;
          }
          c.rollback();
          deadlocks.incrementAndGet();
        }
      }
    }
  }

  /** One statement on a random key: an upsert, an update or a delete; logs the version it wrote, if any. */
  private static void statement(Connection c, Random random, String value, List<Version> log) throws SQLException {
    String table = TABLES[random.nextInt(4) == 0 ? 1 : 0];
    int key = 1 + random.nextInt(KEYS);
    int op = random.nextInt(10);
    String sql = op < 5
        ? "insert into " + table + " values (?, ?) on conflict (id) do update set v = excluded.v"
            + " returning case when xmax = 0 then 'c' else 'u' end, v"
        : op < 8
            ? "update " + table + " set v = ? where id = ? returning 'u', v"
            : "delete from " + table + " where id = ? returning 'd', v";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      if (op < 5) {
        ps.setInt(1, key);
        ps.setString(2, value);
      } else if (op < 8) {
        ps.setString(1, value);
        ps.setInt(2, key);
      } else {
        ps.setInt(1, key);
      }
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          log.add(new Version(table, rs.getString(1), key, rs.getString(2)));
        }
      }
    }
  }

  /**
   * Waits (at most 3 s) until the consumer has acknowledged batches after {@code tick}: batches cut while this
   * transaction, with its xid, was still running. A feed that cut batches by xid would have skipped it for good.
   */
  private void awaitConsumerPast(long tick) throws SQLException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
    while (System.nanoTime() < deadline
        && Long.parseLong(one("select tick_id from gnomon.consumer where consumer_name = 'drain'")) <= tick) {
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
    }
  }

  private void awaitTicks(int n) throws SQLException {
    long start = Long.parseLong(one("select coalesce(max(tick_id), 0) from gnomon.tick"));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (Long.parseLong(one("select coalesce(max(tick_id), 0) from gnomon.tick")) < start + n) {
      if (System.nanoTime() > deadline) {
        throw new AssertionError("the ticker stopped ticking");
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
    }
  }

  // ---- the consumer ----

  /** Drains in passes; each pass ends in a simulated crash or, at the very end, when the feed is empty. */
  private final class Consumer {
    private final Random random;
    private final AtomicBoolean writing;
    private final Map<String, ChangeEvent> firstSeen = new HashMap<>();
    int passes;
    int crashesBeforeAck;
    int crashesLosingEvents;
    int pages;
    int redelivered;

    Consumer(Random random, AtomicBoolean writing) {
      this.random = random;
      this.writing = writing;
    }

    List<ChangeEvent> run() throws SQLException {
      List<ChangeEvent> counted = new ArrayList<>();
      boolean finished = false;
      while (!finished) {
        passes++;
        // a connection of its own, not from the pool: a crash drops it
        Connection c = db.dataSource().getConnection();
        try {
          FeedPosition acked = feed().consumer("drain").orElseThrow().position();
          FeedPosition last = acked;
          List<ChangeEvent> pass = new ArrayList<>();
          int pagesThisPass = 1 + random.nextInt(12);
          for (int p = 0; p < pagesThisPass; p++) {
            FeedPage page = feed().poll(c, "drain", 1 + random.nextInt(random.nextBoolean() ? 5 : 60));
            pages++;
            assertEquals(acked, page.from(), "a page starts at the acknowledged position");
            for (ChangeEvent e : page.events()) {
              assertTrue(e.position().isAfter(last), "positions only go forward: " + e.position() + " after " + last);
              last = e.position();
              ChangeEvent before = firstSeen.putIfAbsent(e.id(), e);
              if (before != null) {
                redelivered++;
                assertEquals(brief(List.of(before)), brief(List.of(e)), "same id, same event: " + e.id());
                assertEquals(before.vid(), e.vid(), "same id, same version: " + e.id());
              }
            }
            pass.addAll(page.events());
            if (page.isEmpty() && !page.advances()) {
              if (!writing.get()) {
                finished = true;
                break;
              }
              LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
              continue;
            }
            if (random.nextInt(6) == 0) {
              crashesBeforeAck++;
              if (!page.isEmpty()) {
                crashesLosingEvents++;
              }
              break; // crash: handled, not acknowledged
            }
            feed().ack(c, "drain", page.position());
            acked = page.position();
            if (random.nextInt(30) == 0) {
              break; // crash right after an acknowledgement
            }
          }
          for (ChangeEvent e : pass) {
            if (e.position().compareTo(acked) <= 0) {
              counted.add(e);
            }
          }
        } finally {
          c.close(); // dropped without acknowledging anything more
        }
      }
      return counted;
    }
  }

  // ---- the verdict ----

  private void check(long seed, List<ChangeEvent> delivered) throws SQLException {
    String why = "seed " + seed + ": ";
    // exactly once, nothing rolled back
    Map<Version, Integer> expected = new HashMap<>();
    committed.forEach(v -> expected.merge(v, 1, Integer::sum));
    expected.forEach((v, n) -> assertEquals(1, n, why + "a value written twice: " + v));
    Map<Version, Integer> got = new HashMap<>();
    Set<Long> vids = new HashSet<>();
    for (ChangeEvent e : delivered) {
      JsonNode image = e.op() == Operation.DELETE ? e.before() : e.after();
      got.merge(new Version(e.table(), e.op().code(), e.key().get("id").asInt(), image.get("v").asText()), 1,
          Integer::sum);
      assertTrue(vids.add(e.vid()), why + "version " + e.vid() + " delivered twice");
    }
    List<Version> missing = new ArrayList<>();
    expected.keySet().stream().filter(v -> !got.containsKey(v)).forEach(missing::add);
    List<Version> extra = new ArrayList<>();
    got.forEach((v, n) -> {
      if (!expected.containsKey(v) || n > 1) {
        extra.add(v);
      }
    });
    assertEquals(List.of(), missing.stream().limit(20).toList(), why + missing.size() + " committed versions missing");
    assertEquals(List.of(), extra.stream().limit(20).toList(), why + extra.size() + " versions not committed or twice");
    assertEquals(expected.size(), delivered.size(), why);
    // order: positions strictly increasing; a transaction's events contiguous; keys chain in version order
    Set<Long> closed = new HashSet<>();
    Map<String, ChangeEvent> lastOfKey = new HashMap<>();
    for (int i = 0; i < delivered.size(); i++) {
      ChangeEvent e = delivered.get(i);
      if (i > 0) {
        ChangeEvent p = delivered.get(i - 1);
        assertTrue(e.position().isAfter(p.position()), why + "position " + e.position() + " after " + p.position());
        if (p.xid() != e.xid()) {
          closed.add(p.xid());
        }
      }
      assertTrue(!closed.contains(e.xid()), why + "transaction " + e.xid() + " is not contiguous");
      String k = e.table() + ":" + e.key().get("id").asInt();
      ChangeEvent prev = lastOfKey.put(k, e);
      if (prev == null) {
        assertEquals(Operation.CREATE, e.op(), why + "the first event of " + k);
      } else {
        assertTrue(e.vid() > prev.vid(), why + "versions of " + k + " out of order: " + prev.vid() + ", " + e.vid());
        if (prev.op() == Operation.DELETE) {
          assertEquals(Operation.CREATE, e.op(), why + k + " after its delete");
        } else {
          assertEquals(prev.after(), e.before(), why + k + ": event " + e.id() + " does not follow " + prev.id());
        }
      }
    }
    // the late committers were delivered, after transactions that took their xids later
    long lateDelivered = delivered.stream().filter(e -> lateXids.contains(e.xid())).count();
    assertTrue(lateCommits.get() == 0 || lateDelivered > 0, why + "no late commit delivered");
    // and the events replayed give the tables as they are
    for (String t : TABLES) {
      Map<Integer, String> replayed = new TreeMap<>();
      for (ChangeEvent e : delivered) {
        if (e.table().equals(t)) {
          if (e.op() == Operation.DELETE) {
            replayed.remove(e.key().get("id").asInt());
          } else {
            replayed.put(e.key().get("id").asInt(), e.after().get("v").asText());
          }
        }
      }
      Map<Integer, String> live = new TreeMap<>();
      for (String row : column("select id || '=' || v from " + t)) {
        String[] kv = row.split("=", 2);
        live.put(Integer.parseInt(kv[0]), kv[1]);
      }
      assertEquals(live, replayed, why + "table " + t + " replayed from its events");
    }
  }
}
