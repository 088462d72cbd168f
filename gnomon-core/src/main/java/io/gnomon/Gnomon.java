package io.gnomon;

import static io.gnomon.sql.internal.generated.Tables.TRACKED_TABLE;

import io.gnomon.internal.Args;
import io.gnomon.internal.Jdbc;
import io.gnomon.internal.JsonText;
import io.gnomon.internal.Ticker;
import io.gnomon.sql.Catalog;
import io.gnomon.sql.internal.generated.Routines;
import io.gnomon.sql.internal.generated.tables.records.TrackedTableRecord;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import javax.sql.DataSource;

/**
 * The entry point: tracks tables, captures coordinates, runs the ticker and reads tables as of a past point.
 *
 * <pre>{@code
 * Gnomon.install(dataSource);                       // once per database: the gnomon catalog
 * try (Gnomon gnomon = Gnomon.open(dataSource)) {
 *   gnomon.track("public.accounts");
 *   Coordinate before = gnomon.coordinate();
 *   // ... writes ...
 *   Result<AccountsRecord> then = gnomon.asOf(before).fetch(dsl, ACCOUNTS, ACCOUNTS.ID.eq(7));
 * }
 * }</pre>
 *
 * <p>Thread-safe. Each call takes a connection from the data source and returns it; calls that take a
 * {@link Connection} run inside the caller's transaction instead.
 */
public final class Gnomon implements AutoCloseable {
  private final GnomonConfig config;
  /**
   * The catalog rows {@link #tracked(String)} read, by the name asked for; each use first checks that the name still
   * names the table of that id (see there).
   */
  private final ConcurrentMap<String, TrackedTable> trackedByName = new ConcurrentHashMap<>();
  private volatile Ticker ticker;
  private volatile boolean closed;

  private Gnomon(GnomonConfig config) {
    this.config = config;
  }

  /**
   * Installs or upgrades the {@code gnomon} catalog in the database (Flyway, with its own history table).
   *
   * @return the number of migrations applied, 0 when the catalog was already current
   */
  public static int install(DataSource dataSource) {
    return Catalog.install(dataSource);
  }

  /** Opens Gnomon on a data source with the default configuration. */
  public static Gnomon open(DataSource dataSource) {
    return open(GnomonConfig.of(dataSource));
  }

  /**
   * Opens Gnomon. Refuses, with a message saying what to do, when the catalog is missing or of another version.
   */
  public static Gnomon open(GnomonConfig config) {
    if (config.checkCatalog()) {
      Jdbc.withConnection(
          config.dataSource(),
          "checking the gnomon catalog",
          c -> {
            Catalog.check(c);
            return null;
          });
    }
    return new Gnomon(config);
  }

  /** The configuration this instance runs with. */
  public GnomonConfig config() {
    return config;
  }

  /** The data source, for a call of this instance: refused once it is closed. */
  DataSource dataSource() {
    if (closed) {
      throw new GnomonException(
          "this Gnomon was closed: it runs no more calls (its ticker is stopped)\n  Hint: open a new one with "
              + "Gnomon.open(...), and close it when the application stops, not after each use",
          null,
          null);
    }
    return config.dataSource();
  }

  /**
   * Tracks a table: installs its history, trigger and as-of functions. O(1) in the table's size.
   *
   * @param table the table's name as SQL, {@code schema.table} (quote mixed case: {@code "My"."Table"})
   * @throws TableNotFoundException, TableAlreadyTrackedException, NoPrimaryKeyException,
   *     UnsupportedRelationException, UnsupportedColumnTypeException with a message saying what to do
   */
  public TrackedTable track(String table) {
    return Jdbc.withConnection(
        dataSource(),
        "tracking " + table,
        c -> {
          // the installer's Java door: the generated routine for gnomon.track
          Routines.track(Jdbc.dsl(c).configuration(), table);
          return tracked(c, table);
        });
  }

  /**
   * Stops tracking a table: removes its trigger and functions. With {@code dropHistory} its history goes too;
   * without, the history is kept, renamed, as plain tables in schema {@code gnomon_t}.
   */
  public void untrack(String table, boolean dropHistory) {
    Jdbc.withConnection(
        dataSource(),
        "untracking " + table,
        c -> {
          Routines.untrack(Jdbc.dsl(c).configuration(), table, dropHistory);
          return null;
        });
  }

