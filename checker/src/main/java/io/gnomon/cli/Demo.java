package io.gnomon.cli;

import static org.jooq.impl.DSL.field;
import static org.jooq.impl.DSL.name;
import static org.jooq.impl.DSL.table;

import io.gnomon.Coordinate;
import io.gnomon.Gnomon;
import io.gnomon.GnomonConfig;
import io.gnomon.NoPrimaryKeyException;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.Result;
import org.jooq.SQLDialect;
import org.jooq.Table;
import org.jooq.impl.DSL;

/**
 * The demo's script: every step Gnomon offers today on one small table, each shown as the SQL or Java a newcomer
 * would type and the rows it returns. The demo checks its own results (the past reads must return the past rows) and
 * throws {@link DemoCheckFailed} when one is wrong.
 */
final class Demo {
  /** What the account table holds before any change: id|owner|balance. */
  private static final List<String> AT_START = List.of("1|alice|100.00", "2|bob|50.00", "3|carol|75.00");

  private static final Duration TICK = Duration.ofMillis(200);
  private static final Duration TICK_WAIT = Duration.ofSeconds(20);

  private final DataSource dataSource;
  private final Transcript t;

  Demo(DataSource dataSource, Transcript transcript) {
    this.dataSource = dataSource;
    this.t = transcript;
  }

  /** Runs every step on a database with nothing of Gnomon's in it yet. */
  void run() throws SQLException {
    try (Connection c = dataSource.getConnection()) {
      Gnomon gnomon = install(c);
      try {
        createAndTrack(c);
        String before = captureAndChange(c);
        readAsOfCoordinate(c, before);
        readFromJava(c, gnomon, before);
        readAsOfTime(c, gnomon);
        checkpoint(c, before);
        new DemoFeedStep(dataSource, t).run(c);
        new DemoBranchStep(t).run(c, gnomon);
        new DemoMergeStep(t).run(c);
        errors(c, gnomon, before);
      } finally {
        gnomon.close();
      }
    }
  }

  private Gnomon install(Connection c) throws SQLException {
    t.step("Install Gnomon into the database");
    t.say("Gnomon lives inside your database: its functions and catalog tables in schema gnomon, the objects it "
        + "generates for each tracked table in schema gnomon_t. Installing is one call (Flyway, with its own history "
        + "table); for a database of your own, ./gnomon install --url JDBC_URL does the same.");
    int applied = Gnomon.install(dataSource);
    t.java("int applied = Gnomon.install(dataSource);", List.of("applied ==> " + applied));
    t.sql(c, "select gnomon.catalog_version();");
    t.say("The Java entry point, with the ticker set to tick every 200 ms (the default is 1 s):");
    Gnomon gnomon = Gnomon.open(GnomonConfig.builder().dataSource(dataSource).tickInterval(TICK).build());
    t.java("Gnomon gnomon = Gnomon.open(GnomonConfig.builder().dataSource(dataSource)\n"
        + "    .tickInterval(Duration.ofMillis(200)).build());", List.of());
    return gnomon;
  }

  private void createAndTrack(Connection c) throws SQLException {
    t.step("Create an ordinary table and track it");
    t.sql(c, "create table account (id integer primary key, owner text not null, balance numeric(10,2) not null);");
    t.sql(c, "insert into account values (1, 'alice', 100.00), (2, 'bob', 50.00), (3, 'carol', 75.00);");
    t.say("gnomon.track() installs, for this table only, a history table, triggers that copy each changed row's "
        + "before-image into it, and the read function gnomon_t.account_as_of(). It does no "
        + "per-row work, so it is as quick on a billion rows as on three, and the table itself is unchanged: your "
        + "queries and their plans stay the same.");
    t.sql(c, "select gnomon.track('public.account');");
    t.sql(c, "select table_name, key_columns, history_table, as_of_function from gnomon.tracked_table;");
  }

  private String captureAndChange(Connection c) throws SQLException {
    t.step("Capture a coordinate, then change the table");
    t.say("A coordinate is a point in history you can come back to: PostgreSQL's own transaction snapshot "
        + "(pg_current_snapshot()) as text, v1:xmin:xmax:in-progress-xids. Capturing one costs one round trip; "
        + "store it wherever you like.");
    String before = t.sql(c, "select gnomon.coordinate() as before;").value(0, "before");
    t.sql(c, "update account set balance = balance - 30 where id = 1;");
    t.sql(c, "delete from account where id = 2;");
    t.sql(c, "insert into account values (4, 'dave', 20.00);");
    expect("the live table", t.sql(c, "select * from account order by id;"),
        "1|alice|70.00", "3|carol|75.00", "4|dave|20.00");
    return before;
  }

