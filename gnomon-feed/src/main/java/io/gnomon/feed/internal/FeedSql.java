package io.gnomon.feed.internal;

import io.gnomon.ConsumerNotFoundException;
import io.gnomon.Coordinate;
import io.gnomon.feed.FeedConsumer;
import io.gnomon.feed.FeedPosition;
import io.gnomon.internal.Jdbc;
import io.gnomon.sql.internal.generated.Routines;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Timestamp;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.jooq.types.YearToSecond;

/** The feed's calls into the catalog: the generated routines for the gnomon.feed_* functions, and a few queries. */
public final class FeedSql {
  private static final String CONSUMER_QUERY =
      "select k.consumer_name, k.with_images, k.tick_id, k.txn_key, k.vid, gnomon.coordinate_text(k.start_snapshot::text),"
          + " extract(epoch from k.max_lag)::float8, k.registered_at, k.acked_at,"
          + " array(select format('%I.%I', t.schema_name, t.table_name) from gnomon.tracked_table t"
          + "        where t.table_id = any (k.table_ids) order by t.table_id),"
          + " case when k.branch_id is null then 'main' else coalesce((select b.branch_name from gnomon.branch b"
          + "        where b.branch_id = k.branch_id), '(dropped branch ' || k.branch_id || ')') end"
          + " from gnomon.consumer k";

  private FeedSql() {}

  /** {@code gnomon.feed_register}: returns the start coordinate's text. */
  public static String register(Connection c, String name, List<String> tables, String start, boolean images,
      Duration maxLag, String branch) {
    return Routines.feedRegister(
        Jdbc.dsl(c).configuration(),
        name,
        tables.toArray(String[]::new),
        start,
        images,
        maxLag == null ? null : YearToSecond.valueOf(maxLag),
        branch);
  }

  /** {@code gnomon.feed_unregister}. */
  public static void unregister(Connection c, String name) {
    Routines.feedUnregister(Jdbc.dsl(c).configuration(), name);
  }

  /**
   * {@code gnomon.feed_ack}, as a plain prepared statement: a consumer acknowledges every page, and building the call
   * through jOOQ's routine (rendering its SQL each time) was most of a {@code FeedRunner} thread's own CPU samples
   * between pages.
   */
  public static void ack(Connection c, String name, FeedPosition position) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("select gnomon.feed_ack(?, ?)")) {
      ps.setString(1, name);
      ps.setString(2, position.toString());
      ps.execute();
    }
  }

  /**
   * The consumer's acknowledged position; with {@code lock}, the consumer's row stays locked until the transaction
   * ends, so no other session acknowledges meanwhile.
   *
   * @throws ConsumerNotFoundException when no consumer has that name
   */
  public static FeedPosition position(Connection c, String name, boolean lock) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(
        "select tick_id, txn_key, vid from gnomon.consumer where consumer_name = ?" + (lock ? " for update" : ""))) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw notFound(name);
        }
        return new FeedPosition(rs.getLong(1), rs.getLong(2), rs.getLong(3));
      }
    }
  }

  /** The consumer called {@code name}, if registered. */
  public static Optional<FeedConsumer> consumer(Connection c, String name) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement(CONSUMER_QUERY + " where k.consumer_name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? Optional.of(consumer(rs)) : Optional.empty();
      }
    }
  }

  /** Every registered consumer, by name. */
  public static List<FeedConsumer> consumers(Connection c) throws SQLException {
    List<FeedConsumer> out = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(CONSUMER_QUERY + " order by k.consumer_name");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.add(consumer(rs));
      }
    }
    return out;
  }

  private static FeedConsumer consumer(ResultSet rs) throws SQLException {
    double lagSeconds = rs.getDouble(7);
    Optional<Duration> maxLag =
        rs.wasNull() ? Optional.empty() : Optional.of(Duration.ofNanos(Math.round(lagSeconds * 1e9)));
    Timestamp acked = rs.getTimestamp(9);
    Array tables = rs.getArray(10);
    return new FeedConsumer(
        rs.getString(1),
        Arrays.asList((String[]) tables.getArray()),
        rs.getBoolean(2),
        new FeedPosition(rs.getLong(3), rs.getLong(4), rs.getLong(5)),
        Coordinate.parse(rs.getString(6)),
        maxLag,
        rs.getTimestamp(8).toInstant(),
        Optional.ofNullable(acked).map(Timestamp::toInstant),
        rs.getString(11));
  }

  /** The error {@code gnomon.feed_read} would raise, raised before it for a read that starts with a lock. */
  static ConsumerNotFoundException notFound(String name) {
    return new ConsumerNotFoundException(
        "no feed consumer is named '" + name + "'\n  Hint: Register it first: Feed.register(\"" + name
            + "\", List.of(\"schema.table\"), FeedStart.now(), true)",
        null);
  }
}