  /**
   * The tracked table with this name, as the catalog says now; throws {@link TableNotTrackedException} or {@link
   * TableNotFoundException}. One short query: a table untracked, tracked again (a new id, and perhaps other names for
   * its generated objects) or dropped since an earlier call, by this instance or any other session, is seen at once.
   */
  public TrackedTable tracked(String table) {
    return Jdbc.withConnection(dataSource(), "looking up " + table, c -> tracked(c, table));
  }

  private TrackedTable tracked(Connection c, String table) throws SQLException {
    // A tracking's row never changes what TrackedTable holds (renames and key changes are refused, ADD COLUMN touches
    // only the columns, which it does not hold): the row kept is still right while the name resolves to the table of
    // the same id, which ids never reused make a safe test. Otherwise the whole row again, with gnomon.tracked's errors.
    TrackedTable kept = table == null ? null : trackedByName.get(table);
    if (kept != null) {
      try (PreparedStatement ps = c.prepareStatement(
          // to_regclass, not gnomon.resolve_table: no PL/pgSQL block with its subtransaction, so the check costs what
          // its round trip costs (the name resolved before; a branch view's name misses here and takes the long way)
          "select t.table_id from gnomon.tracked_table t where t.relid = to_regclass(?)")) {
        ps.setString(1, table);
        try (ResultSet rs = ps.executeQuery()) {
          if (rs.next() && rs.getInt(1) == kept.id()) {
            return kept;
          }
        }
      }
      trackedByName.remove(table, kept);
    }
    TrackedTable t = read(Routines.tracked(Jdbc.dsl(c).configuration(), table));
    trackedByName.put(table, t);
    return t;
  }

  /** Every tracked table, by id. */
  public List<TrackedTable> trackedTables() {
    return Jdbc.withConnection(
        dataSource(),
        "listing tracked tables",
        c -> {
          List<TrackedTable> out = new ArrayList<>();
          for (TrackedTableRecord r :
              Jdbc.dsl(c).selectFrom(TRACKED_TABLE).orderBy(TRACKED_TABLE.TABLE_ID).fetch()) {
            out.add(read(r));
          }
          return out;
        });
  }

  private static TrackedTable read(TrackedTableRecord r) {
    return new TrackedTable(
        r.getTableId(),
        r.getSchemaName(),
        r.getTableName(),
        Arrays.asList(r.getKeyColumns()),
        r.getHistoryTable(),
        r.getAsOfFunction(),
        r.getTrackedAt(),
        r.getBaseName());
  }

  /** Captures the coordinate of now (one round trip). */
  public Coordinate coordinate() {
    return Jdbc.withConnection(dataSource(), "capturing a coordinate", Gnomon::captureCoordinate);
  }

  /**
   * Captures the coordinate of the caller's transaction or statement: in REPEATABLE READ and SERIALIZABLE it is
   * the transaction's snapshot, so reads in that transaction replay exactly as of it. It does not include the
   * transaction's own uncommitted writes.
   */
  public static Coordinate coordinate(Connection connection) {
    return Jdbc.on(connection, "capturing a coordinate", Gnomon::captureCoordinate);
  }