  private void readAsOfCoordinate(Connection c, String before) throws SQLException {
    t.step("Read the table as it was at the coordinate");
    expect("the read as of the coordinate",
        t.sql(c, "select * from gnomon_t.account_as_of(" + literal(before) + ") order by id;"),
        AT_START.toArray(String[]::new));
    t.note("alice still has 100.00, bob is still there, dave is not yet: exactly what a transaction at that");
    t.note("coordinate saw. The read is exact because the coordinate is a snapshot, not a time.");
    t.say("Where the past comes from: each change left one version in the history table, holding the row as it was "
        + "before the change (g_op: I insert, U update, D delete; an insert's version holds only the key, as there was "
        + "no row before). A past read takes unchanged rows from the live table and rebuilds only the changed ones.");
    t.sql(c, "select g_vid, g_op, id, owner, balance from gnomon_t.account_h order by g_vid;");
  }

  private void readFromJava(Connection c, Gnomon gnomon, String beforeText) throws SQLException {
    t.step("The same read from Java: JDBC and jOOQ");
    t.say("The Java API reads through the same generated function. A coordinate is a value (Coordinate.parse / "
        + "toString); gnomon.asOf(coordinate) gives a plain JDBC statement with the coordinate bound as parameter 1, "
        + "or a jOOQ table to use in any query.");
    Coordinate before = Coordinate.parse(beforeText);
    t.java("Coordinate before = Coordinate.parse(" + javaString(beforeText) + ");", List.of("before ==> " + before));
    String sql = gnomon.asOf(before).selectSql("public.account");
    t.java("gnomon.asOf(before).selectSql(\"public.account\");", List.of("$1 ==> " + javaString(sql)));
    ResultTable viaJdbc;
    try (PreparedStatement ps = gnomon.asOf(before).prepare(c, "public.account", "balance > ? order by id")) {
      ps.setBigDecimal(2, new BigDecimal("60"));
      try (ResultSet rs = ps.executeQuery()) {
        viaJdbc = ResultTable.of(rs);
      }
    }
    t.java("""
        try (PreparedStatement ps = gnomon.asOf(before).prepare(connection, "public.account", "balance > ? order by id")) {
          ps.setBigDecimal(2, new BigDecimal("60"));
          ResultSet rs = ps.executeQuery(); /* ... */
        }""", viaJdbc.lines());
    expect("the JDBC read as of the coordinate", viaJdbc, "1|alice|100.00", "3|carol|75.00");

    DSLContext dsl = DSL.using(c, SQLDialect.POSTGRES);
    Table<Record> account = table(name("public", "account"));
    Result<Record> viaJooq = dsl.selectFrom(gnomon.asOf(before).table(account))
        .where(field(name("id")).le(2))
        .orderBy(field(name("id")))
        .fetch();
    t.java("""
        DSLContext dsl = DSL.using(connection, SQLDialect.POSTGRES);
        Table<Record> account = table(name("public", "account"));
        dsl.selectFrom(gnomon.asOf(before).table(account))
            .where(field(name("id")).le(2))
            .orderBy(field(name("id")))
            .fetch();""",
        List.of(viaJooq.format().split("\n")));
    List<String> jooqRows = viaJooq.stream()
        .map(r -> Arrays.stream(r.intoArray()).map(String::valueOf).collect(Collectors.joining("|")))
        .toList();
    if (!jooqRows.equals(List.of("1|alice|100.00", "2|bob|50.00"))) {
      throw new DemoCheckFailed("the jOOQ read as of the coordinate returned " + jooqRows
          + ", expected [1|alice|100.00, 2|bob|50.00]");
    }
  }

