package io.gnomon.feed;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import io.gnomon.feed.internal.ChangeEventSerializer;
import io.gnomon.feed.internal.EventAccess;
import io.gnomon.feed.internal.JsonText;
import io.gnomon.internal.Jdbc;
import java.io.IOException;
import java.time.Instant;
import java.util.Objects;

/**
 * One change of one row of a tracked table, as the feed delivers it; or, for {@link Operation#READ}, one row read by
 * a {@link Feed#backfill backfill}. An immutable value.
 *
 * <p>Serialised by Jackson ({@code mapper.writeValueAsString(event)}) into an envelope shaped like Debezium's:
 * {@code {"id", "before", "after", "op", "ts_ms", "source": {…}, "key"}} (see {@code docs/feed.md}). Row images are
 * whole rows as PostgreSQL's {@code row_to_json} renders them, large (TOAST) values included.
 *
 * <p>The feed keeps the key and the row images as the JSON text the database sent ({@link #keyJson()}, {@link
 * #beforeJson()}, {@link #afterJson()}): writing an event copies that text into the envelope without parsing it. The
 * trees ({@link #key()}, {@link #before()}, {@link #after()}) are parsed on first use, with the {@link Feed}'s mapper
 * (numbers kept exact: {@code 100.00} stays {@code 100.00}). Two events are equal when their parts are, images
 * compared as JSON trees.
 */
@JsonSerialize(using = ChangeEventSerializer.class)
public final class ChangeEvent {
  /** The {@link #branch()} of a change made on the tables themselves. */
  public static final String MAIN = "main";

  static {
    new Access(); // installs itself as the module's EventAccess
  }

  private final String id;
  private final Operation op;
  private final String relation;
  private final String database;
  private final String schema;
  private final String table;
  private final Image key;
  private final Image before;
  private final Image after;
  private final FeedPosition position;
  private final long tick;
  private final Instant tickAt;
  private final long xid;
  private final long vid;
  private final String branch;
  // the position's text form when it is the id (events read from a page), else null (made on demand)
  private final String positionText;

  /**
   * An event with parsed images.
   *
   * @param id a stable id for deduplication: the event's position for a change (the same event always has the same
   *     id for a consumer, whatever the page sizes and restarts), {@code v1:r:<table>:<key>} for a backfill row
   * @param op what happened
   * @param relation the table as SQL names it, {@code schema.table} with quotes where needed
   * @param database the database's name
   * @param schema the table's schema
   * @param table the table's name
   * @param key the row's primary key, {@code {"column": value, …}}
   * @param before the row before the change; null for a create or a read, and when the consumer takes no images
   * @param after the row after the change; null for a delete, and when the consumer takes no images
   * @param position the position to acknowledge once this event (and every one before it) is handled; for a
   *     backfill row, the consumer's position when the backfill ran
   * @param tick the tick whose batch holds the change (0 for a backfill row)
   * @param tickAt when that tick was recorded (for a backfill row, when the backfill read it)
   * @param xid the 64-bit id of the transaction that made the change (0 for a backfill row)
   * @param vid the change's version key, unique across every tracked table (0 for a backfill row)
   */
  public ChangeEvent(String id, Operation op, String relation, String database, String schema, String table,
      JsonNode key, JsonNode before, JsonNode after, FeedPosition position, long tick, Instant tickAt, long xid,
      long vid) {
    this(id, op, relation, database, schema, table, key, before, after, position, tick, tickAt, xid, vid, MAIN);
  }

  /**
   * An event with parsed images, of a change made on {@code branch} ({@value #MAIN} for the tables themselves); the
   * other parameters as in {@link #ChangeEvent(String, Operation, String, String, String, String, JsonNode,
   * JsonNode, JsonNode, FeedPosition, long, Instant, long, long) the constructor for main}.
   */
  public ChangeEvent(String id, Operation op, String relation, String database, String schema, String table,
      JsonNode key, JsonNode before, JsonNode after, FeedPosition position, long tick, Instant tickAt, long xid,
      long vid, String branch) {
    this(id, op, relation, database, schema, table, Image.of(Objects.requireNonNull(key, "key")), Image.of(before),
        Image.of(after), position, tick, tickAt, xid, vid, branch, null);
  }

