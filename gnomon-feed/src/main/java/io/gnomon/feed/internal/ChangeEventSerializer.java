package io.gnomon.feed.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.json.JsonGeneratorImpl;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import io.gnomon.feed.ChangeEvent;
import java.io.IOException;

/**
 * Writes a {@link ChangeEvent} as an envelope shaped like Debezium's, so sinks that read Debezium's payloads read
 * Gnomon's:
 *
 * <pre>{@code
 * {"id": "v1:41:57:56", "before": {...} | null, "after": {...} | null, "op": "c|u|d|r", "ts_ms": 1700000000000,
 *  "source": {"version": "1", "connector": "gnomon", "ts_ms": ..., "snapshot": "false", "db": "shop",
 *             "schema": "public", "table": "account", "txId": 1234, "tick": 42, "vid": 56,
 *             "position": "v1:41:57:56"},
 *  "key": {"id": 7}}
 * }</pre>
 *
 * A backfill row ({@code op} {@code r}) has {@code "snapshot": "true"} and null {@code txId}, {@code tick} and
 * {@code vid}.
 *
 * <p>To a JSON text generator, the key and the row images are copied as the JSON text the database sent, without
 * being parsed and written again (most of the cost of an event); to any other generator (a tree, a binary format),
 * they are written as trees.
 */
public final class ChangeEventSerializer extends StdSerializer<ChangeEvent> {
  /** The envelope's format version, {@code source.version}. */
  public static final String FORMAT_VERSION = "1";

  /** The serializer Jackson instantiates for {@code @JsonSerialize(using = …)}. */
  public ChangeEventSerializer() {
    super(ChangeEvent.class);
  }

  @Override
  public void serialize(ChangeEvent e, JsonGenerator g, SerializerProvider provider) throws IOException {
    boolean read = e.isBackfill();
    g.writeStartObject();
    g.writeStringField("id", e.id());
    boolean raw = g instanceof JsonGeneratorImpl;
    image(g, "before", raw, e);
    image(g, "after", raw, e);
    g.writeStringField("op", e.op().code());
    g.writeNumberField("ts_ms", e.tsMs());
    g.writeObjectFieldStart("source");
    g.writeStringField("version", FORMAT_VERSION);
    g.writeStringField("connector", "gnomon");
    g.writeNumberField("ts_ms", e.tsMs());
    g.writeStringField("snapshot", read ? "true" : "false");
    g.writeStringField("db", e.database());
    g.writeStringField("schema", e.schema());
    g.writeStringField("table", e.table());
    g.writeStringField("branch", e.branch());
    number(g, "txId", read ? null : e.xid());
    number(g, "tick", read ? null : e.tick());
    number(g, "vid", read ? null : e.vid());
    g.writeStringField("position", e.position().toString());
    g.writeEndObject();
    image(g, "key", raw, e);
    g.writeEndObject();
  }

  private static void image(JsonGenerator g, String field, boolean raw, ChangeEvent e) throws IOException {
    g.writeFieldName(field);
    if (raw) {
      String json = switch (field) {
        case "before" -> e.beforeJson();
        case "after" -> e.afterJson();
        default -> e.keyJson();
      };
      if (json == null) {
        g.writeNull();
      } else {
        g.writeRawValue(json);
      }
    } else {
      JsonNode value = switch (field) {
        case "before" -> e.before();
        case "after" -> e.after();
        default -> e.key();
      };
      if (value == null) {
        g.writeNull();
      } else {
        g.writeTree(value);
      }
    }
  }

  private static void number(JsonGenerator g, String field, Long value) throws IOException {
    if (value == null) {
      g.writeNullField(field);
    } else {
      g.writeNumberField(field, value);
    }
  }
}
