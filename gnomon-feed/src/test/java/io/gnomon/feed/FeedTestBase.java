package io.gnomon.feed;

import io.gnomon.Gnomon;
import io.gnomon.sql.Catalog;
import io.gnomon.testkit.GnomonDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Base of gnomon-feed's integration tests: each test class gets a fresh database cloned from a template with the
 * Gnomon catalog installed (tests of a class use tables and consumers of their own), an open {@link Gnomon} and a
 * {@link Feed}.
 */
abstract class FeedTestBase {
  static final String TEMPLATE = "gnomon_catalog_v" + Catalog.VERSION;

  @RegisterExtension static final GnomonDatabase db = GnomonDatabase.fromTemplate(TEMPLATE, Catalog::install);

  private ReusingDataSource pool;
  private Gnomon gnomon;
  private Feed feed;

  /** A pooled data source for the test's database (connections are reused: opening one is slow). */
  DataSource dataSource() {
    if (pool == null) {
      pool = new ReusingDataSource(db.dataSource());
    }
    return pool;
  }

  Gnomon gnomon() {
    if (gnomon == null) {
      gnomon = Gnomon.open(dataSource());
    }
    return gnomon;
  }

  Feed feed() {
    if (feed == null) {
      feed = Feed.open(gnomon());
    }
    return feed;
  }

  @AfterEach
  void closeGnomon() {
    if (gnomon != null) {
      gnomon.close();
    }
    if (pool != null) {
      pool.close();
    }
  }

  /** A connection from the pool; close it to give it back. */
  Connection connect() {
    try {
      return dataSource().getConnection();
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
  }

  /** Runs statements in autocommit mode. */
  void sql(String... statements) throws SQLException {
    try (Connection c = connect()) {
      sql(c, statements);
    }
  }

  /**
   * A seeded test's seed: -Dgnomon.feed.seed when given, else a fresh one; printed with {@code test}'s name and how to
   * run it again with the same seed.
   */
  static long seed(String test) {
    long seed = Long.getLong("gnomon.feed.seed", System.nanoTime());
    System.out.println(test + " seed=" + seed + " (rerun with -Dgnomon.feed.seed=" + seed + ")");
    return seed;
  }

  static void sql(Connection c, String... statements) throws SQLException {
    try (Statement st = c.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    }
  }

  /** The first column of the first row, as text. */
  String one(String query) throws SQLException {
    try (Connection c = connect()) {
      return one(c, query);
    }
  }

  static String one(Connection c, String query) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      if (!rs.next()) {
        throw new AssertionError("no row from " + query);
      }
      return rs.getString(1);
    }
  }

  /** The first column of every row, as text. */
  List<String> column(String query) throws SQLException {
    List<String> out = new ArrayList<>();
    try (Connection c = connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      while (rs.next()) {
        out.add(rs.getString(1));
      }
    }
    return out;
  }

  /** Records a tick: the changes committed before it become visible to consumers. */
  long tick() {
    return gnomon().tick();
  }

  /** Creates {@code name (id int primary key, v text)} and tracks it. */
  void trackedTable(String name) throws SQLException {
    sql("create table " + name + " (id integer primary key, v text)");
    gnomon().track("public." + name);
  }

  /** Polls and acknowledges pages of {@code pageSize} until a page has no events; returns every event. */
  List<ChangeEvent> drain(String consumer, int pageSize) {
    List<ChangeEvent> all = new ArrayList<>();
    while (true) {
      FeedPage page = feed().poll(consumer, pageSize);
      all.addAll(page.events());
      if (page.advances()) {
        feed().ack(consumer, page.position());
      }
      if (page.isEmpty()) {
        return all;
      }
    }
  }

  /** "op:key.id:after.v" (or before.v for a delete) for each event, the shape most assertions compare. */
  static List<String> brief(List<ChangeEvent> events) {
    List<String> out = new ArrayList<>();
    for (ChangeEvent e : events) {
      String v = e.after() != null ? text(e.after().get("v")) : e.before() != null ? text(e.before().get("v")) : "-";
      out.add(e.op().code() + ":" + e.key().get("id").asText() + ":" + v);
    }
    return out;
  }

  private static String text(com.fasterxml.jackson.databind.JsonNode n) {
    return n == null || n.isNull() ? "null" : n.asText();
  }
}
