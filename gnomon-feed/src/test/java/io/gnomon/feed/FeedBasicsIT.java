package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gnomon.Coordinate;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The feed end to end on small cases: events, images, heartbeats, JSON, large values, starts, consumers. */
class FeedBasicsIT extends FeedTestBase {

  @Test
  void deliversCreatesUpdatesAndDeletesWithImagesOnceATickHasPassed() throws Exception {
    trackedTable("item1");
    Coordinate start = feed().register("c1", List.of("public.item1"));
    assertTrue(start.toString().startsWith("v2:"));
    sql("insert into item1 values (1, 'a'), (2, 'b')", "update item1 set v = 'a2' where id = 1",
        "delete from item1 where id = 2");
    assertTrue(feed().poll("c1", 100).isEmpty(), "nothing is visible before a tick");
    tick();
    FeedPage page = feed().poll("c1", 100);
    assertEquals(List.of("c:1:a", "c:2:b", "u:1:a2", "d:2:b"), brief(page.events()));
    ChangeEvent update = page.events().get(2);
    assertEquals(Operation.UPDATE, update.op());
    assertEquals("{\"id\":1,\"v\":\"a\"}", sorted(update.before()));
    assertEquals("{\"id\":1,\"v\":\"a2\"}", sorted(update.after()));
    assertNull(page.events().get(0).before());
    assertNull(page.events().get(3).after());
    assertEquals("public.item1", update.relation());
    assertEquals("public", update.schema());
    assertEquals("item1", update.table());
    assertEquals(db.name(), update.database());
    // one transaction per statement: the two-row insert is one transaction
    assertEquals(3, page.events().stream().map(ChangeEvent::xid).distinct().count());
    assertEquals(page.events().get(0).xid(), page.events().get(1).xid());
    assertEquals(page.events().get(3).position(), page.position());
    assertEquals(page.position().toString(), page.events().get(3).id());
    feed().ack("c1", page.position());
    assertEquals(page.position(), feed().consumer("c1").orElseThrow().position());
    assertTrue(feed().poll("c1", 100).isEmpty());
  }

  @Test
  void pollingAgainWithoutAcknowledgingReturnsTheSameEvents() throws Exception {
    trackedTable("item2");
    feed().register("c2", List.of("public.item2"));
    sql("insert into item2 values (1, 'a')", "insert into item2 values (2, 'b')");
    tick();
    FeedPage first = feed().poll("c2", 1);
    FeedPage again = feed().poll("c2", 1);
    assertEquals(first, again);
    feed().ack("c2", first.position());
    FeedPage second = feed().poll("c2", 1);
    assertEquals(List.of("c:2:b"), brief(second.events()));
    assertEquals(first.position(), second.from());
  }

  @Test
  void withoutImagesEventsCarryOnlyTheKey() throws Exception {
    trackedTable("item3");
    feed().register("keys", List.of("public.item3"), FeedStart.now(), false);
    sql("insert into item3 values (1, 'a')", "update item3 set v = 'b'");
    tick();
    List<ChangeEvent> events = drain("keys", 10);
    assertEquals(2, events.size());
    for (ChangeEvent e : events) {
      assertNull(e.before());
      assertNull(e.after());
      assertEquals(1, e.key().get("id").asInt());
    }
  }

  @Test
  void emptyBatchesAreSkippedByAHeartbeatPosition() throws Exception {
    trackedTable("item4");
    trackedTable("other4");
    feed().register("c4", List.of("public.item4"));
    sql("insert into other4 values (1, 'not followed')");
    tick();
    long last = tick();
    FeedPage page = feed().poll("c4", 10);
    assertTrue(page.isEmpty());
    assertTrue(page.advances(), "a page over empty batches moves the position");
    assertEquals(FeedPosition.afterTick(last), page.position());
    feed().ack("c4", page.position());
    assertFalse(feed().poll("c4", 10).advances());
  }

