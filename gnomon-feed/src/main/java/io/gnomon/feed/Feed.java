package io.gnomon.feed;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gnomon.ConsumerExistsException;
import io.gnomon.ConsumerExpiredException;
import io.gnomon.ConsumerNotFoundException;
import io.gnomon.Coordinate;
import io.gnomon.Gnomon;
import io.gnomon.InvalidArgumentException;
import io.gnomon.InvalidPositionException;
import io.gnomon.feed.internal.Backfill;
import io.gnomon.feed.internal.FeedSql;
import io.gnomon.feed.internal.PageReader;
import io.gnomon.feed.internal.Transactions;
import io.gnomon.internal.Jdbc;
import java.sql.Connection;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Consumer;
import javax.sql.DataSource;

/**
 * The change feed of tracked tables, for named consumers whose positions live in the database.
 *
 * <pre>{@code
 * Feed feed = Feed.open(dataSource);
 * feed.register("search-index", List.of("public.account"), FeedStart.now(), true);
 * FeedPage page = feed.poll("search-index", 1000);
 * for (ChangeEvent e : page.events()) {
 *   index(mapper.writeValueAsString(e));          // a Debezium-shaped JSON envelope
 * }
 * feed.ack("search-index", page.position());
 * }</pre>
 *
 * <p>Changes become visible to consumers one tick after they commit: run the ticker ({@link Gnomon#startTicker()}) or
 * call {@code gnomon.tick()} from a scheduler. Delivery is at-least-once with stable event ids; it is exactly-once
 * when the consumer's writes and the acknowledgement commit together ({@link #ack(Connection, FeedPage)}, or a
 * {@link FeedRunner} with a {@link TransactionalFeedHandler}).
 *
 * <p>Thread-safe. Calls without a {@link Connection} take one from the data source and return it; calls with one run
 * on the caller's connection, inside its transaction when it has one open.
 */
public final class Feed {
  private final DataSource dataSource;
  private final ObjectMapper mapper;
  private final PageReader reader;