  private static Coordinate captureCoordinate(Connection c) throws SQLException {
    // plain JDBC: one round trip, nothing else on the way
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select gnomon.coordinate()")) {
      rs.next();
      return Coordinate.parse(rs.getString(1));
    }
  }

  /**
   * The coordinate of the last tick at or before a time.
   *
   * @throws CoordinateInFutureException for a time in the future
   * @throws CoordinateTooOldException when no tick was recorded at or before it
   */
  public Coordinate coordinateAt(Instant at) {
    Args.required(at, "the time to find a coordinate at", "pass an Instant, such as Instant.now().minusSeconds(60)");
    return Jdbc.withConnection(
        dataSource(),
        "finding the coordinate at " + at,
        c -> Coordinate.parse(
            Routines.coordinateAt(Jdbc.dsl(c).configuration(), OffsetDateTime.ofInstant(at, ZoneOffset.UTC))));
  }

  /** Records one tick now and returns its id (the ticker does this every {@code tickInterval}). */
  public long tick() {
    return Jdbc.withConnection(
        dataSource(),
        "recording a tick",
        c -> Routines.tick(Jdbc.dsl(c).configuration()));
  }

  /**
   * Starts the ticker (idempotent): a tick every {@code tickInterval}, upkeep every {@code maintainInterval}.
   *
   * @throws GnomonException once this instance is closed
   */
  public synchronized void startTicker() {
    DataSource ds = dataSource();
    if (ticker == null) {
      ticker = new Ticker(ds, config.tickInterval(), config.maintainInterval());
    }
  }

  /** Stops the ticker, if running. */
  public synchronized void stopTicker() {
    if (ticker != null) {
      ticker.close();
      ticker = null;
    }
  }

  /** Whether the ticker runs. */
  public synchronized boolean tickerRunning() {
    return ticker != null;
  }

  /**
   * Materialises the table's current state; reads as of older coordinates then roll back from it instead of from
   * the live table. Returns the checkpoint's id.
   */
  public long checkpoint(String table) {
    return Jdbc.withConnection(
        dataSource(),
        "checkpointing " + table,
        c -> Routines.checkpoint(Jdbc.dsl(c).configuration(), table));
  }

  /** Reads as of a coordinate: see {@link AsOf}. */
  public AsOf asOf(Coordinate coordinate) {
    return new AsOf(this, Args.required(coordinate, "the coordinate to read as of",
        "pass one from gnomon.coordinate() or Coordinate.parse(text); for now, read the table itself"));
  }

  /** Reads as of the last tick at or before a time. */
  public AsOf asOf(Instant at) {
    return new AsOf(this, coordinateAt(at));
  }

  /** Reads at a point: main or a branch, now or as of a coordinate; see {@link At}. */
  public At at(Point point) {
    return new At(this, Args.required(point, "the point to read at", "pass Point.main() or Point.branch(name)"));
  }

  /** Merges: strategies, merge runs, conflicts and resolutions; see {@link Merges}. */
  public Merges merges() {
    return new Merges(this);
  }

  /** Branch lifecycle: create, list, describe, rename, drop; see {@link Branches}. */
  public Branches branches() {
    return new Branches(this);
  }

  /**
   * Work on a branch with jOOQ or JDBC, at the data source's default isolation level; see {@link OnBranch}.
   * {@code "main"} works on main. Only the name's presence is checked here; the branch is looked up when the first
   * transaction runs.
   *
   * @throws InvalidArgumentException for a null or blank name (which would otherwise have meant main)
   */
  public OnBranch onBranch(String branch) {
    if (branch == null || branch.isBlank()) {
      throw new InvalidArgumentException(
          "onBranch needs a branch name, but got " + (branch == null ? "null" : "'" + branch + "'")
              + "\n  Hint: name a branch of gnomon.branches().list(), or \"main\" to work on main", null);
    }
    return new OnBranch(this, branch, -1);
  }

  /**
   * The keys of a table whose state differs between two points, with the operation and both row images. Its cost
   * grows with the changes between the points, not with the table.
   *
   * <pre>{@code
   * List<DiffRow> changes = gnomon.diff("public.accounts", Point.main(), Point.branch("feature"));
   * }</pre>
   */
  public List<DiffRow> diff(String table, Point from, Point to) {
    Args.required(from, "the point to diff from", "pass Point.main() or Point.branch(name)");
    Args.required(to, "the point to diff to", "pass Point.main() or Point.branch(name)");
    return Jdbc.withConnection(
        dataSource(),
        "diffing " + table + " from " + from + " to " + to,
        c -> {
          List<DiffRow> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(
              "select op, key::text, old::text, new::text from gnomon.diff(?, gnomon.point(?, ?), gnomon.point(?, ?))")) {
            ps.setString(1, table);
            ps.setString(2, from.branch());
            ps.setString(3, from.coordinateText());
            ps.setString(4, to.branch());
            ps.setString(5, to.coordinateText());
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(new DiffRow(
                    rs.getString(1), JsonText.parse(rs.getString(2)), JsonText.parse(rs.getString(3)), JsonText.parse(rs.getString(4))));
              }
            }
          }
          return out;
        });
  }

  /**
   * Stops the ticker; the calls of this instance (and of its {@link AsOf}, {@link At}, {@link Branches}, {@link
   * Merges} and {@link OnBranch}) are refused from then on. Idempotent. The data source is the caller's and stays
   * open.
   */
  @Override
  public void close() {
    synchronized (this) {
      closed = true;
    }
    stopTicker();
  }
}
