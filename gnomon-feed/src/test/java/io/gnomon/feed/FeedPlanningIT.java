package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The feed finds a batch's and a page's versions through the history's BRIN index on {@code g_xid} whatever the
 * partition's statistics (see {@code gnomon.feed_history_planning}): on a history of 40,000 versions that was never
 * analyzed, the plans inside {@code gnomon.feed_read} (captured with {@code auto_explain}) scan no history partition
 * sequentially and not through its {@code (key, g_xid)} B-tree without a key, and the pages are the pages read again
 * once the partition is analyzed. {@code gnomon.tick()} leaves no range of a followed history unsummarized. The same
 * for a consumer of a branch, over the branch history.
 */
@Timeout(300)
class FeedPlanningIT extends FeedTestBase {
  @Test
  void anUnanalyzedHistoryIsReadThroughItsBrinIndexAndGivesTheSamePages() throws Exception {
    long seed = seed("FeedPlanningIT");
    Random random = new Random(seed);
    sql("create table pl_a (id integer primary key, v text not null)", "select gnomon.track('public.pl_a')");
    String part = one("select p.relid::regclass::text from gnomon.tracked_table t,"
        + " pg_partition_tree(format('gnomon_t.%I', t.history_table)::regclass) p"
        + " where t.table_name = 'pl_a' and p.isleaf");
    String brin = one("select i.indexrelid::regclass::text from pg_index i join pg_class c on c.oid = i.indexrelid"
        + " join pg_am a on a.oid = c.relam where i.indrelid = '" + part + "'::regclass and a.amname = 'brin'");
    String btree = one("select i.indexrelid::regclass::text from pg_index i join pg_class c on c.oid = i.indexrelid"
        + " join pg_am a on a.oid = c.relam where i.indrelid = '" + part + "'::regclass and a.amname = 'btree'");
    // no statistics until the test analyzes it
    sql("alter table " + part + " set (autovacuum_enabled = false)");
    sql("insert into pl_a select i, 'v' || i from generate_series(1, 20000) i", "update pl_a set v = v || '.'");
    tick();
    for (String name : List.of("pl_unanalyzed", "pl_analyzed")) {
      feed().register(name, List.of("public.pl_a"), FeedStart.now(), true);
    }
    // small transactions in batches of 20 to 60 versions, far fewer than the history holds
    try (Connection c = connect()) {
      for (int batch = 0; batch < 6; batch++) {
        for (int t = 0, n = 4 + random.nextInt(8); t < n; t++) {
          sql(c, "update pl_a set v = v || 'x' where id in (" + (1 + random.nextInt(20000)) + ", "
              + (1 + random.nextInt(20000)) + ", " + (1 + random.nextInt(20000)) + ")",
              "insert into pl_a values (" + (20001 + batch * 100 + t) + ", 'new') on conflict (id) do nothing");
        }
        tick();
      }
    }
    assertEquals("0", one("select count(*) from pg_stats where schemaname || '.' || tablename = '" + part + "'"),
        "the history partition has no statistics yet");
    assertEquals("0", one("select brin_summarize_new_values('" + brin + "')"),
        "gnomon.tick() summarized every new range of a history a consumer follows");

    // the plans inside every page, read after one another without acknowledging (the comparison below reads them
    // again, acknowledged, once their kept batch orders are gone)
    String plans = pagePlans("pl_unanalyzed");
    String partName = part.replace("gnomon_t.", "");
    assertTrue(plans.contains("Bitmap Index Scan on " + brin.replace("gnomon_t.", "")),
        "the versions were found through the BRIN index:\n" + plans);
    assertFalse(plans.contains("Seq Scan on " + partName), "no sequential scan of the history partition:\n" + plans);
    assertFalse(plans.contains("Index Scan using " + btree.replace("gnomon_t.", "") + " on " + partName + " h "),
        "no scan of the (key, g_xid) B-tree without a key:\n" + plans);

    sql("delete from gnomon.feed_batch");
    List<String> unanalyzed = readAll("pl_unanalyzed");
    assertTrue(unanalyzed.size() >= 40, "seed " + seed + ": read " + unanalyzed.size() + " events");
    sql("analyze " + part, "delete from gnomon.feed_batch");
    List<String> analyzed = readAll("pl_analyzed");
    assertEquals(unanalyzed, analyzed, "seed " + seed + ": the same pages with and without statistics");
  }