  private void readAsOfTime(Connection c, Gnomon gnomon) throws SQLException {
    t.step("Read as of a time: ticks");
    t.say("Transactions do not commit in the order of their ids, so a timestamp cannot be a coordinate. Gnomon maps "
        + "time to coordinates with ticks: gnomon.tick() records the current coordinate and the wall-clock time. The "
        + "Java ticker calls it every tickInterval; without Java, cron or pg_cron can call it.");
    t.sql(c, "select gnomon.tick();");
    gnomon.startTicker();
    t.java("gnomon.startTicker();", List.of());
    awaitTicks(c, 2);
    t.note("(the demo waited for the ticker's next two ticks)");
    t.say("Note the time, then change alice's balance again:");
    String at = t.sql(c, "select clock_timestamp()::text as t;").value(0, "t");
    t.sql(c, "update account set balance = 0.00 where id = 1;");
    t.sql(c, "select gnomon.coordinate_at(" + literal(at) + ");");
    expect("the read as of " + at,
        t.sql(c, "select * from gnomon_t.account_as_of(timestamptz " + literal(at) + ") order by id;"),
        "1|alice|70.00", "3|carol|75.00", "4|dave|20.00");
    t.note("alice has 70.00: the balance at that time, from the last tick at or before it.");
    Instant instant;
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select " + literal(at) + "::timestamptz")) {
      rs.next();
      instant = rs.getObject(1, OffsetDateTime.class).toInstant();
    }
    ResultTable viaJava;
    try (PreparedStatement ps = gnomon.asOf(instant).prepare(c, "public.account", "id = 1")) {
      try (ResultSet rs = ps.executeQuery()) {
        viaJava = ResultTable.of(rs);
      }
    }
    t.java("gnomon.asOf(Instant.parse(\"" + instant + "\")).prepare(connection, \"public.account\", \"id = 1\")",
        viaJava.lines());
    expect("the Java read as of " + instant, viaJava, "1|alice|70.00");
    gnomon.stopTicker();
  }

  private void checkpoint(Connection c, String before) throws SQLException {
    t.step("Checkpoints");
    t.say("A read far in the past rolls back every change made since. A checkpoint materialises the table as it is "
        + "now; older reads then roll back from it instead of from the live table, and return exactly the same rows.");
    t.sql(c, "select gnomon.checkpoint('public.account');");
    t.sql(c, "select checkpoint_id, row_count from gnomon.checkpoint;");
    t.sql(c, "update account set balance = 999.00 where id = 3;");
    expect("the read as of the coordinate through the checkpoint",
        t.sql(c, "select * from gnomon_t.account_as_of(" + literal(before) + ") order by id;"),
        AT_START.toArray(String[]::new));
    t.note("The same rows as in step 4, now rebuilt from the checkpoint.");
  }

  private void errors(Connection c, Gnomon gnomon, String before) throws SQLException {
    t.step("Errors say what happened, with a SQLSTATE of their own");
    t.say("Gnomon's errors have SQLSTATEs of class GN (the list is in table gnomon.error_code) and a hint saying what "
        + "to do. A table without a primary key cannot be tracked:");
    t.sql(c, "create table audit_log (at timestamptz not null default now(), message text);");
    expectState(t.sqlError(c, "select gnomon.track('public.audit_log');").getSQLState(), "GN003");
    t.say("From Java, the same error is an unchecked exception named for it:");
    try {
      gnomon.track("public.audit_log");
      throw new DemoCheckFailed("tracking a table without a primary key succeeded from Java");
    } catch (NoPrimaryKeyException e) {
      t.java("gnomon.track(\"public.audit_log\");",
          List.of("|  Exception " + e.getClass().getName() + ": " + e.getMessage().replace("\n", "\n|  "),
              "-- e.sqlState() ==> \"" + e.sqlState() + "\"").stream()
              .flatMap(s -> Arrays.stream(s.split("\n")))
              .toList());
      expectState(e.sqlState(), "GN003");
    }
    t.say("Schema changes on a tracked table are guarded: ADD COLUMN is followed, a change that would break its "
        + "history is refused.");
    expectState(t.sqlError(c, "alter table account drop column owner;").getSQLState(), "GN006");
    t.sql(c, "alter table account add column note text;");
    expect("the read as of the coordinate after ADD COLUMN",
        t.sql(c, "select * from gnomon_t.account_as_of(" + literal(before) + ") order by id;"),
        AT_START.stream().map(r -> r + "|").toArray(String[]::new));
    t.note("The past rows have the new column too, empty: it did not exist then.");
  }

  /** Waits until the ticker has committed {@code n} more ticks (so the last of them saw every earlier commit). */
  private static void awaitTicks(Connection c, int n) throws SQLException {
    long start = maxTick(c);
    long deadline = System.nanoTime() + TICK_WAIT.toNanos();
    while (maxTick(c) < start + n) {
      if (System.nanoTime() > deadline) {
        throw new DemoCheckFailed("the ticker recorded no tick in " + TICK_WAIT.toSeconds() + " s");
      }
      try {
        Thread.sleep(TICK.toMillis() / 4);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new DemoCheckFailed("interrupted while waiting for the ticker");
      }
    }
  }

  private static long maxTick(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select coalesce(max(tick_id), 0) from gnomon.tick")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void expect(String what, ResultTable actual, String... rows) {
    List<String> got = actual.rows().stream()
        .map(r -> r.stream().map(v -> v == null ? "" : v).collect(Collectors.joining("|")))
        .toList();
    if (!got.equals(List.of(rows))) {
      throw new DemoCheckFailed(what + " returned " + got + ", expected " + List.of(rows));
    }
  }

  private static void expectState(String actual, String expected) {
    if (!expected.equals(actual)) {
      throw new DemoCheckFailed("expected SQLSTATE " + expected + ", got " + actual);
    }
  }

  /** A SQL string literal. */
  static String literal(String value) {
    return "'" + value.replace("'", "''") + "'";
  }

  private static String javaString(String value) {
    return "\"" + value.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  /** A result the demo checks is wrong: Gnomon misbehaved, and the demo fails with what it expected. */
  static final class DemoCheckFailed extends IllegalStateException {
    DemoCheckFailed(String message) {
      super(message);
    }
  }
}