  @Test
  void oneConsumerFollowsSeveralTablesInCommitOrder() throws Exception {
    trackedTable("a5");
    trackedTable("b5");
    feed().register("both", List.of("public.a5", "public.b5"));
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      sql(c, "insert into b5 values (1, 'b1')", "insert into a5 values (1, 'a1')");
      c.commit();
      sql(c, "insert into a5 values (2, 'a2')");
      c.commit();
    }
    tick();
    List<ChangeEvent> events = drain("both", 100);
    assertEquals(List.of("b5:1", "a5:1", "a5:2"), events.stream().map(e -> e.table() + ":" + e.key().get("id")).toList());
    assertEquals(events.get(0).xid(), events.get(1).xid());
  }

  @Test
  void consumersAreIndependent() throws Exception {
    trackedTable("item6");
    feed().register("one", List.of("public.item6"));
    feed().register("two", List.of("public.item6"));
    sql("insert into item6 values (1, 'a')");
    tick();
    assertEquals(1, drain("one", 10).size());
    assertEquals(1, drain("two", 10).size());
    assertEquals(List.of("one", "two"), names(feed().consumers()));
    feed().unregister("one");
    assertEquals(List.of("two"), names(feed().consumers()));
    FeedConsumer two = feed().consumer("two").orElseThrow();
    assertEquals(List.of("public.item6"), two.tables());
    assertTrue(two.images());
    assertTrue(two.ackedAt().isPresent());
    assertTrue(two.maxLag().isEmpty());
  }

  @Test
  void startingAtACoordinateDeliversWhatItDidNotSee() throws Exception {
    trackedTable("item7");
    sql("insert into item7 values (1, 'before')");
    Coordinate c = gnomon().coordinate();
    sql("insert into item7 values (2, 'after')");
    tick();
    Coordinate start = feed().register("late", List.of("public.item7"), FeedStart.at(c), true);
    assertEquals(c, start);
    assertEquals(List.of("c:2:after"), brief(drain("late", 10)));
  }

  @Test
  void aTransactionThatTookItsXidEarlyAndCommittedLateIsNotSkipped() throws Exception {
    trackedTable("early");
    feed().register("early", List.of("public.early"));
    try (Connection early = connect()) {
      early.setAutoCommit(false);
      long xid = Long.parseLong(one(early, "select pg_current_xact_id()::text"));
      sql("insert into early values (2, 'committed first')");
      tick();
      sql("insert into early values (3, 'committed second')");
      tick();
      assertEquals(List.of("c:2:committed first", "c:3:committed second"), brief(drain("early", 10)));
      sql(early, "insert into early values (1, 'took its xid first')");
      early.commit();
      tick();
      List<ChangeEvent> events = drain("early", 10);
      assertEquals(List.of("c:1:took its xid first"), brief(events));
      assertEquals(xid, events.get(0).xid());
    }
  }

  @Test
  void aKeyChangeIsADeleteAndACreateAndTruncateDeletesEveryRow() throws Exception {
    trackedTable("rekey");
    feed().register("rekey", List.of("public.rekey"));
    sql("insert into rekey values (1, 'a'), (2, 'b')", "update rekey set id = 10 where id = 1",
        "truncate rekey");
    tick();
    assertEquals(List.of("c:1:a", "c:2:b", "d:1:a", "c:10:a", "d:2:b", "d:10:a"), brief(drain("rekey", 10)));
  }

  @Test
  void largeToastedValuesAreDeliveredWhole() throws Exception {
    sql("create table doc (id integer primary key, title text, body text)");
    gnomon().track("public.doc");
    feed().register("docs", List.of("public.doc"));
    // 1 MB of random letters: incompressible, so stored out of line (TOAST)
    Random random = new Random(42);
    StringBuilder b = new StringBuilder(1 << 20);
    for (int i = 0; i < (1 << 20); i++) {
      b.append((char) ('a' + random.nextInt(26)));
    }
    String body = b.toString();
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement("insert into doc values (1, 't1', ?)")) {
      ps.setString(1, body);
      ps.executeUpdate();
    }
    assertTrue(Long.parseLong(one("select pg_column_size(body) from doc")) > 1_000_000, "stored uncompressed");
    sql("update doc set title = 't2' where id = 1"); // the body is untouched: a TOAST pointer in the new row
    sql("delete from doc where id = 1");
    tick();
    List<ChangeEvent> events = drain("docs", 10);
    assertEquals(3, events.size());
    assertEquals(body, events.get(0).after().get("body").asText());
    assertEquals(body, events.get(1).before().get("body").asText());
    assertEquals(body, events.get(1).after().get("body").asText());
    assertEquals("t2", events.get(1).after().get("title").asText());
    assertEquals(body, events.get(2).before().get("body").asText());
    JsonNode json = new ObjectMapper().readTree(feed().toJson(events.get(1)));
    assertEquals(body, json.get("after").get("body").asText());
  }

  @Test
  void numbersAndTypesKeepTheirValue() throws Exception {
    sql("create table typed (id bigint primary key, amount numeric(12,2), at timestamptz, tags text[], doc jsonb,"
        + " flag boolean)");
    gnomon().track("public.typed");
    feed().register("t", List.of("public.typed"));
    sql("insert into typed values (9007199254740993, 100.00, '2024-01-02 03:04:05+00', '{a,b}', '{\"k\": [1, 2]}',"
        + " true)");
    tick();
    ChangeEvent e = drain("t", 10).get(0);
    assertEquals("9007199254740993", e.key().get("id").toString());
    assertEquals("100.00", e.after().get("amount").toString());
    assertEquals("\"2024-01-02T03:04:05+00:00\"", e.after().get("at").toString());
    assertEquals("[\"a\",\"b\"]", e.after().get("tags").toString());
    assertEquals("{\"k\":[1,2]}", e.after().get("doc").toString());
    String json = feed().toJson(e);
    assertTrue(json.contains("\"amount\":100.00"), json);
    assertTrue(json.contains("\"key\":{\"id\":9007199254740993}"), json);
  }

  @Test
  void theJsonEnvelopeIsShapedLikeDebeziums() throws Exception {
    trackedTable("item10");
    feed().register("c10", List.of("public.item10"));
    sql("insert into item10 values (7, 'seven')", "update item10 set v = 'SEVEN'");
    long tick = tick();
    List<ChangeEvent> events = drain("c10", 10);
    ChangeEvent u = events.get(1);
    JsonNode json = new ObjectMapper().readTree(feed().toJson(u));
    assertEquals(List.of("id", "before", "after", "op", "ts_ms", "source", "key"), fieldNames(json));
    assertEquals("u", json.get("op").asText());
    assertEquals(u.id(), json.get("id").asText());
    assertEquals("seven", json.get("before").get("v").asText());
    assertEquals("SEVEN", json.get("after").get("v").asText());
    assertEquals(u.tickAt().toEpochMilli(), json.get("ts_ms").asLong());
    JsonNode source = json.get("source");
    assertEquals("gnomon", source.get("connector").asText());
    assertEquals(db.name(), source.get("db").asText());
    assertEquals("public", source.get("schema").asText());
    assertEquals("item10", source.get("table").asText());
    assertEquals(u.xid(), source.get("txId").asLong());
    assertEquals(tick, source.get("tick").asLong());
    assertEquals(u.vid(), source.get("vid").asLong());
    assertEquals(u.position().toString(), source.get("position").asText());
    assertEquals("false", source.get("snapshot").asText());
    assertEquals("{\"id\":7}", json.get("key").toString());
  }

  private static List<String> names(List<FeedConsumer> consumers) {
    return consumers.stream().map(FeedConsumer::name).filter(n -> n.equals("one") || n.equals("two")).toList();
  }

  private static List<String> fieldNames(JsonNode n) {
    List<String> names = new java.util.ArrayList<>();
    n.fieldNames().forEachRemaining(names::add);
    return names;
  }

  private static String sorted(JsonNode n) throws Exception {
    ObjectMapper m = new ObjectMapper().configure(
        com.fasterxml.jackson.databind.SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true);
    return m.writeValueAsString(m.treeToValue(n, java.util.Map.class));
  }
}
