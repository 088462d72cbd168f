package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import io.gnomon.Gnomon;
import io.gnomon.GnomonConfig;
import io.gnomon.GnomonException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
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
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.postgresql.PGConnection;

/**
 * Invariant 2 under concurrency: writers run short and long transactions, rollbacks, savepoints rolled back and
 * released, and transactions that take their xid early and commit late (after several ticks), on two tables with few
 * keys (so they wait for each other's row locks and deadlock now and then), while a ticker ticks every 20 ms and four
 * consumers, each registered under its own name with its own seeded randomness and its own odds of crashing, drain
 * the feed in pages of random sizes on connections of their own. A consumer "crashes" in two ways: it drops its
 * connection at a page boundary, with or without acknowledging its last page; or, before a poll or an ack, it has
 * another connection {@code pg_terminate_backend} its backend 0 to 3 ms later, so that the kill lands inside the
 * statement or just after it, and the pass ends at the first SQLException of a terminated connection (SQLSTATE 57P01
 * or 08006; any other error fails the test). Either way it starts again from the position stored in the database,
 * which after a kill inside an ack may or may not be the one being acknowledged.
 *
 * <p>Counting, for each consumer, the events of each pass up to the position stored in the database when the pass
 * ended (re-read on a fresh connection, not the last ack the consumer saw succeed): every committed version is
 * delivered exactly once, no rolled-back version ever, positions only go forward, an event re-delivered after a
 * crash has the same id and content, a transaction's events are contiguous, along each key the events chain (each
 * one's before image is the previous one's after image) in version order, and the events of every committed
 * transaction carry its xid (read with {@code pg_current_xact_id()} inside it). Commit order: when a transaction's
 * {@code commit()} returned before another's first statement was sent (both timed with {@code System.nanoTime()} in
 * the writers), every event of the first is delivered before every event of the second.
 */
@Timeout(180)
class FeedConcurrencyIT extends FeedTestBase {
  private static final int WRITERS = 4;
  private static final int KEYS = 24;
  private static final long WRITE_MILLIS = 10_000;
  private static final String[] TABLES = {"acct", "note"};
  /**
   * The SQLSTATEs of the first failure on a connection whose backend was terminated: 57P01 when pgjdbc reads the
   * backend's FATAL message (the only one seen so far), 08006 when the socket fails first. Not 08003 (a connection
   * pgjdbc has already closed): a pass ends at its first failure.
   */
  private static final Set<String> TERMINATED = Set.of("57P01", "08006");

  /**
   * How a consumer crashes: at a page boundary before acknowledging, or right after; by a kill of its backend
   * scheduled before a poll, or before an ack. Each is a chance of one in the number given, 0 for never.
   */
  record Crashes(String consumer, int beforeAck, int afterAck, int killInPoll, int killInAck) {}

  private static final List<Crashes> CONSUMERS = List.of(
      new Crashes("drain", 6, 30, 12, 12), // the one the late committers wait for
      new Crashes("killed-in-polls", 0, 0, 4, 20),
      new Crashes("killed-in-acks", 0, 0, 20, 3),
      new Crashes("long-passes", 12, 60, 40, 40));

  /** A version a writer committed: its identity is the unique value it wrote (or, for a delete, removed). */
  record Version(String table, String op, int key, String value) {}

  /**
   * A committed transaction that wrote versions: its xid, {@code System.nanoTime()} just before its first statement
   * and just after its {@code commit()} returned, and how many versions it wrote.
   */
  record Transaction(long xid, long began, long committed, int versions) {}