  private ChangeEvent(String id, Operation op, String relation, String database, String schema, String table,
      Image key, Image before, Image after, FeedPosition position, long tick, Instant tickAt, long xid, long vid,
      String branch, String positionText) {
    this.id = Objects.requireNonNull(id, "id");
    this.op = Objects.requireNonNull(op, "op");
    this.relation = Objects.requireNonNull(relation, "relation");
    this.database = database;
    this.schema = schema;
    this.table = table;
    this.key = Objects.requireNonNull(key, "key");
    this.before = before;
    this.after = after;
    this.position = Objects.requireNonNull(position, "position");
    this.tick = tick;
    this.tickAt = Objects.requireNonNull(tickAt, "tickAt");
    this.xid = xid;
    this.vid = vid;
    this.branch = Objects.requireNonNull(branch, "branch");
    this.positionText = positionText;
  }

  /**
   * An event whose key and images are JSON texts (each a JSON object, or null where {@link #ChangeEvent the other
   * constructor} takes null), parsed with {@code reader} only when {@link #key()}, {@link #before()} or {@link
   * #after()} is called. The texts are not checked here: pass JSON that {@code reader} can read.
   */
  public static ChangeEvent ofJson(String id, Operation op, String relation, String database, String schema,
      String table, String keyJson, String beforeJson, String afterJson, FeedPosition position, long tick,
      Instant tickAt, long xid, long vid, ObjectReader reader) {
    return ofJson(id, op, relation, database, schema, table, keyJson, beforeJson, afterJson, position, tick, tickAt,
        xid, vid, MAIN, reader);
  }

  /** As {@link #ofJson(String, Operation, String, String, String, String, String, String, String, FeedPosition,
   * long, Instant, long, long, ObjectReader)}, for a change made on {@code branch} ({@value #MAIN} for main). */
  public static ChangeEvent ofJson(String id, Operation op, String relation, String database, String schema,
      String table, String keyJson, String beforeJson, String afterJson, FeedPosition position, long tick,
      Instant tickAt, long xid, long vid, String branch, ObjectReader reader) {
    Objects.requireNonNull(keyJson, "keyJson");
    Objects.requireNonNull(reader, "reader");
    return new ChangeEvent(id, op, relation, database, schema, table, Image.of(JsonText.of(keyJson), reader),
        Image.of(JsonText.of(beforeJson), reader), Image.of(JsonText.of(afterJson), reader), position, tick, tickAt,
        xid, vid, branch, null);
  }

  /** The event's stable id: its position for a change, {@code v1:r:<table>:<key>} for a backfill row. */
  public String id() {
    return id;
  }

  /** What happened. */
  public Operation op() {
    return op;
  }

  /** The table as SQL names it, {@code schema.table} with quotes where needed. */
  public String relation() {
    return relation;
  }

  /** The database's name. */
  public String database() {
    return database;
  }

  /** The table's schema. */
  public String schema() {
    return schema;
  }

  /** The table's name. */
  public String table() {
    return table;
  }

  /** The row's primary key, {@code {"column": value, …}}. */
  public JsonNode key() {
    return key.tree();
  }

  /** The row before the change; null for a create or a read, and when the consumer takes no images. */
  public JsonNode before() {
    return before == null ? null : before.tree();
  }

  /** The row after the change; null for a delete, and when the consumer takes no images. */
  public JsonNode after() {
    return after == null ? null : after.tree();
  }

  /** {@link #key()} as JSON text, without parsing it. */
  public String keyJson() {
    return key.json();
  }

  /** {@link #before()} as JSON text (null where it is null), without parsing it. */
  public String beforeJson() {
    return before == null ? null : before.json();
  }

  /** {@link #after()} as JSON text (null where it is null), without parsing it. */
  public String afterJson() {
    return after == null ? null : after.json();
  }

  /**
   * The position to acknowledge once this event (and every one before it) is handled; for a backfill row, the
   * consumer's position when the backfill ran.
   */
  public FeedPosition position() {
    return position;
  }

  /** The tick whose batch holds the change (0 for a backfill row). */
  public long tick() {
    return tick;
  }

