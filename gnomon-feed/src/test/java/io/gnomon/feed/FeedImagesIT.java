package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Row images: each event's after image is the next event's before image for the same key, and the last one is the
 * live row, whichever way the feed found it (the live row by its xmin, the next version, or the live row after a
 * probe): a transaction writing a key twice, in a subtransaction, split across pages, a key changed and reused.
 */
@Timeout(120)
class FeedImagesIT extends FeedTestBase {
  private final ObjectMapper mapper = new ObjectMapper();

  @Test
  void afterImagesChainIntoTheNextBeforeImagesAndEndAtTheLiveRow() throws Exception {
    trackedTable("img");
    for (String name : List.of("p1", "p2", "p3", "p5", "p100")) {
      feed().register(name, List.of("public.img"));
    }
    sql("insert into img select g, 'v' || g from generate_series(1, 20) g");
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      // one transaction writing keys twice and three times, with other keys between
      sql(c, "update img set v = 'a1' where id = 1", "update img set v = 'b1' where id = 2",
          "update img set v = 'a2' where id = 1", "update img set v = 'a3' where id = 1",
          "delete from img where id = 3", "insert into img values (3, 'back')", "update img set v = 'b2' where id = 2");
      // in subtransactions: the live rows' xmin is the subtransaction's
      sql(c, "savepoint s", "update img set v = 'sub' where id = 4", "release savepoint s",
          "savepoint t", "update img set v = 'gone' where id = 5", "rollback to savepoint t");
      // a key changed away and the old key reused in the same transaction
      sql(c, "update img set id = 21 where id = 6", "insert into img values (6, 'reused')",
          "update img set v = 'reused2' where id = 6");
      c.commit();
    }
    sql("update img set v = 'later' where id = 2");
    sql("begin", "update img set v = 'x' || id where id between 7 and 12", "update img set v = 'y' || id where id between 10 and 15", "commit");
    tick();
    sql("update img set v = 'next batch' where id in (1, 10)");
    tick();
    Map<String, String> live = new HashMap<>();
    for (String row : column("select id || '|' || row_to_json(i)::text from img i")) {
      String[] p = row.split("\\|", 2);
      live.put(p[0], mapper.readTree(p[1]).toString());
    }
    List<List<String>> chains = new ArrayList<>();
    for (int size : List.of(1, 2, 3, 5, 100)) {
      List<ChangeEvent> events = drain("p" + size, size);
      Map<String, JsonNode> last = new HashMap<>();
      List<String> chain = new ArrayList<>();
      for (ChangeEvent e : events) {
        String k = e.key().get("id").asText();
        JsonNode prev = last.get(k);
        if (e.op() == Operation.CREATE) {
          assertNull(e.before(), "pages of " + size + ": " + e);
          assertTrue(prev == null || prev.isNull(), "pages of " + size + ": " + k + " created while it existed");
        } else {
          assertEquals(prev == null ? e.before() : prev, e.before(), "pages of " + size + ": " + e);
        }
        if (e.op() == Operation.DELETE) {
          assertNull(e.after(), "pages of " + size + ": " + e);
        }
        last.put(k, e.op() == Operation.DELETE ? mapper.nullNode() : e.after());
        chain.add(e.op().code() + ":" + k + ":" + (e.after() == null ? "-" : e.after().get("v").asText()));
      }
      last.forEach((k, image) -> assertEquals(live.get(k), image.isNull() ? null : image.toString(),
          "pages of " + size + ": the last image of " + k + " is the live row"));
      chains.add(chain);
    }
    // every page size delivers the same events with the same images
    for (List<String> chain : chains) {
      assertEquals(chains.get(chains.size() - 1), chain);
    }
    assertTrue(chains.get(0).contains("u:1:a1") && chains.get(0).contains("u:1:a2") && chains.get(0).contains("u:4:sub"),
        chains.get(0).toString());
  }

  @Test
  void aCompareAndSetAcknowledgementLetsOnlyOneOfTwoSessionsApplyAPage() throws Exception {
    trackedTable("cas");
    feed().register("cas", List.of("public.cas"));
    sql("insert into cas values (1, 'a'), (2, 'b')");
    tick();
    String from = one("select gnomon.feed_position('cas')");
    String to = one("select max(event_position) from gnomon.feed_read('cas', 10)");
    try (Connection one = connect(); Connection two = connect()) {
      one.setAutoCommit(false);
      two.setAutoCommit(false);
      sql(one, "select gnomon.feed_ack('cas', '" + to + "', '" + from + "')");
      sql(two, "set lock_timeout = '5s'");
      Thread committer = new Thread(() -> {
        try {
          Thread.sleep(200);
          one.commit();
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      });
      committer.start();
      // the second session waits for the first one's row lock, then finds the consumer moved
      SQLException e = assertThrows(SQLException.class,
          () -> sql(two, "select gnomon.feed_ack('cas', '" + to + "', '" + from + "')"));
      committer.join();
      assertEquals("40001", e.getSQLState(), e.getMessage());
      two.rollback();
    }
    assertEquals(to, one("select gnomon.feed_position('cas')"));
    // without read_after, acknowledging the same position again is allowed (at-least-once replays)
    sql("select gnomon.feed_ack('cas', '" + to + "')");
    SQLException e = assertThrows(SQLException.class,
        () -> sql("select gnomon.feed_ack('cas', '" + to + "', '" + from + "')"));
    assertEquals("40001", e.getSQLState());
  }

  @Test
  void imagesAreTheServersTextByteForByteInEventsAndEnvelopes() throws Exception {
    // non-ASCII text (two-, three- and four-byte UTF-8), escapes, and a TOASTed value: the consumer keeps the bytes
    // pgjdbc received and copies them into the envelope, so both must be the server's own row_to_json text
    trackedTable("utf");
    feed().register("utf", List.of("public.utf"));
    sql("insert into utf values (1, 'caf\u00e9 \u20ac \ud83d\ude00 \"q\" \\\\ tab\t'),"
        + " (2, repeat('\u00e9\ud83d\ude00x', 40000))");
    sql("update utf set v = v || '\u2603' where id = 1");
    tick();
    Map<String, String> live = new HashMap<>();
    for (String row : column("select id || '|' || row_to_json(u)::text from utf u")) {
      String[] p = row.split("\\|", 2);
      live.put(p[0], p[1]);
    }
    List<ChangeEvent> events = drain("utf", 100);
    assertEquals(3, events.size(), events.toString());
    ChangeEvent update = events.get(2);
    assertEquals(live.get("1"), update.afterJson());
    assertEquals(events.get(0).afterJson(), update.beforeJson());
    assertEquals(live.get("2"), events.get(1).afterJson());
    assertEquals(120_000, events.get(1).after().get("v").asText().codePointCount(0,
        events.get(1).after().get("v").asText().length()));
    for (ChangeEvent e : events) {
      byte[] bytes = mapper.writeValueAsBytes(e);
      String text = mapper.writeValueAsString(e);
      assertEquals(text, new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
      JsonNode envelope = mapper.readTree(bytes);
      assertEquals(e.after(), envelope.get("after"));
      assertEquals(e.key(), envelope.get("key"));
      assertTrue(text.contains("\"after\":" + e.afterJson() + ","), text.length() > 300 ? text.substring(0, 300) : text);
    }
  }
}