  private Feed(DataSource dataSource, ObjectMapper mapper) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    this.mapper = Objects.requireNonNull(mapper, "mapper");
    this.reader = new PageReader(mapper);
  }

  /** The feed of the database behind {@code dataSource}, with a default {@link ObjectMapper}. */
  public static Feed open(DataSource dataSource) {
    return new Feed(dataSource, new ObjectMapper());
  }

  /** The feed of the database behind {@code dataSource}; row images are parsed with {@code mapper}. */
  public static Feed open(DataSource dataSource, ObjectMapper mapper) {
    return new Feed(dataSource, mapper);
  }

  /** The feed of {@code gnomon}'s database, with a default {@link ObjectMapper}. */
  public static Feed open(Gnomon gnomon) {
    return open(gnomon.config().dataSource());
  }

  /** The feed of {@code gnomon}'s database; row images are parsed with {@code mapper}. */
  public static Feed open(Gnomon gnomon, ObjectMapper mapper) {
    return open(gnomon.config().dataSource(), mapper);
  }

  /** The data source this feed reads. */
  public DataSource dataSource() {
    return dataSource;
  }

  /** The mapper that parses row images and, through {@link #toJson(ChangeEvent)}, writes events. */
  public ObjectMapper mapper() {
    return mapper;
  }

  // ---- consumers ----

  /** Registers a consumer of {@code tables} from now, with row images and no lag limit; returns its start. */
  public Coordinate register(String name, List<String> tables) {
    return register(name, tables, FeedStart.now(), true, null);
  }

  /**
   * Registers a consumer.
   *
   * @param name 1 to 200 characters, unique
   * @param tables tracked tables, {@code schema.table}
   * @param start now, at a coordinate, or a backfill (then call {@link #backfill} before the first poll)
   * @param images whether events carry the rows before and after each change
   * @return the start coordinate: no change visible at it is delivered; the tables read as of it are the backfill
   * @throws ConsumerExistsException when a consumer has that name
   */
  public Coordinate register(String name, List<String> tables, FeedStart start, boolean images) {
    return register(name, tables, start, images, null);
  }

  /**
   * Registers a consumer that is expired ({@link ConsumerExpiredException}) when its position falls more than
   * {@code maxLag} behind the last tick; {@code maxLag} null for no limit. See {@link #register(String, List,
   * FeedStart, boolean)}.
   */
  public Coordinate register(String name, List<String> tables, FeedStart start, boolean images, Duration maxLag) {
    return register(name, tables, start, images, maxLag, ChangeEvent.MAIN);
  }

  /**
   * Registers a consumer of the writes made on {@code branch} to {@code tables} ({@link ChangeEvent#MAIN} for the
   * tables themselves), with the same guarantees as on main; its events carry the branch ({@link
   * ChangeEvent#branch()}, {@code source.branch}). The branch cannot be dropped while the consumer is registered.
   * See {@link #register(String, List, FeedStart, boolean, Duration)}.
   *
   * @throws io.gnomon.BranchNotFoundException when no branch has that name
   */
  public Coordinate register(String name, List<String> tables, FeedStart start, boolean images, Duration maxLag,
      String branch) {
    Objects.requireNonNull(tables, "tables");
    Objects.requireNonNull(start, "start");
    Objects.requireNonNull(branch, "branch");
    if (maxLag != null && (maxLag.isNegative() || maxLag.isZero())) {
      throw new InvalidArgumentException("maxLag must be positive, got " + maxLag, null);
    }
    return Jdbc.withConnection(dataSource, "registering feed consumer " + name,
        c -> Coordinate.parse(FeedSql.register(c, name, tables, start.sql(), images, maxLag, branch)));
  }

  /**
   * Drops a consumer and its position.
   *
   * @throws ConsumerNotFoundException when no consumer has that name
   */
  public void unregister(String name) {
    Jdbc.withConnection(dataSource, "unregistering feed consumer " + name, c -> {
      FeedSql.unregister(c, name);
      return null;
    });
  }

  /** The consumer called {@code name}, if registered. */
  public Optional<FeedConsumer> consumer(String name) {
    return Jdbc.withConnection(dataSource, "reading feed consumer " + name, c -> FeedSql.consumer(c, name));
  }

  /** Every registered consumer, by name. */
  public List<FeedConsumer> consumers() {
    return Jdbc.withConnection(dataSource, "listing feed consumers", FeedSql::consumers);
  }

  // ---- reading ----

  /**
   * Reads the next page after the consumer's acknowledged position: whole transactions, at most {@code maxEvents}
   * events (a larger transaction is split across pages). Polling again without acknowledging returns the same
   * events.
   *
   * @throws ConsumerNotFoundException, ConsumerExpiredException
   */
  public FeedPage poll(String name, int maxEvents) {
    return Jdbc.withConnection(dataSource, "reading the feed of " + name, c -> poll(c, name, maxEvents));
  }

  /**
   * Reads the next page on the caller's connection: in the caller's transaction if one is open, else in a
   * REPEATABLE READ transaction of its own (so the page's {@link FeedPage#from()} is exactly where it was read).
   */
  public FeedPage poll(Connection connection, String name, int maxEvents) {
    checkPageSize(maxEvents);
    return Jdbc.on(connection, "reading the feed of " + name,
        c -> Transactions.run(c, Connection.TRANSACTION_REPEATABLE_READ, t -> reader.read(t, name, maxEvents, false)));
  }

  /**
   * Reads the page after {@code after}, a position at or after the consumer's acknowledged one (the {@link
   * FeedPage#position()} of the page before): a consumer reads its next page while it handles this one, and
   * acknowledges each page once handled ({@link #ack(String, FeedPosition)}), so a restart resumes after the last
   * acknowledged page. Does not move the consumer. One statement, {@code gnomon.feed_read(name, maxEvents, after)},
   * on the caller's connection: inside its transaction when one is open, else in a transaction of its own.
   *
   * @throws InvalidPositionException when {@code after} is before the consumer's acknowledged position or after the
   *     last tick
   */
  public FeedPage pollAfter(Connection connection, String name, FeedPosition after, int maxEvents) {
    checkPageSize(maxEvents);
    Objects.requireNonNull(after, "after");
    return Jdbc.on(connection, "reading the feed of " + name + " after " + after,
        c -> reader.readAfter(c, name, after, maxEvents));
  }

  /** {@link #pollAfter(Connection, String, FeedPosition, int)} on a connection of the data source. */
  public FeedPage pollAfter(String name, FeedPosition after, int maxEvents) {
    return Jdbc.withConnection(dataSource, "reading the feed of " + name + " after " + after,
        c -> pollAfter(c, name, after, maxEvents));
  }

  /**
   * Reads the next page inside the caller's open transaction, locking the consumer's row until it ends, so that no
   * other session acknowledges meanwhile: apply the page with your own writes, {@link #ack(Connection, FeedPage)},
   * commit. Concurrent sessions doing the same for this consumer wait for each other.
   *
   * @throws IllegalStateException when {@code connection} is in autocommit mode
   */
  public FeedPage pollForUpdate(Connection connection, String name, int maxEvents) {
    checkPageSize(maxEvents);
    return Jdbc.on(connection, "reading the feed of " + name, c -> {
      if (c.getAutoCommit()) {
        throw new IllegalStateException("pollForUpdate needs an open transaction: call setAutoCommit(false) first");
      }
      return reader.read(c, name, maxEvents, true);
    });
  }

  private static void checkPageSize(int maxEvents) {
    if (maxEvents < 1 || maxEvents > 1_000_000) {
      throw new InvalidArgumentException("maxEvents must be between 1 and 1000000, got " + maxEvents, null);
    }
  }

  // ---- acknowledging ----

  /**
   * Acknowledges every event up to {@code position}: the next page starts after it.
   *
   * @throws InvalidPositionException when it is before the acknowledged position or after the last tick
   */
  public void ack(String name, FeedPosition position) {
    Jdbc.withConnection(dataSource, "acknowledging " + position + " for " + name, c -> {
      FeedSql.ack(c, name, position);
      return null;
    });
  }

  /** Acknowledges {@code position} on the caller's connection, inside its transaction when one is open. */
  public void ack(Connection connection, String name, FeedPosition position) {
    Objects.requireNonNull(position, "position");
    Jdbc.on(connection, "acknowledging " + position + " for " + name, c -> {
      FeedSql.ack(c, name, position);
      return null;
    });
  }

  /**
   * Acknowledges a page in the caller's transaction, for exactly-once effects: call it after your own writes for the
   * page, on the same connection, then commit. It locks the consumer's row and checks that the consumer is still
   * where the page was read from; if another session acknowledged meanwhile it throws {@link
   * PositionConflictException}: roll back.
   *
   * @throws IllegalStateException when {@code connection} is in autocommit mode (there would be nothing to make
   *     atomic)
   */
  public void ack(Connection connection, FeedPage page) {
    Objects.requireNonNull(page, "page");
    Jdbc.on(connection, "acknowledging " + page.position() + " for " + page.consumer(), c -> {
      if (c.getAutoCommit()) {
        throw new IllegalStateException(
            "an exactly-once acknowledgement needs the transaction of your writes: call setAutoCommit(false) first");
      }
      FeedPosition now = FeedSql.position(c, page.consumer(), true);
      if (!now.equals(page.from())) {
        throw new PositionConflictException(page.consumer(), page.from(), now);
      }
      if (page.advances()) {
        FeedSql.ack(c, page.consumer(), page.position());
      }
      return null;
    });
  }

  // ---- backfill ----

  /**
   * Streams every row of the consumer's tables as of its start coordinate to {@code handler}, as {@link
   * Operation#READ} events (table by table, in the order the tables were tracked). Together with the feed from the
   * consumer's start, the rows and the changes have no gap and no overlap. Does not move the consumer's position.
   *
   * @return how many rows were read
   * @throws ConsumerNotFoundException when no consumer has that name
   */
  public long backfill(String name, Consumer<ChangeEvent> handler) {
    Objects.requireNonNull(handler, "handler");
    return Jdbc.withConnection(dataSource, "backfilling feed consumer " + name,
        c -> Transactions.run(c, Connection.TRANSACTION_READ_COMMITTED, t -> Backfill.run(t, reader, name, handler)));
  }

  // ---- running ----

  /**
   * Starts a runner that hands the consumer's pages to {@code handler} and acknowledges each after the handler
   * returns (at-least-once). Close it to stop it gracefully.
   */
  public FeedRunner start(String name, FeedHandler handler, FeedRunnerConfig config) {
    Objects.requireNonNull(handler, "handler");
    return FeedRunner.start(this, name, config, handler, null);
  }

  /**
   * Starts a runner that applies each page with {@code handler} and acknowledges it in the same transaction
   * (exactly-once for the handler's writes in this database). Close it to stop it gracefully.
   */
  public FeedRunner startTransactional(String name, TransactionalFeedHandler handler, FeedRunnerConfig config) {
    Objects.requireNonNull(handler, "handler");
    return FeedRunner.start(this, name, config, null, handler);
  }

  // ---- JSON ----

  /** The event as its Debezium-shaped JSON envelope, written with this feed's mapper. */
  public String toJson(ChangeEvent event) {
    try {
      return mapper.writeValueAsString(event);
    } catch (JsonProcessingException e) {
      throw Jdbc.failure("cannot write change event " + event.id() + " as JSON: " + e.getOriginalMessage(), e);
    }
  }
}
