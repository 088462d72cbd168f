package io.gnomon.feed.internal;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.SerializableString;
import com.fasterxml.jackson.core.io.SerializedString;
import com.fasterxml.jackson.core.json.JsonGeneratorImpl;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;
import io.gnomon.feed.ChangeEvent;
import io.gnomon.feed.Operation;
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

  // field names encoded once (a generator copies their bytes instead of escaping and encoding them per event)
  private static final SerializableString ID = name("id");
  private static final SerializableString BEFORE = name("before");
  private static final SerializableString AFTER = name("after");
  private static final SerializableString OP = name("op");
  private static final SerializableString TS_MS = name("ts_ms");
  private static final SerializableString SOURCE = name("source");
  private static final SerializableString VERSION = name("version");
  private static final SerializableString CONNECTOR = name("connector");
  private static final SerializableString SNAPSHOT = name("snapshot");
  private static final SerializableString DB = name("db");
  private static final SerializableString SCHEMA = name("schema");
  private static final SerializableString TABLE = name("table");
  private static final SerializableString BRANCH = name("branch");
  private static final SerializableString TX_ID = name("txId");
  private static final SerializableString TICK = name("tick");
  private static final SerializableString VID = name("vid");
  private static final SerializableString POSITION = name("position");
  private static final SerializableString KEY = name("key");

  // values that repeat from event to event, encoded once: constants, each operation's code, and the last database,
  // schema, table and branch name written (a page's events share the same String instances: PageReader decodes each
  // name once per run of equal rows)
  private static final SerializableString VERSION_VALUE = name(FORMAT_VERSION);
  private static final SerializableString GNOMON = name("gnomon");
  private static final SerializableString TRUE = name("true");
  private static final SerializableString FALSE = name("false");
  private static final SerializableString[] OP_CODES = new SerializableString[Operation.values().length];

  static {
    for (Operation o : Operation.values()) {
      OP_CODES[o.ordinal()] = name(o.code());
    }
  }

  private final Encoded db = new Encoded();
  private final Encoded schema = new Encoded();
  private final Encoded table = new Encoded();
  private final Encoded branch = new Encoded();

  /** The serializer Jackson instantiates for {@code @JsonSerialize(using = …)}. */
  public ChangeEventSerializer() {
    super(ChangeEvent.class);
  }

  @Override
  public void serialize(ChangeEvent e, JsonGenerator g, SerializerProvider provider) throws IOException {
    boolean read = e.isBackfill();
    g.writeStartObject();
    string(g, ID, e.id());
    boolean raw = g instanceof JsonGeneratorImpl;
    image(g, BEFORE, raw, e);
    image(g, AFTER, raw, e);
    g.writeFieldName(OP);
    g.writeString(OP_CODES[e.op().ordinal()]);
    g.writeFieldName(TS_MS);
    g.writeNumber(e.tsMs());
    g.writeFieldName(SOURCE);
    g.writeStartObject();
    g.writeFieldName(VERSION);
    g.writeString(VERSION_VALUE);
    g.writeFieldName(CONNECTOR);
    g.writeString(GNOMON);
    g.writeFieldName(TS_MS);
    g.writeNumber(e.tsMs());
    g.writeFieldName(SNAPSHOT);
    g.writeString(read ? TRUE : FALSE);
    // (a generator with its own escapes writes the names itself)
    boolean encoded = g.getCharacterEscapes() == null && !g.isEnabled(JsonGenerator.Feature.ESCAPE_NON_ASCII);
    db.write(g, DB, e.database(), encoded);
    schema.write(g, SCHEMA, e.schema(), encoded);
    table.write(g, TABLE, e.table(), encoded);
    branch.write(g, BRANCH, e.branch(), encoded);
    number(g, TX_ID, read, e.xid());
    number(g, TICK, read, e.tick());
    number(g, VID, read, e.vid());
    string(g, POSITION, EventAccess.get().positionText(e));
    g.writeEndObject();
    image(g, KEY, raw, e);
    g.writeEndObject();
  }

  /**
   * A string field whose value is usually the one written last: that value's encoding is kept (the same String
   * instance, or an equal one, is written from it) and replaced when another comes. Thread-safe: the value and its
   * encoding are published together.
   */
  private static final class Encoded {
    private volatile SerializedString last;

    void write(JsonGenerator g, SerializableString field, String value, boolean encoded) throws IOException {
      g.writeFieldName(field);
      if (value == null || !encoded) {
        g.writeString(value);
        return;
      }
      SerializedString s = last;
      if (s == null || (s.getValue() != value && !s.getValue().equals(value))) {
        s = (SerializedString) name(value);
        last = s;
      }
      g.writeString(s);
    }
  }

  private static SerializableString name(String field) {
    SerializedString s = new SerializedString(field);
    s.asQuotedUTF8(); // encode now, once
    return s;
  }

  private static void string(JsonGenerator g, SerializableString field, String value) throws IOException {
    g.writeFieldName(field);
    g.writeString(value);
  }

  private static void image(JsonGenerator g, SerializableString field, boolean raw, ChangeEvent e)
      throws IOException {
    g.writeFieldName(field);
    if (raw) {
      EventAccess access = EventAccess.get();
      JsonText text = field == BEFORE ? access.beforeText(e) : field == AFTER ? access.afterText(e)
          : access.keyText(e);
      if (text != null) {
        g.writeRawValue(text); // a UTF-8 generator copies the bytes the database sent
        return;
      }
      String json = field == BEFORE ? e.beforeJson() : field == AFTER ? e.afterJson() : e.keyJson();
      if (json == null) {
        g.writeNull();
      } else {
        g.writeRawValue(json);
      }
    } else {
      JsonNode value = field == BEFORE ? e.before() : field == AFTER ? e.after() : e.key();
      if (value == null) {
        g.writeNull();
      } else {
        g.writeTree(value);
      }
    }
  }

  /** A number, or null for a backfill row (no boxing: three per event). */
  private static void number(JsonGenerator g, SerializableString field, boolean isNull, long value)
      throws IOException {
    g.writeFieldName(field);
    if (isNull) {
      g.writeNull();
    } else {
      g.writeNumber(value);
    }
  }
}