  private final ConcurrentLinkedQueue<Version> committed = new ConcurrentLinkedQueue<>();
  private final ConcurrentLinkedQueue<Transaction> transactions = new ConcurrentLinkedQueue<>();
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
    for (Crashes crashes : CONSUMERS) {
      feed().register(crashes.consumer(), List.of("public.acct", "public.note"));
    }
    Gnomon ticking = Gnomon.open(GnomonConfig.builder().dataSource(dataSource())
        .tickInterval(Duration.ofMillis(20)).maintainInterval(Duration.ofSeconds(5)).build());
    ticking.startTicker();
    AtomicBoolean writing = new AtomicBoolean(true);
    ExecutorService pool = Executors.newFixedThreadPool(WRITERS + CONSUMERS.size());
    List<Consumer> consumers = new ArrayList<>();
    for (int i = 0; i < CONSUMERS.size(); i++) {
      consumers.add(new Consumer(CONSUMERS.get(i), new Random(seed * 31 + WRITERS + i), writing));
    }
    List<List<ChangeEvent>> delivered = new ArrayList<>();
    try {
      List<Future<List<ChangeEvent>>> draining = new ArrayList<>();
      for (Consumer consumer : consumers) {
        draining.add(pool.submit(consumer::run));
      }
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
      for (Future<List<ChangeEvent>> f : draining) {
        delivered.add(f.get(120, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
      ticking.close();
    }
    System.out.printf("FeedConcurrencyIT seed=%d: %d versions committed in %d transactions, %d transactions rolled"
            + " back, %d deadlocks, %d late commits%n", seed, committed.size(), transactions.size(), rolledBack.get(),
        deadlocks.get(), lateCommits.get());
    for (int i = 0; i < consumers.size(); i++) {
      Consumer k = consumers.get(i);
      System.out.printf("  consumer %s: %d passes (%d crashes before an ack), %d pages, %d events counted, %d"
              + " re-delivered; kills: %d scheduled, %d terminated the backend, %d landed (SQLException seen: %d in a"
              + " poll, %d in an ack, %d of those acks committed)%n",
          k.crashes.consumer(), k.passes, k.crashesBeforeAck, k.pages, delivered.get(i).size(), k.redelivered,
          k.killsScheduled, k.killsTerminated, k.killsInPoll + k.killsInAck, k.killsInPoll, k.killsInAck,
          k.killedAcksCommitted);
    }
    long ordered = 0;
    int killsLanded = 0;
    for (int i = 0; i < consumers.size(); i++) {
      Consumer k = consumers.get(i);
      ordered = check(seed, k.crashes.consumer(), delivered.get(i));
      assertTrue(k.crashesLosingEvents == 0 || k.redelivered > 0, "seed " + seed + ", consumer "
          + k.crashes.consumer() + ": events handled but not acknowledged before a crash come again");
      killsLanded += k.killsInPoll + k.killsInAck;
    }
    assertTrue(killsLanded > 0, "seed " + seed + ": no kill of a consumer's backend landed");
    System.out.printf("  commit order checked for each consumer over %d transactions: %d pairs ordered in real"
        + " time%n", transactions.size(), ordered);
  }

  // ---- writers ----

  private void write(int writer, Random random, long until) throws SQLException {
    int seq = 0;
    try (Connection c = dataSource().getConnection()) {
      c.setAutoCommit(false);
      while (System.nanoTime() < until) {
        List<Version> versions = new ArrayList<>();
        int kind = random.nextInt(20);
        long began = System.nanoTime(); // before the first statement, which pgjdbc sends with the BEGIN
        try {
          if (kind < 2) { // takes its xid, waits until the consumer read past it, then writes and commits late
            long xid = xid(c);
            awaitConsumerPast(Long.parseLong(one("select coalesce(max(tick_id), 0) from gnomon.tick")) + 1);
            for (int i = 0; i < 1 + random.nextInt(3); i++) {
              statement(c, random, "w" + writer + "-" + (++seq), versions);
            }
            commit(c, began, xid, versions);
            lateCommits.incrementAndGet();
            lateXids.add(xid);
          } else if (kind < 5) { // rolled back
            for (int i = 0; i < 1 + random.nextInt(3); i++) {
              statement(c, random, "w" + writer + "-" + (++seq), versions);
            }
            c.rollback();
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
            commit(c, began, 0, versions);
          } else if (kind < 10) { // long: several statements with pauses, holding row locks
            for (int i = 0; i < 3 + random.nextInt(4); i++) {
              statement(c, random, "w" + writer + "-" + (++seq), versions);
              LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5 + random.nextInt(25)));
            }
            commit(c, began, 0, versions);
          } else { // short
            for (int i = 0; i < 1 + random.nextInt(2); i++) {
              statement(c, random, "w" + writer + "-" + (++seq), versions);
            }
            commit(c, began, 0, versions);
          }
        } catch (SQLException e) {
          if (!"40P01".equals(e.getSQLState())) {
            throw e;
          }
          c.rollback(); // nothing recorded: the next transaction is a new one, timed from its own first statement
          deadlocks.incrementAndGet();
        }
      }
    }
  }

  /**
   * Commits, then records the versions and, when there are any, the transaction: {@code xid} when it was taken
   * already, else read now (after its first statement, so that {@code began} is before it).
   */
  private void commit(Connection c, long began, long xid, List<Version> versions) throws SQLException {
    long id = xid != 0 || versions.isEmpty() ? xid : xid(c);
    c.commit();
    long returned = System.nanoTime();
    committed.addAll(versions);
    if (!versions.isEmpty()) {
      transactions.add(new Transaction(id, began, returned, versions.size()));
    }
  }

