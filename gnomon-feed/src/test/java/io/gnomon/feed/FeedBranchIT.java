package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gnomon.BranchFollowedException;
import io.gnomon.BranchNotFoundException;
import io.gnomon.Gnomon;
import io.gnomon.GnomonConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
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
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The feed of a branch: the writes made through a branch's views, with main's guarantees. Concurrent writers on the
 * branch (conflicting on few keys, so they fail with 40001 and retry), rolled-back transactions and savepoints, and
 * writers on main at the same time; consumers of the branch and of main drain in pages of random sizes and "crash"
 * between pages (a page read and not acknowledged), or apply pages exactly once in a sink while their sessions are
 * killed.
 */
@Timeout(180)
class FeedBranchIT extends FeedTestBase {
  private static final int KEYS = 12;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  @Test
  void branchWritesDeliveredOnceInOrderWithChainedImages() throws Exception {
    long seed = seed("FeedBranchIT");
    Random random = new Random(seed);
    trackedTable("item");
    feed().register("on_main", List.of("public.item"));
    for (int k = 1; k <= KEYS; k++) {
      sql("insert into item values (" + k + ", 'main" + k + "')");
    }
    gnomon().branches().create("dev");
    feed().register("on_dev", List.of("public.item"), FeedStart.now(), true, null, "dev");
    feed().register("keys_dev", List.of("public.item"), FeedStart.now(), false, null, "dev");
    Gnomon ticking = Gnomon.open(GnomonConfig.builder().dataSource(dataSource())
        .tickInterval(Duration.ofMillis(20)).maintainInterval(Duration.ofSeconds(5)).build());
    ticking.startTicker();
    AtomicInteger devWrites = new AtomicInteger();
    AtomicInteger mainWrites = new AtomicInteger(KEYS);
    AtomicInteger conflicts = new AtomicInteger();
    AtomicInteger rolledBack = new AtomicInteger();
    AtomicBoolean writing = new AtomicBoolean(true);
    ExecutorService pool = Executors.newFixedThreadPool(5);
    List<ChangeEvent> dev;
    List<ChangeEvent> main;
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int w = 0; w < 3; w++) {
        long writerSeed = seed + 10 + w;
        int id = w;
        writers.add(pool.submit(() -> write("item", "dev", id, new Random(writerSeed), 3_000, devWrites, conflicts,
            rolledBack)));
      }
      writers.add(pool.submit(() -> write("item", null, 9, new Random(seed + 20), 3_000, mainWrites, conflicts,
          rolledBack)));
      Random consumerRandom = new Random(seed + 1);
      Future<List<ChangeEvent>> devDrain = pool.submit(() -> drainWithCrashes("on_dev", consumerRandom, writing));
      for (Future<?> f : writers) {
        f.get(60, TimeUnit.SECONDS);
      }
      // the last tick first, then the drain's stop: a drain that sees the stop and then an empty page has read every
      // batch up to a tick taken after the writers' last commit (the other order let it stop before the last batch was
      // cut, and lose the writes committed after the ticker's last tick)
      ticking.tick();
      writing.set(false);
      dev = devDrain.get(60, TimeUnit.SECONDS);
      main = drain("on_main", 1 + random.nextInt(50));
    } finally {
      writing.set(false);
      pool.shutdownNow();
      ticking.close();
    }
    List<ChangeEvent> keysOnly = drain("keys_dev", 1 + random.nextInt(50));
    System.out.printf("FeedBranchIT seed=%d: %d dev writes, %d main writes, %d conflicts retried, %d rolled back;"
        + " %d dev events, %d main events%n", seed, devWrites.get(), mainWrites.get(), conflicts.get(),
        rolledBack.get(), dev.size(), main.size());
    int branchId = Integer.parseInt(one("select branch_id from gnomon.branch where branch_name = 'dev'"));
    String bh = one("select gnomon.object_name(base_name, '_bh') from gnomon.tracked_table where table_name = 'item'");
    String h = one("select history_table from gnomon.tracked_table where table_name = 'item'");

    // exactly the branch's versions, once each, marked with the branch; main's consumer gets main's only
    assertEquals(Set.copyOf(column("select g_vid from gnomon_t." + bh + " where g_branch = " + branchId)),
        vids(dev), "seed " + seed + ": the branch's versions");
    assertEquals(devWrites.get(), dev.size(), "seed " + seed + ": one event per committed branch write");
    assertEquals(Set.copyOf(column("select g_vid from gnomon_t." + h)), vids(main), "seed " + seed);
    assertEquals(mainWrites.get(), main.size(), "seed " + seed);
    assertTrue(dev.stream().allMatch(e -> e.branch().equals("dev")), "seed " + seed);
    assertTrue(main.stream().allMatch(e -> e.branch().equals(ChangeEvent.MAIN)), "seed " + seed);
    // positions strictly increasing
    for (int i = 1; i < dev.size(); i++) {
      assertTrue(dev.get(i).position().isAfter(dev.get(i - 1).position()), "seed " + seed + " at " + i);
    }
    // the same events without images: same ids, same operations
    assertEquals(dev.stream().map(e -> e.id() + e.op()).toList(),
        keysOnly.stream().map(e -> e.id() + e.op()).toList(), "seed " + seed + ": a consumer without images");
    // along each key: versions in order, each event's before the previous one's after, the operation agreeing with
    // the images, and the last after image the branch's row now
    Map<Integer, List<ChangeEvent>> byKey = new TreeMap<>();
    for (ChangeEvent e : dev) {
      byKey.computeIfAbsent(e.key().get("id").asInt(), k -> new ArrayList<>()).add(e);
    }
    Map<Integer, JsonNode> now = branchRows();
    for (Map.Entry<Integer, List<ChangeEvent>> k : byKey.entrySet()) {
      JsonNode state = k.getKey() <= KEYS ? MAPPER.readTree("{\"id\":" + k.getKey() + ",\"v\":\"main" + k.getKey()
          + "\"}") : null;
      long vid = 0;
      for (ChangeEvent e : k.getValue()) {
        assertTrue(e.vid() > vid, "seed " + seed + ": versions of key " + k.getKey() + " out of order");
        vid = e.vid();
        assertEquals(state, e.before(), "seed " + seed + ": before of " + e);
        switch (e.op()) {
          case CREATE -> {
            assertNull(e.before(), "seed " + seed + ": " + e);
            assertNotNull(e.after(), "seed " + seed + ": " + e);
          }
          case UPDATE -> assertTrue(e.before() != null && e.after() != null, "seed " + seed + ": " + e);
          case DELETE -> assertNull(e.after(), "seed " + seed + ": " + e);
          default -> throw new AssertionError("seed " + seed + ": " + e);
        }
        state = e.after();
      }
      assertEquals(now.get(k.getKey()), state, "seed " + seed + ": key " + k.getKey() + " ends as on the branch");
    }
  }

  @Test
  void pagesOfABranchAppliedExactlyOnceAcrossKills() throws Exception {
    long seed = seed("FeedBranchIT exactly-once");
    Random random = new Random(seed);
    trackedTable("src");
    sql("create table sink (event_id text, vid bigint, op text, k integer, v text, branch text)");
    gnomon().branches().create("work");
    feed().register("sink", List.of("public.src"), FeedStart.now(), true, null, "work");
    PGSimpleDataSource tagged = new PGSimpleDataSource();
    tagged.setURL(db.jdbcUrl());
    tagged.setApplicationName("branch-runner");
    Feed runnersFeed = Feed.open(tagged);
    FeedRunnerConfig config = FeedRunnerConfig.builder().pageSize(3 + random.nextInt(40))
        .idleInterval(Duration.ofMillis(10)).initialBackoff(Duration.ofMillis(5)).maxBackoff(Duration.ofMillis(50))
        .maxRetries(10_000).build();
    TransactionalFeedHandler apply = (c, page) -> {
      try (PreparedStatement ps = c.prepareStatement("insert into sink values (?, ?, ?, ?, ?, ?)")) {
        for (ChangeEvent e : page.events()) {
          ps.setString(1, e.id());
          ps.setLong(2, e.vid());
          ps.setString(3, e.op().code());
          ps.setInt(4, e.key().get("id").asInt());
          ps.setString(5, e.after() == null ? null : e.after().get("v").asText());
          ps.setString(6, e.branch());
          ps.addBatch();
        }
        ps.executeBatch();
      }
      LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(java.util.concurrent.ThreadLocalRandom.current().nextInt(3)));
    };
    Gnomon ticking = Gnomon.open(GnomonConfig.builder().dataSource(dataSource())
        .tickInterval(Duration.ofMillis(20)).maintainInterval(Duration.ofSeconds(5)).build());
    ticking.startTicker();
    AtomicBoolean running = new AtomicBoolean(true);
    AtomicInteger kills = new AtomicInteger();
    AtomicInteger writes = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    FeedRunner one = runnersFeed.startTransactional("sink", apply, config);
    FeedRunner two = runnersFeed.startTransactional("sink", apply, config);
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int w = 0; w < 2; w++) {
        long writerSeed = seed + 10 + w;
        int id = w;
        writers.add(pool.submit(() -> write("src", "work", id, new Random(writerSeed), 2_500, writes,
            new AtomicInteger(), new AtomicInteger())));
      }
      Random killerRandom = new Random(seed + 2);
      Future<?> killer = pool.submit(() -> {
        while (running.get()) {
          LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50 + killerRandom.nextInt(250)));
          kills.addAndGet(Integer.parseInt(one("select count(pg_terminate_backend(pid)) from (select pid from"
              + " pg_stat_activity where application_name = 'branch-runner' and datname = current_database()"
              + " order by random() limit 1) k")));
        }
        return null;
      });
      for (Future<?> f : writers) {
        f.get(60, TimeUnit.SECONDS);
      }
      running.set(false);
      killer.get(30, TimeUnit.SECONDS);
      FeedPosition target = FeedPosition.afterTick(ticking.tick());
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (feed().consumer("sink").orElseThrow().position().compareTo(target) < 0) {
        assertTrue(one.state() == FeedRunner.State.RUNNING && two.state() == FeedRunner.State.RUNNING,
            "seed " + seed + ": a runner stopped: " + one.failure() + " / " + two.failure());
        assertTrue(System.nanoTime() < deadline, "seed " + seed + ": the runners did not catch up");
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
      }
    } finally {
      running.set(false);
      one.close();
      two.close();
      pool.shutdownNow();
      ticking.close();
    }
    String bh = one("select gnomon.object_name(base_name, '_bh') from gnomon.tracked_table where table_name = 'src'");
    System.out.printf("FeedBranchIT exactly-once seed=%d: %d writes, page size %d, %d kills, %d + %d events%n", seed,
        writes.get(), config.pageSize(), kills.get(), one.eventsHandled(), two.eventsHandled());
    assertEquals("0", one("select count(*) from (select vid from sink group by vid having count(*) > 1) d"),
        "seed " + seed + ": duplicates in the sink");
    assertEquals("0", one("select count(*) from gnomon_t." + bh + " h where not exists"
        + " (select 1 from sink s where s.vid = h.g_vid)"), "seed " + seed + ": branch versions missing from the sink");
    assertEquals(String.valueOf(writes.get()), one("select count(*) from sink"), "seed " + seed);
    assertEquals("0", one("select count(*) from sink where branch <> 'work'"), "seed " + seed);
    assertTrue(kills.get() > 0, "seed " + seed + ": nothing was killed");
  }

  @Test
  void largeToastedValuesOnABranchAreDeliveredWhole() throws Exception {
    sql("create table big (id integer primary key, title text, body text)");
    gnomon().track("public.big");
    // 1 MB of random letters each: incompressible, so stored out of line (TOAST)
    Random random = new Random(7);
    String[] bodies = new String[2];
    for (int n = 0; n < bodies.length; n++) {
      StringBuilder b = new StringBuilder(1 << 20);
      for (int i = 0; i < (1 << 20); i++) {
        b.append((char) ('a' + random.nextInt(26)));
      }
      bodies[n] = b.toString();
    }
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement("insert into big values (1, 't1', ?)")) {
      ps.setString(1, bodies[0]);
      ps.executeUpdate();
    }
    for (String kind : List.of("logged", "scratch")) {
      String branch = "toast_" + kind;
      sql("select gnomon.branch_create('" + branch + "', 'main', null, " + kind.equals("scratch") + ")");
      feed().register("big_" + kind, List.of("public.big"), FeedStart.now(), true, null, branch);
      try (Connection c = connect()) {
        // the row the branch inherits from main, its body untouched by the update; a new row; both deleted
        sql(c, "select gnomon.branch_use('" + branch + "')", "update big set title = 't2' where id = 1");
        try (PreparedStatement ps = c.prepareStatement("insert into big values (2, 'n', ?)")) {
          ps.setString(1, bodies[1]);
          ps.executeUpdate();
        }
        sql(c, "delete from big", "select gnomon.branch_use('main')");
      }
      tick();
      List<ChangeEvent> events = drain("big_" + kind, 10);
      assertEquals(List.of("u", "c", "d", "d"), events.stream().map(e -> e.op().code()).toList(), kind);
      assertEquals(bodies[0], events.get(0).before().get("body").asText(), kind);
      assertEquals(bodies[0], events.get(0).after().get("body").asText(), kind);
      assertEquals("t2", events.get(0).after().get("title").asText(), kind);
      assertEquals(bodies[1], events.get(1).after().get("body").asText(), kind);
      Map<Integer, String> deleted = new HashMap<>();
      for (ChangeEvent e : events.subList(2, 4)) {
        deleted.put(e.key().get("id").asInt(), e.before().get("body").asText());
      }
      assertEquals(Map.of(1, bodies[0], 2, bodies[1]), deleted, kind);
      JsonNode json = new ObjectMapper().readTree(feed().toJson(events.get(1)));
      assertEquals(bodies[1], json.get("after").get("body").asText(), kind);
    }
    assertEquals(bodies[0], one("select body from big where id = 1"), "main keeps its row");
  }

  @Test
  void aFollowedBranchCannotBeDroppedAndABackfillReadsTheBranch() throws Exception {
    trackedTable("doc");
    sql("insert into doc values (1, 'a'), (2, 'b')");
    gnomon().branches().create("draft");
    try (Connection c = connect()) {
      sql(c, "select gnomon.branch_use('draft')", "update doc set v = 'a2' where id = 1", "insert into doc values (3, 'c')",
          "select gnomon.branch_use('main')");
    }
    feed().register("copy", List.of("public.doc"), FeedStart.backfill(), true, null, "draft");
    try (Connection c = connect()) {
      sql(c, "select gnomon.branch_use('draft')", "delete from doc where id = 2", "update doc set v = 'c2' where id = 3",
          "select gnomon.branch_use('main')", "update doc set v = 'main-only' where id = 1");
    }
    tick();
    Map<Integer, String> copy = new TreeMap<>();
    feed().backfill("copy", e -> copy.put(e.key().get("id").asInt(), e.after().get("v").asText()));
    assertEquals(Map.of(1, "a2", 2, "b", 3, "c"), copy, "the branch as of the consumer's start");
    for (ChangeEvent e : drain("copy", 10)) {
      assertEquals("draft", e.branch());
      if (e.after() == null) {
        copy.remove(e.key().get("id").asInt());
      } else {
        copy.put(e.key().get("id").asInt(), e.after().get("v").asText());
      }
    }
    assertEquals(Map.of(1, "a2", 3, "c2"), copy, "backfill + feed = the branch now");
    BranchFollowedException refused = assertThrows(BranchFollowedException.class,
        () -> gnomon().branches().drop("draft"));
    assertTrue(refused.getMessage().contains("'copy'"), refused.getMessage());
    assertEquals("draft", feed().consumer("copy").orElseThrow().branch());
    assertThrows(BranchNotFoundException.class,
        () -> feed().register("nowhere", List.of("public.doc"), FeedStart.now(), true, null, "no_such_branch"));
    feed().unregister("copy");
    gnomon().branches().drop("draft");
  }

  /** Writes random changes to {@code table} for {@code millis} on {@code branch} (null: main); counts versions. */
  private Void write(String table, String branch, int writer, Random random, long millis, AtomicInteger committed,
      AtomicInteger conflicts, AtomicInteger rolledBack) throws SQLException {
    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    int seq = 0;
    try (Connection c = dataSource().getConnection()) {
      if (branch != null) {
        sql(c, "select gnomon.branch_use('" + branch + "')");
      }
      c.setAutoCommit(false);
      while (System.nanoTime() < until) {
        int versions = 0;
        try (Statement st = c.createStatement()) {
          int n = 1 + random.nextInt(4);
          for (int i = 0; i < n; i++) {
            int key = 1 + random.nextInt(KEYS + 4);
            String value = "w" + writer + "_" + (++seq);
            boolean savepoint = random.nextInt(8) == 0;
            if (savepoint) {
              st.execute("savepoint s");
            }
            int changed = switch (random.nextInt(6)) {
              case 0 -> st.executeUpdate("delete from " + table + " where id = " + key);
              case 1 -> st.executeUpdate("insert into " + table + " select " + key + ", '" + value + "' where not exists"
                  + " (select 1 from " + table + " where id = " + key + ")");
              default -> st.executeUpdate("update " + table + " set v = '" + value + "' where id = " + key);
            };
            if (savepoint && random.nextBoolean()) {
              st.execute("rollback to savepoint s");
            } else {
              versions += changed;
            }
          }
          if (random.nextInt(6) == 0) {
            c.rollback();
            rolledBack.incrementAndGet();
          } else {
            c.commit();
            committed.addAndGet(versions);
          }
        } catch (SQLException e) {
          // conflicting writes on a branch: 40001 (a row changed by a concurrent transaction), 23505 (a key inserted
          // concurrently); on main, deadlocks
          c.rollback();
          if (!List.of("40001", "23505", "40P01").contains(e.getSQLState())) {
            throw e;
          }
          conflicts.incrementAndGet();
        }
      }
    }
    return null;
  }

  /**
   * Drains a consumer in pages of random sizes until the writers stop and a page comes back empty, "crashing" now
   * and then between reading a page and acknowledging it: the page is read again, and must come back the same.
   */
  private List<ChangeEvent> drainWithCrashes(String consumer, Random random, AtomicBoolean writing) {
    List<ChangeEvent> acked = new ArrayList<>();
    FeedPage unacked = null;
    while (true) {
      boolean stopped = !writing.get();
      FeedPage page = feed().poll(consumer, 1 + random.nextInt(13));
      if (unacked != null && !unacked.isEmpty() && !page.isEmpty()) {
        // what a crashed consumer reads again starts with the same event: same id, same content
        assertEquals(unacked.events().get(0), page.events().get(0), "a page read again after a crash");
      }
      if (random.nextInt(5) == 0) {
        unacked = page; // crashed before acknowledging
        continue;
      }
      unacked = null;
      acked.addAll(page.events());
      if (page.advances()) {
        feed().ack(consumer, page.position());
      }
      if (page.isEmpty() && stopped) {
        return acked;
      }
      if (page.isEmpty()) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
      }
    }
  }

  /** The rows of {@code item} on branch dev now, as JSON trees by key. */
  private Map<Integer, JsonNode> branchRows() throws Exception {
    Map<Integer, JsonNode> rows = new HashMap<>();
    try (Connection c = connect()) {
      sql(c, "select gnomon.branch_use('dev')");
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("select id, row_to_json(i)::text from item i")) {
        while (rs.next()) {
          rows.put(rs.getInt(1), MAPPER.readTree(rs.getString(2)));
        }
      }
      sql(c, "select gnomon.branch_use('main')");
    }
    return rows;
  }

  private static Set<String> vids(List<ChangeEvent> events) {
    Set<String> out = new HashSet<>();
    for (ChangeEvent e : events) {
      assertTrue(out.add(String.valueOf(e.vid())), "duplicate event " + e);
    }
    return out;
  }
}