  /**
   * The same guarantees for a consumer of a branch, whose pages read the branch history {@code gnomon_t.<t>_bh}: its
   * leaf partition never analyzed, {@code gnomon.tick()} summarizes its BRIN ranges (it summarized main's only, so a
   * branch's live batch read every range written since autovacuum last came by), the plans inside
   * {@code gnomon.feed_read} find the versions through that BRIN, and the pages are those read once it is analyzed.
   */
  @Test
  void anUnanalyzedBranchHistoryIsReadThroughItsBrinIndexAndGivesTheSamePages() throws Exception {
    long seed = seed("FeedPlanningIT (branch)");
    Random random = new Random(seed);
    sql("create table pl_b (id integer primary key, v text not null)", "select gnomon.track('public.pl_b')",
        "insert into pl_b select i, 'v' || i from generate_series(1, 20000) i");
    gnomon().branches().create("pl_dev");
    String part = one("select format('gnomon_t.%I', gnomon.object_name(gnomon.object_name(t.base_name, '_bh'), '_l'))"
        + " from gnomon.tracked_table t where t.table_name = 'pl_b'");
    String brin = one("select i.indexrelid::regclass::text from pg_index i join pg_class c on c.oid = i.indexrelid"
        + " join pg_am a on a.oid = c.relam where i.indrelid = '" + part + "'::regclass and a.amname = 'brin'");
    // the B-tree that leads with the key (id, g_branch, g_vid)
    String btree = one("select i.indexrelid::regclass::text from pg_index i join pg_class c on c.oid = i.indexrelid"
        + " join pg_am a on a.oid = c.relam where i.indrelid = '" + part + "'::regclass and a.amname = 'btree'"
        + " and i.indkey[0] = (select attnum from pg_attribute where attrelid = i.indrelid and attname = 'id')");
    // the B-tree on g_branch alone (for drops and diffs): every version of the branch
    String byBranch = one("select i.indexrelid::regclass::text from pg_index i join pg_class c on c.oid = i.indexrelid"
        + " join pg_am a on a.oid = c.relam where i.indrelid = '" + part + "'::regclass and a.amname = 'btree'"
        + " and i.indnatts = 1 and i.indkey[0] = (select attnum from pg_attribute where attrelid = i.indrelid"
        + " and attname = 'g_branch')");
    sql("alter table " + part + " set (autovacuum_enabled = false)");
    try (Connection c = connect()) {
      sql(c, "select gnomon.branch_use('pl_dev')", "update pl_b set v = v || '.'");
    }
    tick();
    for (String name : List.of("plb_unanalyzed", "plb_analyzed")) {
      feed().register(name, List.of("public.pl_b"), FeedStart.now(), true, null, "pl_dev");
    }
    try (Connection c = connect()) {
      sql(c, "select gnomon.branch_use('pl_dev')");
      for (int batch = 0; batch < 6; batch++) {
        for (int t = 0, n = 4 + random.nextInt(8); t < n; t++) {
          sql(c, "update pl_b set v = v || 'x' where id in (" + (1 + random.nextInt(20000)) + ", "
              + (1 + random.nextInt(20000)) + ", " + (1 + random.nextInt(20000)) + ")",
              "insert into pl_b values (" + (20001 + batch * 100 + t) + ", 'new')");
        }
        tick();
      }
    }
    assertEquals("0", one("select count(*) from pg_stats where schemaname || '.' || tablename = '" + part + "'"),
        "the branch history partition has no statistics yet");
    assertEquals("0", one("select brin_summarize_new_values('" + brin + "')"),
        "gnomon.tick() summarized every new range of a branch history a consumer follows");

    String plans = pagePlans("plb_unanalyzed");
    String partName = part.replace("gnomon_t.", "");
    assertTrue(plans.contains("Bitmap Index Scan on " + brin.replace("gnomon_t.", "")),
        "the versions were found through the BRIN index:\n" + plans);
    assertFalse(plans.contains("Seq Scan on " + partName), "no sequential scan of the branch history:\n" + plans);
    assertFalse(plans.contains("Index Scan using " + btree.replace("gnomon_t.", "") + " on " + partName + " h "),
        "no scan of the (key, g_branch, g_vid) B-tree without a key:\n" + plans);
    assertFalse(plans.contains("Index Scan on " + byBranch.replace("gnomon_t.", "")),
        "no scan of every version of the branch through the (g_branch) B-tree:\n" + plans);

    sql("delete from gnomon.feed_batch");
    List<String> unanalyzed = readAll("plb_unanalyzed");
    assertTrue(unanalyzed.size() >= 40, "seed " + seed + ": read " + unanalyzed.size() + " events");
    sql("analyze " + part, "delete from gnomon.feed_batch");
    // the scratch leaf, empty, has no statistics and counts for nothing
    assertEquals("f", one("select gnomon.feed_history_unanalyzed(array[table_id], true) from gnomon.tracked_table"
        + " where table_name = 'pl_b'"), "the analyzed branch history reads as analyzed");
    List<String> analyzed = readAll("plb_analyzed");
    assertEquals(unanalyzed, analyzed, "seed " + seed + ": the same pages with and without statistics");
  }

  /** Only the lines of the plans in auto_explain's messages (their query texts hold the words searched for too). */
  private static String plansOf(String log) {
    StringBuilder out = new StringBuilder();
    for (String line : log.split("\n")) {
      if (line.contains("Scan")) {
        out.append(line).append('\n');
      }
    }
    return out.toString();
  }

  /** Every page of the consumer in pages of 7, each row as text, acknowledged. */
  private List<String> readAll(String consumer) throws SQLException {
    List<String> all = new ArrayList<>();
    try (Connection c = connect()) {
      List<String> page;
      do {
        page = FeedBatchOrderIT.page(c, consumer, 7);
        all.addAll(page);
      } while (!page.isEmpty());
    }
    return all;
  }

  /**
   * The plans (auto_explain, nested statements) of every page a consumer reads from its position, one page after
   * another without acknowledging.
   */
  private String pagePlans(String consumer) throws Exception {
    try (Connection c = connect(); Statement st = c.createStatement()) {
      sql(c, "load 'auto_explain'", "set auto_explain.log_min_duration = 0",
          "set auto_explain.log_nested_statements = on", "set client_min_messages = log");
      StringBuilder log = new StringBuilder();
      String after = one(c, "select gnomon.feed_position('" + consumer + "')");
      int pages = 0;
      while (after != null && pages++ < 1000) {
        st.clearWarnings();
        try (ResultSet rs = st.executeQuery("select (array_agg(event_position))[count(*)] from"
            + " gnomon.feed_read('" + consumer + "', 7, '" + after + "')")) {
          rs.next();
          after = rs.getString(1);
        }
        for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
          log.append(w.getMessage()).append('\n');
        }
      }
      return plansOf(log.toString());
    }
  }

}
