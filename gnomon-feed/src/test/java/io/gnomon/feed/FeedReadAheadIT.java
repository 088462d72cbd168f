package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.InvalidPositionException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reading ahead ({@code gnomon.feed_read(name, max_events, read_after)}, {@link Feed#pollAfter}): the pages read
 * after the previous page's position, several pages ahead of the acknowledged one, are exactly the pages read after
 * acknowledging each (same events, positions, images), on a random history (the one of {@link FeedBatchOrderIT}), for
 * consumers with and without images, from a coordinate in the middle, and on a branch; and a position before the
 * acknowledged one or after the last tick is refused.
 */
@Timeout(300)
class FeedReadAheadIT extends FeedTestBase {

  @Test
  void pagesReadAheadAreThePagesReadAfterEachAcknowledgement() throws Exception {
    long seed = seed("FeedReadAheadIT");
    Random random = new Random(seed);
    List<String> tables = FeedBatchOrderIT.trackTables(this);
    for (String name : List.of("early_ahead", "early_acked", "java_ahead", "java_acked")) {
      feed().register(name, tables, FeedStart.now(), true);
    }
    feed().register("keys_ahead", List.of("public.bo_a"), FeedStart.now(), false);
    feed().register("keys_acked", List.of("public.bo_a"), FeedStart.now(), false);
    sql("select gnomon.branch_create('bo_br')");
    for (String name : List.of("br_ahead", "br_acked")) {
      feed().register(name, tables, FeedStart.now(), true, null, "bo_br");
    }
    FeedBatchOrderIT.interleaveWrites(this, random, 140, 60, () -> {
      String start = one("select gnomon.coordinate()");
      for (String name : List.of("mid_ahead", "mid_acked")) {
        feed().register(name, tables, FeedStart.at(io.gnomon.Coordinate.parse(start)), true);
      }
    });
    tick();
    tick(); // an empty batch at the end: a heartbeat for the acknowledged reader, none after it for the other
    for (String[] pair : new String[][] {{"early_ahead", "early_acked"}, {"mid_ahead", "mid_acked"},
        {"keys_ahead", "keys_acked"}, {"br_ahead", "br_acked"}}) {
      Random sizes = new Random(seed + pair[0].hashCode());
      int pages = 0;
      int events = 0;
      try (Connection ahead = connect(); Connection acked = connect()) {
        // positions read but not yet acknowledged, oldest first: the reader acknowledges one of them now and then
        Deque<String> unacked = new ArrayDeque<>();
        String after = one(ahead, "select gnomon.feed_position('" + pair[0] + "')");
        while (true) {
          int pageSize = pair[0].startsWith("br")
              ? 1 + sizes.nextInt(4)
              : sizes.nextInt(4) == 0 ? 20 + sizes.nextInt(60) : 1 + sizes.nextInt(12);
          List<String> read = page(ahead, pair[0], pageSize, after);
          List<String> expected = page(acked, pair[1], pageSize, null);
          if (!expected.isEmpty()) {
            ack(acked, pair[1], position(expected.get(expected.size() - 1)));
          }
          // (the final heartbeat past the empty batch too: the reader ahead gets the same one)
          assertEquals(expected, read, "seed " + seed + ": page " + pages + " of " + pageSize + " for " + pair[0]);
          if (read.isEmpty()) {
            break;
          }
          after = position(read.get(read.size() - 1));
          unacked.add(after);
          while (unacked.size() > 3 || (!unacked.isEmpty() && sizes.nextInt(3) == 0)) {
            ack(ahead, pair[0], unacked.poll());
          }
          pages++;
          events += read.size();
        }
        assertEquals(0, page(ahead, pair[0], 10, after).size(), "seed " + seed + ": nothing after the last page");
      }
      assertTrue(events >= 10 && pages >= 3, "seed " + seed + ": " + pair[0] + " read " + events + " events");
    }

    // the same through the Java API: Feed.pollAfter pages against Feed.poll + Feed.ack pages, as JSON envelopes
    Random sizes = new Random(seed);
    FeedPosition after = feed().consumer("java_ahead").orElseThrow().position();
    int events = 0;
    while (true) {
      int pageSize = 1 + sizes.nextInt(30);
      FeedPage read = feed().pollAfter("java_ahead", after, pageSize);
      FeedPage expected = feed().poll("java_acked", pageSize);
      if (expected.advances()) {
        feed().ack("java_acked", expected.position());
      }
      assertEquals(after, read.from(), "a page read after a position starts there");
      assertEquals(expected.position(), read.position(), "seed " + seed);
      assertEquals(expected.events().stream().map(this::json).toList(), read.events().stream().map(this::json)
          .toList(), "seed " + seed + ": the same events as JSON");
      if (read.advances() && sizes.nextBoolean()) {
        feed().ack("java_ahead", read.position());
      }
      if (read.isEmpty()) {
        break;
      }
      events += read.size();
      after = read.position();
    }
    assertTrue(events > 30, "seed " + seed + ": the Java reader read " + events + " events");
  }

  @Test
  void aPositionBeforeTheAcknowledgedOneOrAfterTheLastTickIsRefused() throws Exception {
    trackedTable("ra");
    feed().register("ra", List.of("public.ra"));
    sql("insert into ra values (1, 'a')");
    sql("insert into ra values (2, 'b')");
    tick();
    FeedPage first = feed().poll("ra", 1);
    FeedPage second = feed().pollAfter("ra", first.position(), 1);
    assertEquals(List.of("c:2:b"), brief(second.events()), "the page after the first, read before acknowledging it");
    feed().ack("ra", second.position());
    InvalidPositionException before =
        assertThrows(InvalidPositionException.class, () -> feed().pollAfter("ra", first.position(), 10));
    assertTrue(before.getMessage().contains("before its acknowledged position"), before.getMessage());
    FeedPosition future = FeedPosition.parse("v1:99:0:0");
    InvalidPositionException late =
        assertThrows(InvalidPositionException.class, () -> feed().pollAfter("ra", future, 10));
    assertTrue(late.getMessage().contains("after the last tick"), late.getMessage());
    // a reader ahead at the last tick gets no heartbeat for batches it already passed
    tick();
    FeedPage beat = feed().pollAfter("ra", second.position(), 10);
    assertTrue(beat.isEmpty() && beat.advances(), "a heartbeat past the empty batch");
    FeedPage none = feed().pollAfter("ra", beat.position(), 10);
    assertTrue(none.isEmpty() && !none.advances(), "nothing after it: " + none.position());
  }

  private String json(ChangeEvent e) {
    return feed().toJson(e);
  }

  private static String position(String row) {
    return row.substring(0, row.indexOf('|'));
  }

  /** A page through gnomon.feed_read (after a position when one is given), each row as text; not acknowledged. */
  private static List<String> page(Connection c, String consumer, int pageSize, String after) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement("select " + FeedBatchOrderIT.COLUMNS + " from gnomon.feed_read(?, ?, ?)")) {
      ps.setString(1, consumer);
      ps.setInt(2, pageSize);
      ps.setString(3, after);
      try (ResultSet rs = ps.executeQuery()) {
        int n = rs.getMetaData().getColumnCount();
        while (rs.next()) {
          StringBuilder row = new StringBuilder();
          for (int i = 1; i <= n; i++) {
            row.append(rs.getString(i)).append('|');
          }
          rows.add(row.toString());
        }
      }
    }
    return rows;
  }

  private static void ack(Connection c, String consumer, String position) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("select gnomon.feed_ack(?, ?)")) {
      ps.setString(1, consumer);
      ps.setString(2, position);
      ps.execute();
    }
  }
}
