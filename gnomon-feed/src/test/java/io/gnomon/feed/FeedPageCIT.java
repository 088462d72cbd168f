package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The C module's page reader ({@code gnomon.feed_page_c}, gnomon-c/src/feed_page.c) returns exactly the events of the
 * SQL page ({@code set gnomon.feed_page_c = off}): on a random history of a table with a column of every kind the
 * images render differently (text with quotes, backslashes, control characters and four-byte UTF-8; TOASTed text;
 * numeric with NaN; float8 with NaN and infinities; jsonb; an array; an enum; a domain; a composite; timestamptz,
 * date, boolean; char(n), blank-padded, with the same texts; NULLs), with inserts, updates, deletes and key updates in transactions of one to thirty writes, its
 * history rolled into a second partition halfway (a key's next version in either), and of
 * FeedBatchOrderIT's two tables written by interleaved transactions (xids out of commit order, split transactions),
 * two consumers of main from the same start (and two more from a coordinate taken while transactions were open) read
 * page by page in pages of random sizes, each event's position, tick,
 * transaction, version, table, operation, key and both images as text.
 */
@Timeout(300)
class FeedPageCIT extends FeedTestBase {

  @Test
  void theCPageReturnsTheEventsOfTheSqlPage() throws Exception {
    long seed = seed("FeedPageCIT");
    Random random = new Random(seed);
    sql("select gnomon.use_c_module(true, '" + cLibrary() + "')",
        "create type fc_mood as enum ('sad', 'ok', 'très \"content\"')",
        "create domain fc_pos as integer check (value > 0)",
        "create type fc_pair as (x integer, y text)",
        "create table fc_t (id integer primary key, s text, n numeric, f float8, j jsonb, a text[], e fc_mood,"
            + " d fc_pos, p fc_pair, ts timestamptz, dt date, b boolean, ch char(12))",
        "select gnomon.track('public.fc_t')");
    List<String> tables = new ArrayList<>(FeedBatchOrderIT.trackTables(this));
    tables.add("public.fc_t");
    for (String name : List.of("c_on", "c_off")) {
      feed().register(name, tables, FeedStart.now(), true);
    }
    sql("select gnomon.branch_create('bo_br')");
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      for (int txn = 0; txn < 60; txn++) {
        int n = random.nextInt(6) == 0 ? 10 + random.nextInt(20) : 1 + random.nextInt(4);
        for (int i = 0; i < n; i++) {
          writeTyped(c, random);
        }
        c.commit();
        if (random.nextInt(6) == 0) {
          tick();
        }
        if (txn == 30) {
          // a second history partition from here on: a key's next version may be in either
          sql("select gnomon.roll_history('public.fc_t', 1000)", "select gnomon.roll_history('public.bo_a', 1000)",
              "do $$ begin for i in 1..1001 loop perform pg_current_xact_id(); commit; end loop; end $$");
        }
      }
    }
    // (after the writes to fc_t: its writer on the branch goes back to the pool with the branch selected)
    // consumers that start at a coordinate taken while transactions are open: their first batches are cut by it
    FeedBatchOrderIT.interleaveWrites(this, random, 120, 50, () -> {
      String start = one("select gnomon.coordinate()");
      for (String name : List.of("m_on", "m_off")) {
        feed().register(name, tables, FeedStart.at(io.gnomon.Coordinate.parse(start)), true);
      }
    });
    tick();
    for (String[] pair : new String[][] {{"c_on", "c_off"}, {"m_on", "m_off"}}) {
      int pages = 0;
      int events = 0;
      try (Connection on = connect(); Connection off = connect()) {
        sql(off, "set gnomon.feed_page_c = off");
        assertEquals("t", one(on, "select bool_or(q like '%gnomon.feed_page_c(%') from gnomon.feed_page_plan('"
            + pair[0] + "', 1000, null)"), "seed " + seed + ": the consumer's pages are read by the C page");
        assertEquals("f", one(off, "select bool_or(q like '%gnomon.feed_page_c(%') from gnomon.feed_page_plan('"
            + pair[1] + "', 1000, null)"), "seed " + seed + ": with gnomon.feed_page_c off, by the SQL page");
        Random sizes = new Random(seed + pair[0].hashCode());
        while (true) {
          int pageSize = sizes.nextInt(5) == 0 ? 20 + sizes.nextInt(60) : 1 + sizes.nextInt(12);
          List<String> c = FeedBatchOrderIT.page(on, pair[0], pageSize);
          List<String> s = FeedBatchOrderIT.page(off, pair[1], pageSize);
          assertEquals(s, c, "seed " + seed + ": page " + pages + " of " + pageSize + " for " + pair[0]);
          if (c.isEmpty()) {
            break;
          }
          pages++;
          events += c.size();
        }
      }
      int least = pair[0].startsWith("c") ? 200 : 10;
      assertTrue(events >= least && pages >= 3, "seed " + seed + ": " + pair[0] + " read " + events + " events in "
          + pages + " pages");
    }
  }

  /**
   * The C page's probes keep the last btree leaf between keys (gnomon-c/src/leaf_probe.c): on tables of many leaves
   * its pages still equal the SQL page's, and each of the probe's ways is taken (the kept leaf, a leaf one or two steps
   * to its right, a descent, an index scan where a key's entries run past a leaf's end). Three tables: 20,000 integer keys updated at random in
   * pages of up to 600 events; a key updated 1,500 times in one batch, whose history entries span several leaves;
   * a composite primary key of a text and an integer.
   */
  @Test
  void theCPageProbesManyLeavesAsTheSqlPageReads() throws Exception {
    long seed = seed("FeedPageCIT leaf probes");
    Random random = new Random(seed);
    sql("select gnomon.use_c_module(true, '" + cLibrary() + "')",
        "create table lp_t (id integer primary key, v integer, pad text)",
        "create table lp_d (a integer not null, b text not null, v integer, primary key (b, a))",
        "insert into lp_t select i, 0, repeat('x', 40) from generate_series(1, 20000) i",
        "insert into lp_d select i % 500, 'k' || (i / 500), 0 from generate_series(1, 3000) i",
        "select gnomon.track('public.lp_t')", "select gnomon.track('public.lp_d')");
    List<String> tables = List.of("public.lp_t", "public.lp_d");
    for (String name : List.of("lp_on", "lp_off")) {
      feed().register(name, tables, FeedStart.now(), true);
    }
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      for (int txn = 0; txn < 400; txn++) {
        int n = 1 + random.nextInt(30);
        for (int i = 0; i < n; i++) {
          if (random.nextInt(4) == 0) {
            sql(c, "update lp_d set v = v + 1 where a = " + random.nextInt(500) + " and b = 'k" + random.nextInt(6)
                + "'");
          } else {
            sql(c, "update lp_t set v = v + 1 where id = " + (1 + random.nextInt(20000)));
          }
        }
        c.commit();
        if (random.nextInt(40) == 0) {
          tick();
        }
      }
      tick();
      // one batch: a hot key's 1,500 versions, between updates of its neighbours
      for (int i = 0; i < 1500; i++) {
        sql(c, "update lp_t set v = v + 1 where id = 7");
        if (i % 100 == 0) {
          sql(c, "update lp_t set v = v + 1 where id between 1 and 30");
        }
        c.commit();
      }
      sql(c, "update lp_t set v = v + 1 where id between 3 and 9");
      c.commit();
    }
    tick();
    long[] ways = new long[4];
    Pattern counts = Pattern.compile(
        "(\\d+) on the kept leaf \\((\\d+) of them a step right\\), (\\d+) descents, (\\d+) index scans");
    int pages = 0;
    int events = 0;
    try (Connection on = connect(); Connection off = connect()) {
      sql(off, "set gnomon.feed_page_c = off");
      sql(on, "set client_min_messages = debug1");
      Random sizes = new Random(seed + 1);
      while (true) {
        int pageSize = 1 + sizes.nextInt(600);
        List<String> c = FeedBatchOrderIT.page(on, "lp_on", pageSize, w -> {
          Matcher m = counts.matcher(w.getMessage());
          if (m.find()) {
            for (int k = 0; k < 4; k++) {
              ways[k] += Long.parseLong(m.group(k + 1));
            }
          }
        });
        List<String> s = FeedBatchOrderIT.page(off, "lp_off", pageSize);
        assertEquals(s, c, "seed " + seed + ": page " + pages + " of " + pageSize);
        if (c.isEmpty()) {
          break;
        }
        pages++;
        events += c.size();
      }
    }
    System.out.printf("FeedPageCIT leaf probes: %d events in %d pages; probes: %d on the kept leaf (%d of them a step"
        + " right), %d descents, %d index scans%n", events, pages, ways[0], ways[1], ways[2], ways[3]);
    assertTrue(events > 6000, "seed " + seed + ": " + events + " events");
    assertTrue(ways[0] > ways[2], "seed " + seed + ": most probes stay on the kept leaf: " + ways[0] + " kept, "
        + ways[2] + " descents");
    assertTrue(ways[1] > 0 && ways[2] > 0 && ways[3] > 0, "seed " + seed + ": steps right " + ways[1] + ", descents "
        + ways[2] + ", index scans " + ways[3]);
  }

  /** Called for a table it cannot read, the C page says so with GN036 (gnomon.feed_read never does that). */
  @Test
  void theCPageRefusesATableItCannotRead() throws Exception {
    sql("select gnomon.use_c_module(true, '" + cLibrary() + "')");
    SQLException e = org.junit.jupiter.api.Assertions.assertThrows(SQLException.class, () -> sql("select * from"
        + " gnomon.feed_page_c(987654, pg_current_snapshot(), pg_current_snapshot(), pg_current_snapshot(), true,"
        + " '{}', '{}', '1', '1', 0, 0, 0, 0, null, '0', true, 1, 0)"));
    assertEquals("GN036", e.getSQLState());
    assertTrue(e.getMessage().contains("no tracked table has the id 987654"), e.getMessage());
  }

  private static final String[] TEXTS = {
    "plain", "", "it's \"quoted\"", "back\\slash", "tab\tnew\nline\u0001", "héllo 世界 \uD83C\uDF89", "null", "{\"a\":1}"
  };

  /** One random write to fc_t: an upsert of random values, an update of one column, a delete, or a key update. */
  private static void writeTyped(Connection c, Random r) throws SQLException {
    int id = 1 + r.nextInt(40);
    switch (r.nextInt(6)) {
      case 0 -> sql(c, "delete from fc_t where id = " + id);
      case 1 -> {
        int to = 100 + r.nextInt(40);
        sql(c, "update fc_t set id = " + to + " where id = " + id + " and not exists (select 1 from fc_t x where x.id = "
            + to + ")");
      }
      case 2 -> sql(c, "update fc_t set s = " + (r.nextBoolean() ? "null" : "repeat(md5(random()::text), 4000)")
          + " where id = " + id);
      default -> {
        try (PreparedStatement ps = c.prepareStatement("insert into fc_t values (?, ?, ?::numeric, ?::float8, ?::jsonb,"
            + " ?::text[], ?::fc_mood, ?::fc_pos, row(?, ?)::fc_pair, ?::timestamptz, ?::date, ?::boolean,"
            + " ?::char(12)) on conflict (id) do update set s = excluded.s, n = excluded.n, f = excluded.f,"
            + " j = excluded.j, a = excluded.a, e = excluded.e, d = excluded.d, p = excluded.p, ts = excluded.ts,"
            + " dt = excluded.dt, b = excluded.b, ch = excluded.ch")) {
          ps.setInt(1, id);
          ps.setString(2, maybe(r, TEXTS[r.nextInt(TEXTS.length)]));
          ps.setString(3, maybe(r, new String[] {"1.50", "-0.000001", "NaN", "12345678901234567890.1"}[r.nextInt(4)]));
          ps.setString(4, maybe(r, new String[] {"1.5", "NaN", "Infinity", "-Infinity", "1e-300"}[r.nextInt(5)]));
          ps.setString(5, maybe(r, new String[] {"{\"k\": [1, \"é\", null]}", "\"s\"", "3", "{}"}[r.nextInt(4)]));
          ps.setString(6, maybe(r, "{\"a b\",NULL,\"" + TEXTS[r.nextInt(3)].replace("\"", "\\\"") + "\"}"));
          ps.setString(7, maybe(r, new String[] {"sad", "ok", "très \"content\""}[r.nextInt(3)]));
          ps.setString(8, maybe(r, String.valueOf(1 + r.nextInt(1000))));
          ps.setObject(9, r.nextBoolean() ? null : r.nextInt(100));
          ps.setString(10, maybe(r, TEXTS[r.nextInt(TEXTS.length)]));
          ps.setString(11, maybe(r, new String[] {"2026-01-02 03:04:05.123456+02", "infinity", "1999-12-31 23:59:59Z"}
              [r.nextInt(3)]));
          ps.setString(12, maybe(r, new String[] {"2026-02-28", "-infinity", "0044-03-15 BC"}[r.nextInt(3)]));
          ps.setString(13, maybe(r, r.nextBoolean() ? "true" : "false"));
          // char(12): blank-padded, or cut to 12 characters by the cast
          ps.setString(14, maybe(r, TEXTS[r.nextInt(TEXTS.length)]));
          ps.execute();
        }
      }
    }
  }

  private static String maybe(Random r, String value) {
    return r.nextInt(6) == 0 ? null : value;
  }

  /** The C module built by gnomon-c (-Dgnomon.c.library, set by the Maven build); missing, the test fails. */
  static String cLibrary() {
    String path = System.getProperty("gnomon.c.library");
    assertTrue(path != null && !path.isBlank(), "-Dgnomon.c.library is not set; run the tests through Maven");
    Path p = Path.of(path).toAbsolutePath().normalize();
    assertTrue(Files.isReadable(p), p + " does not exist: build it with `make -C gnomon-c`");
    return p.toString();
  }
}