  /** When that tick was recorded (for a backfill row, when the backfill read it). */
  public Instant tickAt() {
    return tickAt;
  }

  /** The 64-bit id of the transaction that made the change (0 for a backfill row). */
  public long xid() {
    return xid;
  }

  /** The change's version key, unique across every tracked table (0 for a backfill row). */
  public long vid() {
    return vid;
  }

  /**
   * Where the change was made: {@value #MAIN} for the tables themselves, else the name of the branch (as it is
   * named when the event is read). A consumer follows main or one branch.
   */
  public String branch() {
    return branch;
  }

  /** Milliseconds since the epoch of {@link #tickAt()}: the envelope's {@code ts_ms}. */
  public long tsMs() {
    return tickAt.toEpochMilli();
  }

  /** Whether the event comes from a backfill ({@link Operation#READ}) rather than from a change. */
  public boolean isBackfill() {
    return op == Operation.READ;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof ChangeEvent e && id.equals(e.id) && op == e.op && relation.equals(e.relation)
        && Objects.equals(database, e.database) && Objects.equals(schema, e.schema)
        && Objects.equals(table, e.table) && key().equals(e.key()) && Objects.equals(before(), e.before())
        && Objects.equals(after(), e.after()) && position.equals(e.position) && tick == e.tick
        && tickAt.equals(e.tickAt) && xid == e.xid && vid == e.vid && branch.equals(e.branch);
  }

  @Override
  public int hashCode() {
    return Objects.hash(id, op, relation, position, vid);
  }

  @Override
  public String toString() {
    return "ChangeEvent[id=" + id + ", op=" + op + ", relation=" + relation + ", key=" + key.json() + ", before="
        + (before == null ? null : before.json()) + ", after=" + (after == null ? null : after.json()) + ", tick="
        + tick + ", tickAt=" + tickAt + ", xid=" + xid + ", vid=" + vid + ", branch=" + branch + "]";
  }

  /** A row image: JSON text, a parsed tree, or both (the tree parsed from the text on first use). */
  private static final class Image {
    private final JsonText json;
    private final ObjectReader reader;
    private volatile JsonNode tree;

    private Image(JsonText json, ObjectReader reader, JsonNode tree) {
      this.json = json;
      this.reader = reader;
      this.tree = tree;
    }

    static Image of(JsonNode tree) {
      return tree == null ? null : new Image(null, null, tree);
    }

    static Image of(JsonText json, ObjectReader reader) {
      return json == null ? null : new Image(json, reader, null);
    }

    JsonNode tree() {
      JsonNode t = tree;
      if (t == null) {
        try {
          t = reader.readTree(json.utf8());
        } catch (IOException e) {
          throw Jdbc.failure("the database returned JSON that Jackson cannot parse: " + e.getMessage(), e);
        }
        tree = t;
      }
      return t;
    }

    String json() {
      return json != null ? json.getValue() : tree.toString();
    }

    /** The text, or null for an image made of a tree. */
    JsonText text() {
      return json;
    }
  }

  /** The module's internal access (EventAccess): events made of JSON text, and their texts. */
  private static final class Access extends EventAccess {
    @Override
    public ChangeEvent event(String id, Operation op, String relation, String database, String schema, String table,
        JsonText key, JsonText before, JsonText after, FeedPosition position, long tick, Instant tickAt, long xid,
        long vid, String branch, ObjectReader reader) {
      Objects.requireNonNull(key, "key");
      Objects.requireNonNull(reader, "reader");
      assert id.equals(position.toString()) : id + " is not the text of " + position;
      return new ChangeEvent(id, op, relation, database, schema, table, Image.of(key, reader),
          Image.of(before, reader), Image.of(after, reader), position, tick, tickAt, xid, vid, branch,
          id);
    }

    @Override
    public String positionText(ChangeEvent e) {
      return e.positionText != null ? e.positionText : e.position.toString();
    }

    @Override
    public JsonText keyText(ChangeEvent e) {
      return e.key.text();
    }

    @Override
    public JsonText beforeText(ChangeEvent e) {
      return e.before == null ? null : e.before.text();
    }

    @Override
    public JsonText afterText(ChangeEvent e) {
      return e.after == null ? null : e.after.text();
    }
  }
}
