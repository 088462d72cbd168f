package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** gnomon.feed_read in C (gnomon-c/src/feed_read.c) against the PL/pgSQL one, on a database of its own. */
@Timeout(300)
class FeedReadCIT extends FeedTestBase {

  /**
   * With the C module, gnomon.feed_read is the module's (gnomon-c/src/feed_read.c), which reads a C page straight into
   * its result and runs every other page's statement itself; without it, the PL/pgSQL one. Both return the same pages:
   * consumers of one table (the C page), of two tables and of a branch (statements), and keys only, drained once by
   * each feed_read in the same random page sizes, heartbeats included.
   */
  @Test
  void theCFeedReadReturnsThePagesOfThePlpgsqlOne() throws Exception {
    long seed = seed("FeedReadCIT");
    Random random = new Random(seed);
    String language = "select l.lanname from pg_proc p join pg_language l on l.oid = p.prolang"
        + " where p.oid = 'gnomon.feed_read(text,integer,text)'::regprocedure";
    sql("select gnomon.use_c_module(false)");
    assertEquals("plpgsql", one(language), "without the C module");
    sql("select gnomon.use_c_module(true, '" + FeedPageCIT.cLibrary() + "')");
    assertEquals("c", one(language), "with the C module's page reader");
    List<String> tables = new ArrayList<>(FeedBatchOrderIT.trackTables(this));
    sql("select gnomon.branch_create('bo_br')");
    String[] kinds = {"one", "two", "keys", "br"};
    for (String run : List.of("c_", "p_")) {
      feed().register(run + "one", List.of("public.bo_a"), FeedStart.now(), true);
      feed().register(run + "two", tables, FeedStart.now(), true);
      feed().register(run + "keys", List.of("public.bo_a"), FeedStart.now(), false);
      feed().register(run + "br", tables, FeedStart.now(), true, null, "bo_br");
    }
    FeedBatchOrderIT.interleaveWrites(this, random, 200, 100, this::tick);
    tick();
    tick();  // an empty batch: a heartbeat where the page reads only it
    Map<String, List<List<String>>> read = new HashMap<>();
    for (String run : List.of("c_", "p_")) {
      if (run.equals("p_")) {
        sql("select gnomon.use_c_module(false)");
        assertEquals("plpgsql", one(language), "after gnomon.use_c_module(false)");
      }
      for (String kind : kinds) {
        Random sizes = new Random(seed + kind.hashCode());
        List<List<String>> pages = new ArrayList<>();
        try (Connection c = connect()) {
          while (pages.size() < 500) {
            List<String> page = FeedBatchOrderIT.page(c, run + kind, 1 + sizes.nextInt(40));
            if (page.isEmpty()) {
              break;
            }
            pages.add(page);
          }
        }
        read.put(run + kind, pages);
      }
    }
    for (String kind : kinds) {
      List<List<String>> c = read.get("c_" + kind);
      assertEquals(read.get("p_" + kind), c, "seed " + seed + ": consumer " + kind);
      assertTrue(c.size() >= 3, "seed " + seed + ": " + kind + " read " + c.size() + " pages");
    }
    assertTrue(read.get("c_two").stream().flatMap(List::stream).anyMatch(r -> r.contains("|h|")),
        "seed " + seed + ": a heartbeat row among the pages");
  }

}
