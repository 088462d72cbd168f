package io.gnomon.feed.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectReader;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import io.gnomon.feed.ChangeEvent;
import io.gnomon.feed.FeedPage;
import io.gnomon.feed.FeedPosition;
import io.gnomon.feed.Operation;
import io.gnomon.internal.Jdbc;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Reads pages with {@code gnomon.feed_read} and turns its rows into {@link ChangeEvent}s holding the JSON text
 * of keys and row images as the UTF-8 bytes the driver received (never decoded into strings unless asked for; the
 * envelope copies the bytes), parsed on demand with the caller's {@link ObjectMapper} (numbers kept exact: {@code
 * 100.00} stays {@code 100.00}); heartbeat rows are folded into the page's position. Thread-safe.
 */
public final class PageReader {
  private static final String COLUMNS =
      "select event_position, tick_id, tick_at, xid::text, txn_key, vid, table_name, op, key, before, after, branch";
  private static final String READ = COLUMNS + " from gnomon.feed_read(?, ?)";
  private static final String READ_AFTER = COLUMNS + " from gnomon.feed_read(?, ?, ?)";

  private final ObjectReader json;
  private final Map<String, String[]> schemaAndTable = new ConcurrentHashMap<>();
  private volatile String database;

  /** A reader parsing row images with {@code mapper}'s configuration. */
  public PageReader(ObjectMapper mapper) {
    this.json =
        mapper
            .reader()
            .with(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
            .without(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES);
  }

  /**
   * Reads one page inside the caller's transaction: the consumer's position (locking its row with {@code lock}),
   * then the events after it.
   */
  public FeedPage read(Connection c, String name, int maxEvents, boolean lock) throws SQLException {
    return page(c, READ, name, FeedSql.position(c, name, lock), maxEvents, null);
  }

  /**
   * Reads the page after {@code after} (at or after the consumer's acknowledged position; {@code gnomon.feed_read}
   * checks it), in the caller's transaction or, in autocommit mode, in one of its own: one statement, {@code
   * gnomon.feed_read(name, maxEvents, after)}, which acknowledges nothing.
   */
  public FeedPage readAfter(Connection c, String name, FeedPosition after, int maxEvents) throws SQLException {
    return page(c, READ_AFTER, name, after, maxEvents, after.toString());
  }

  /** The page {@code sql} returns from {@code from} on ({@code after}: its third parameter, when it has one). */
  private FeedPage page(Connection c, String sql, String name, FeedPosition from, int maxEvents, String after)
      throws SQLException {
    Rows rows = new Rows(from, maxEvents);
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, name);
      ps.setInt(2, maxEvents);
      if (after != null) {
        ps.setString(3, after);
      }
      try (ResultSet rs = ps.executeQuery()) {
        rows.add(c, rs);
      }
    }
    return new FeedPage(name, from, rows.position, rows.events);
  }

  /** A page's events as they are read, and the position of its last row (a heartbeat's too). */
  private final class Rows {
    private FeedPosition position;
    private final List<ChangeEvent> events;
    private String database;
    private long tick = -1;
    private Instant tickAt;

    Rows(FeedPosition from, int maxEvents) {
      this.position = from;
      this.events = new ArrayList<>(Math.min(maxEvents, 4096));
    }

    /** Adds the rows of {@code rs}, which has feed_read's columns. */
    void add(Connection c, ResultSet rs) throws SQLException {
      EventAccess access = EventAccess.get();
      Names relations = new Names();
      Names branches = new Names();
      while (rs.next()) {
        String id = rs.getString(1);
        position = FeedPosition.parse(id);
        String op = rs.getString(8);
        if (!"h".equals(op)) {
          if (database == null) {
            database = database(c);
          }
          // every event of a batch has its tick's time: parse it once per batch
          long t = rs.getLong(2);
          if (t != tick) {
            tick = t;
            tickAt = rs.getObject(3, OffsetDateTime.class).toInstant();
          }
          String relation = relations.of(rs.getBytes(7));
          String[] names = names(c, relation);
          // the key and images as the bytes the driver received (pgjdbc returns a text column's raw bytes, in the
          // connection's encoding, UTF-8): no String per image
          events.add(access.event(id, Operation.of(op), relation, database, names[0], names[1],
              JsonText.ofUtf8(rs.getBytes(9)), JsonText.ofUtf8(rs.getBytes(10)), JsonText.ofUtf8(rs.getBytes(11)),
              position, tick, tickAt, rs.getLong(4), rs.getLong(6), branches.of(rs.getBytes(12)),
              json));
        }
      }
    }
  }

  /** Decodes a column's text once while it repeats from row to row (a page's table and branch names). */
  private static final class Names {
    private byte[] last;
    private String name;

    String of(byte[] utf8) {
      if (utf8 == null) {
        return null;
      }
      if (last == null || !Arrays.equals(last, utf8)) {
        last = utf8;
        name = new String(utf8, StandardCharsets.UTF_8);
      }
      return name;
    }
  }

  /** Parses a JSON text from the database; null stays null. */
  public JsonNode parse(String text) {
    if (text == null) {
      return null;
    }
    try {
      return json.readTree(text);
    } catch (JsonProcessingException e) {
      throw Jdbc.failure("the database returned JSON that Jackson cannot parse: " + e.getOriginalMessage(), e);
    }
  }

  /** The name of the database {@code c} is connected to (asked once). */
  public String database(Connection c) throws SQLException {
    String d = database;
    if (d == null) {
      d = c.getCatalog();
      if (d == null) {
        try (Statement st = c.createStatement();
            ResultSet rs = st.executeQuery("select current_database()")) {
          rs.next();
          d = rs.getString(1);
        }
      }
      database = d;
    }
    return d;
  }

  /** The schema and table of a tracked table named as SQL names it ({@code format('%I.%I', …)}). */
  public String[] names(Connection c, String relation) throws SQLException {
    String[] names = schemaAndTable.get(relation);
    if (names == null) {
      try (Statement st = c.createStatement();
          ResultSet rs = st.executeQuery(
              "select format('%I.%I', schema_name, table_name), schema_name, table_name from gnomon.tracked_table")) {
        while (rs.next()) {
          schemaAndTable.put(rs.getString(1), new String[] {rs.getString(2), rs.getString(3)});
        }
      }
      names = schemaAndTable.get(relation);
      if (names == null) {
        // untracked since: split the SQL name as well as we can
        int dot = relation.indexOf('.');
        names = new String[] {relation.substring(0, Math.max(dot, 0)), relation.substring(dot + 1)};
      }
    }
    return names;
  }
}