  /** The current transaction's top-level xid (assigning one if it has none yet). */
  private static long xid(Connection c) throws SQLException {
    return Long.parseLong(one(c, "select pg_current_xact_id()::text"));
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
   * Waits (at most 3 s) until the consumer 'drain' has acknowledged batches after {@code tick}: batches cut while
   * this transaction, with its xid, was still running. A feed that cut batches by xid would have skipped it for good.
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

  // ---- the consumers ----

  /**
   * Drains in passes, each on a new connection of its own (not from the pool); a pass ends in a crash (dropped
   * connection or killed backend) or, at the very end, when the feed is empty.
   */
  private final class Consumer {
    private final Crashes crashes;
    private final Random random;
    private final AtomicBoolean writing;
    private final Map<String, ChangeEvent> firstSeen = new HashMap<>();
    private ScheduledExecutorService killer;
    private Connection killing;
    private boolean backendKilled; // in this pass: a kill returned true, the connection is dead
    int passes;
    int crashesBeforeAck;
    int crashesLosingEvents;
    int pages;
    int redelivered;
    int killsScheduled;
    int killsTerminated;
    int killsInPoll;
    int killsInAck;
    int killedAcksCommitted;

    Consumer(Crashes crashes, Random random, AtomicBoolean writing) {
      this.crashes = crashes;
      this.random = random;
      this.writing = writing;
    }

    List<ChangeEvent> run() throws Exception {
      killer = Executors.newSingleThreadScheduledExecutor();
      killing = db.dataSource().getConnection();
      try {
        return drain();
      } finally {
        killer.shutdownNow();
        killing.close();
      }
    }

    private List<ChangeEvent> drain() throws Exception {
      String name = crashes.consumer();
      List<ChangeEvent> counted = new ArrayList<>();
      boolean finished = false;
      while (!finished) {
        passes++;
        backendKilled = false;
        FeedPosition acked = feed().consumer(name).orElseThrow().position();
        FeedPosition acking = null; // an ack whose outcome is unknown: a kill interrupted it
        List<ChangeEvent> pass = new ArrayList<>();
        try (Connection c = db.dataSource().getConnection()) { // closed at the end: dropped if it was not killed
          int pid = c.unwrap(PGConnection.class).getBackendPID();
          FeedPosition last = acked;
          int pagesThisPass = 1 + random.nextInt(12);
          for (int p = 0; p < pagesThisPass; p++) {
            int size = 1 + random.nextInt(random.nextBoolean() ? 5 : 60);
            FeedPage page = underFire(pid, crashes.killInPoll(), () -> feed().poll(c, name, size));
            if (page == null) {
              killsInPoll++;
              break;
            }
            pages++;
            assertEquals(acked, page.from(), name + ": a page starts at the acknowledged position");
            for (ChangeEvent e : page.events()) {
              assertTrue(e.position().isAfter(last),
                  name + ": positions only go forward: " + e.position() + " after " + last);
              last = e.position();
              ChangeEvent before = firstSeen.putIfAbsent(e.id(), e);
              if (before != null) {
                redelivered++;
                assertEquals(brief(List.of(before)), brief(List.of(e)), name + ": same id, same event: " + e.id());
                assertEquals(before.vid(), e.vid(), name + ": same id, same version: " + e.id());
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
            if (chance(crashes.beforeAck())) {
              crashesBeforeAck++;
              if (!page.isEmpty()) {
                crashesLosingEvents++;
              }
              break; // crash: handled, not acknowledged
            }
            FeedPosition to = page.position();
            if (underFire(pid, crashes.killInAck(), () -> {
              feed().ack(c, name, to);
              return to;
            }) == null) {
              killsInAck++;
              acking = to;
              break;
            }
            acked = to;
            if (chance(crashes.afterAck())) {
              break; // crash right after an acknowledgement
            }
          }
        }
        // what the database kept, not what the consumer last saw acknowledged: a killed ack may have committed
        FeedPosition stored = feed().consumer(name).orElseThrow().position();
        assertTrue(stored.equals(acked) || stored.equals(acking),
            name + ": the stored position " + stored + " is the last one acknowledged, " + acked
                + ", or the one whose acknowledgement was killed, " + acking);
        if (acking != null && stored.equals(acking)) {
          killedAcksCommitted++;
        }
        for (ChangeEvent e : pass) {
          if (e.position().compareTo(stored) <= 0) {
            counted.add(e);
          }
        }
      }
      return counted;
    }

    private boolean chance(int oneIn) {
      return oneIn > 0 && random.nextInt(oneIn) == 0;
    }

    /**
     * Runs a poll or an ack; first, with a chance of one in {@code oneIn}, schedules a kill of the backend {@code
     * pid} 0 to 3 ms later, and waits for the kill before returning. Returns the work's result, or null when the work
     * failed because a kill terminated the connection (in it, or after an earlier work of this pass returned);
     * rethrows every other failure.
     */
    private <T> T underFire(int pid, int oneIn, Supplier<T> work) throws Exception {
      boolean kill = chance(oneIn);
      long delayMicros = random.nextInt(3_001);
      Future<Boolean> killed = null;
      if (kill && !backendKilled) {
        killsScheduled++;
        killed = killer.schedule(() -> terminate(pid), delayMicros, TimeUnit.MICROSECONDS);
      }
      T result;
      GnomonException failure;
      try {
        result = work.get();
        failure = null;
      } catch (GnomonException e) {
        result = null;
        failure = e;
      }
      if (killed != null && killed.get(30, TimeUnit.SECONDS)) {
        killsTerminated++;
        backendKilled = true;
      }
      if (failure == null) {
        return result;
      }
      if (backendKilled && failure.getCause() instanceof SQLException s && TERMINATED.contains(s.getSQLState())) {
        return null;
      }
      throw failure;
    }

    private boolean terminate(int pid) throws SQLException {
      try (PreparedStatement ps = killing.prepareStatement("select pg_terminate_backend(?)")) {
        ps.setInt(1, pid);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          return rs.getBoolean(1);
        }
      }
    }
  }

  // ---- the verdict ----

  /** Checks one consumer's counted events; returns how many pairs of transactions the commit order constrained. */
  private long check(long seed, String consumer, List<ChangeEvent> delivered) throws SQLException {
    String why = "seed " + seed + ", consumer " + consumer + ": ";
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
    long ordered = checkCommitOrder(why, delivered);
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
    return ordered;
  }

  /**
   * Every committed transaction's events carry its xid, as many as it wrote versions; and when T1's commit returned
   * before T2's first statement was sent, T1's last event is delivered before T2's first. One sweep over the
   * transactions sorted by first statement, with those sorted by commit: O(n log n). Returns the number of pairs
   * (T1, T2) so ordered.
   */
  private long checkCommitOrder(String why, List<ChangeEvent> delivered) {
    Map<Long, int[]> spans = new HashMap<>(); // xid -> {first index, last index, events}
    for (int i = 0; i < delivered.size(); i++) {
      int index = i;
      int[] span = spans.computeIfAbsent(delivered.get(i).xid(), x -> new int[] {index, index, 0});
      span[1] = i;
      span[2]++;
    }
    Map<Long, Transaction> byXid = new HashMap<>();
    for (Transaction t : transactions) {
      assertTrue(byXid.put(t.xid(), t) == null, why + "two committed transactions with xid " + t.xid());
      int[] span = spans.get(t.xid());
      assertEquals(t.versions(), span == null ? 0 : span[2],
          why + "events with the xid of transaction " + t.xid() + ", which committed " + t.versions() + " versions");
    }
    assertEquals(byXid.keySet(), spans.keySet(), why + "the xids of the events are those of the transactions");
    List<Transaction> byBegin = new ArrayList<>(transactions);
    byBegin.sort(Comparator.comparingLong(Transaction::began));
    List<Transaction> byCommit = new ArrayList<>(transactions);
    byCommit.sort(Comparator.comparingLong(Transaction::committed));
    long ordered = 0;
    int j = 0;
    Transaction latest = null; // of the transactions committed before t2 began, the one delivered last
    for (Transaction t2 : byBegin) {
      while (j < byCommit.size() && byCommit.get(j).committed() < t2.began()) {
        Transaction t1 = byCommit.get(j++);
        if (latest == null || spans.get(t1.xid())[1] > spans.get(latest.xid())[1]) {
          latest = t1;
        }
      }
      ordered += j;
      if (latest != null) {
        int t1Last = spans.get(latest.xid())[1];
        int t2First = spans.get(t2.xid())[0];
        Transaction t1 = latest;
        assertTrue(t1Last < t2First, () -> why + "transaction " + t1.xid() + " committed "
            + (t2.began() - t1.committed()) / 1_000 + " µs before transaction " + t2.xid()
            + " sent its first statement, but its event " + delivered.get(t1Last).id() + " is delivered after "
            + delivered.get(t2First).id() + ", the first of " + t2.xid());
      }
    }
    return ordered;
  }
}
