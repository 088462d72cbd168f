package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The JSON envelope, written by any ObjectMapper, without a database. */
class ChangeEventJsonTest {
  private final ObjectMapper mapper = new ObjectMapper();

  @Test
  void anUpdateIsWrittenAsADebeziumEnvelope() throws Exception {
    FeedPosition p = FeedPosition.of(41, 57, 56);
    ChangeEvent e = new ChangeEvent(p.toString(), Operation.UPDATE, "public.account", "shop", "public", "account",
        mapper.readTree("{\"id\":1}"), mapper.readTree("{\"id\":1,\"balance\":100}"),
        mapper.readTree("{\"id\":1,\"balance\":70}"), p, 42, Instant.ofEpochMilli(1_700_000_000_123L), 1234, 56);
    assertEquals("{\"id\":\"v1:41:57:56\",\"before\":{\"id\":1,\"balance\":100},\"after\":{\"id\":1,\"balance\":70},"
            + "\"op\":\"u\",\"ts_ms\":1700000000123,\"source\":{\"version\":\"1\",\"connector\":\"gnomon\","
            + "\"ts_ms\":1700000000123,\"snapshot\":\"false\",\"db\":\"shop\",\"schema\":\"public\",\"table\":\"account\","
            + "\"branch\":\"main\",\"txId\":1234,\"tick\":42,\"vid\":56,\"position\":\"v1:41:57:56\"},\"key\":{\"id\":1}}",
        mapper.writeValueAsString(e));
    // the mapper's own settings still apply
    String pretty = mapper.copy().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(e);
    assertEquals(mapper.readTree(mapper.writeValueAsString(e)), mapper.readTree(pretty));
  }

  @Test
  void anEventOfJsonTextIsWrittenWithItsTextCopied() throws Exception {
    FeedPosition p = FeedPosition.of(41, 57, 56);
    ChangeEvent e = ChangeEvent.ofJson(p.toString(), Operation.of("u"), "public.account", "shop", "public",
        "account", "{\"id\":1}", "{\"id\":1,\"balance\":100.00}", "{\"id\":1,\"balance\":70.50}", p, 42,
        Instant.ofEpochMilli(1_700_000_000_123L), 1234, 56, mapper.reader());
    String expected = "{\"id\":\"v1:41:57:56\",\"before\":{\"id\":1,\"balance\":100.00},"
        + "\"after\":{\"id\":1,\"balance\":70.50},\"op\":\"u\",\"ts_ms\":1700000000123,\"source\":{\"version\":\"1\","
        + "\"connector\":\"gnomon\",\"ts_ms\":1700000000123,\"snapshot\":\"false\",\"db\":\"shop\","
        + "\"schema\":\"public\",\"table\":\"account\",\"branch\":\"main\",\"txId\":1234,\"tick\":42,\"vid\":56,"
        + "\"position\":\"v1:41:57:56\"},\"key\":{\"id\":1}}";
    assertEquals(expected, mapper.writeValueAsString(e));
    assertEquals(expected, new String(mapper.writeValueAsBytes(e), java.nio.charset.StandardCharsets.UTF_8));
  }

  @Test
  void aBackfillRowIsASnapshotReadWithoutTransaction() throws Exception {
    FeedPosition p = FeedPosition.afterTick(3);
    ChangeEvent e = new ChangeEvent("v1:r:public.account:{\"id\":2}", Operation.READ, "public.account", "shop",
        "public", "account", mapper.readTree("{\"id\":2}"), null, mapper.readTree("{\"id\":2,\"balance\":5}"), p, 0,
        Instant.ofEpochMilli(5), 0, 0);
    String json = mapper.writeValueAsString(e);
    assertEquals("r", mapper.readTree(json).get("op").asText());
    assertEquals("true", mapper.readTree(json).get("source").get("snapshot").asText());
    assertEquals("null", mapper.readTree(json).get("source").get("txId").toString());
    assertEquals("null", mapper.readTree(json).get("before").toString());
  }
}
