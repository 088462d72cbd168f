package io.gnomon;

import io.gnomon.internal.Errors;
import io.gnomon.sql.Catalog;
import io.gnomon.testkit.GnomonDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import javax.sql.DataSource;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Base of gnomon-core's integration tests: each test gets a fresh database cloned from a template with the Gnomon
 * catalog installed, on the real PostgreSQL the testkit provides, and an open {@link Gnomon}.
 */
abstract class GnomonIT {
  /** The template every test database is cloned from: the catalog, installed once per JVM. */
  static final String TEMPLATE = "gnomon_catalog_v" + Catalog.VERSION;

  @RegisterExtension final GnomonDatabase db = GnomonDatabase.fromTemplate(TEMPLATE, Catalog::install);

  private Gnomon gnomon;

  Gnomon gnomon() {
    if (gnomon == null) {
      gnomon = Gnomon.open(db.dataSource());
    }
    return gnomon;
  }

  /**
   * Whether this class writes history through the optional C module's trigger ({@code gnomon.use_c_module(true)}),
   * enabled before each test, instead of the generated PL/pgSQL function. Subclasses named {@code …CIT} run a whole
   * test class again that way.
   */
  boolean cWritePath() {
    return false;
  }

  @BeforeEach
  void chooseWritePath() throws SQLException {
    if (cWritePath()) {
      sql("select gnomon.use_c_module(true, '" + cLibrary() + "')");
    }
  }

  /**
   * The C module built by gnomon-c ({@code gnomon.c.library}, set by the Maven build), as an absolute path the test
   * server loads; a missing file fails the test (a skipped C path would be a silent red build).
   */
  static String cLibrary() {
    String path = System.getProperty("gnomon.c.library");
    if (path == null || path.isBlank()) {
      throw new AssertionError("-Dgnomon.c.library is not set; run the tests through Maven, which builds gnomon-c first");
    }
    Path p = Path.of(path).toAbsolutePath().normalize();
    if (!Files.isReadable(p)) {
      throw new AssertionError(p + " does not exist: build it with `make -C gnomon-c` (or mvn install -pl gnomon-c)");
    }
    return p.toString();
  }

  /** Tracked tables a test moved off the C write path on purpose (null: all of them); see {@link #cPathWasUsed}. */
  private java.util.Set<String> offCPath = new java.util.HashSet<>();

  /** Says that a test moved these tables (none named: every table) off the C write path on purpose. */
  void leaveCPath(String... tables) {
    if (tables.length == 0) {
      offCPath = null;
    } else if (offCPath != null) {
      offCPath.addAll(java.util.List.of(tables));
    }
  }

  /**
   * On the C write path, every tracked table's triggers must call {@code gnomon.write_c()} when the test ends:
   * otherwise a *CIT class would pass while testing the PL/pgSQL triggers again.
   */
  @AfterEach
  void cPathWasUsed() throws SQLException {
    if (!cWritePath() || offCPath == null) {
      return;
    }
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(
            "select t.table_name, coalesce(string_agg(g.tgname || '=' || g.tgfoid::regprocedure::text, ',' order by g.tgname), '')"
                + " from gnomon.tracked_table t left join pg_trigger g on g.tgrelid = t.relid"
                + " and g.tgname = any (gnomon.write_trigger_names(true)) group by t.table_name order by 1")) {
      while (rs.next()) {
        if (offCPath.contains(rs.getString(1))) {
          continue;
        }
        org.junit.jupiter.api.Assertions.assertEquals(
            "gnomon_delete=gnomon.write_c(),gnomon_insert=gnomon.write_c(),gnomon_truncate=gnomon.write_c(),"
                + "gnomon_update=gnomon.write_c()",
            rs.getString(2),
            "the write triggers of tracked table " + rs.getString(1) + " do not all call gnomon.write_c()");
      }
    }
  }

  @AfterEach
  void closeGnomon() {
    if (gnomon != null) {
      gnomon.close();
    }
  }

  DataSource dataSource() {
    return db.dataSource();
  }

  Connection connect() {
    return db.connect();
  }

  /** Runs statements in autocommit mode. */
  void sql(String... statements) throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    }
  }

  /** Runs statements on one connection after selecting a branch, as a psql user would. */
  void onBranch(String branch, String... statements) throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("select gnomon.branch_use('" + branch + "')");
      for (String s : statements) {
        st.execute(s);
      }
    }
  }

  /**
   * Runs statements as {@code role} ({@code set role}) on one connection; returns the first column of the last one's
   * first row, or null.
   */
  String as(String role, String... statements) throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("set role " + role);
      String last = null;
      for (String s : statements) {
        if (st.execute(s)) {
          try (ResultSet rs = st.getResultSet()) {
            last = rs.next() ? rs.getString(1) : null;
          }
        } else {
          last = null;
        }
      }
      return last;
    }
  }

  /** Runs a statement, translating a failure as the API does. */
  void sqlTranslated(String statement) {
    try {
      sql(statement);
    } catch (SQLException e) {
      throw Errors.translate("running " + statement, e);
    }
  }

  /** The first column of the first row, as text. */
  String one(String query) throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      if (!rs.next()) {
        throw new AssertionError("no row from " + query);
      }
      return rs.getString(1);
    }
  }

  /** The first column of the first row of a query on a statement of the caller's (its session's settings), as text. */
  static String oneOn(Statement st, String query) throws SQLException {
    try (ResultSet rs = st.executeQuery(query)) {
      if (!rs.next()) {
        throw new AssertionError("no row from " + query);
      }
      return rs.getString(1);
    }
  }

  String coordinate() throws SQLException {
    return one("select gnomon.coordinate()");
  }

  /** The pid of a connection's backend. */
  static int pid(Connection c) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select pg_backend_pid()")) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** Waits until a backend waits for a lock, failing when what runs there ends first or after a minute. */
  void awaitLockWait(int pid, java.util.concurrent.CompletableFuture<?> running) throws Exception {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (!"Lock".equals(one("select coalesce(wait_event_type, '') from pg_stat_activity where pid = " + pid))) {
      if (running.isDone()) {
        throw new AssertionError("it did not wait: " + running.get());
      }
      if (System.nanoTime() > deadline) {
        throw new AssertionError("it never waited for a lock");
      }
      Thread.onSpinWait();
    }
  }

  /** A two-column (id, v) table as of a coordinate, as "id:v,id:v" in key order. */
  String rows(String table, String coordinate) throws SQLException {
    return one("select coalesce(string_agg(id || ':' || v, ',' order by id), '') from gnomon_t." + table
        + "_as_of('" + coordinate + "')");
  }
}
