package io.gnomon.feed.internal;

import com.fasterxml.jackson.core.JsonGenerator;
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
    tree(g, "before", e.before());
    tree(g, "after", e.after());
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
    number(g, "txId", read ? null : e.xid());
    number(g, "tick", read ? null : e.tick());
    number(g, "vid", read ? null : e.vid());
    g.writeStringField("position", e.position().toString());
    g.writeEndObject();
    tree(g, "key", e.key());
    g.writeEndObject();
  }

  private static void tree(JsonGenerator g, String field, JsonNode value) throws IOException {
    g.writeFieldName(field);
    if (value == null) {
      g.writeNull();
    } else {
      g.writeTree(value);
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
