package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.internal.Errors;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * Gnomon's settings (gnomon.*) are checked where Gnomon reads them: a value it does not accept fails with GN041, naming
 * the setting, the value and what it accepts, and does nothing (a negative tick retention deleted every tick but the
 * last).
 */
class SettingsIT extends GnomonIT {

  /** Runs the statements after setting one setting in the same session; returns the error, or null. */
  private SQLException withSetting(String setting, String value, String... statements) throws SQLException {
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("select set_config('" + setting + "', '" + value + "', false)");
      for (String s : statements) {
        st.execute(s);
      }
      return null;
    } catch (SQLException e) {
      return e;
    }
  }

  private void refused(String setting, String value, String accepts, String statement) throws SQLException {
    SQLException e = withSetting(setting, value, statement);
    assertTrue(e != null, setting + " = " + value + " was accepted by " + statement);
    assertEquals("GN041", e.getSQLState(), setting + " = " + value + ": " + e.getMessage());
    GnomonException t = Errors.translate(statement, e);
    assertEquals("GN041", t.sqlState());
    String m = t.getMessage();
    assertTrue(m.contains(setting) && m.contains("'" + value + "'") && m.contains(accepts), m);
  }

  @Test
  void tickRetentionMustBeAPositiveInterval() throws Exception {
    for (int i = 0; i < 3; i++) {
      sql("insert into gnomon.tick (tick_at, snapshot) values (now() - interval '1 hour', pg_current_snapshot())");
    }
    sql("select gnomon.tick()");
    refused("gnomon.tick_retention", "banana", "an interval longer than zero", "select gnomon.maintain()");
    refused("gnomon.tick_retention", "-1 days", "an interval longer than zero", "select gnomon.maintain()");
    refused("gnomon.tick_retention", "0", "an interval longer than zero", "select gnomon.maintain()");
    assertEquals("4", one("select count(*) from gnomon.tick"), "a refused retention deletes no tick");
    assertEquals(null, withSetting("gnomon.tick_retention", "2 days", "select gnomon.maintain()"));
    assertEquals("4", one("select count(*) from gnomon.tick"), "ticks an hour old are kept for two days");
    assertEquals(null, withSetting("gnomon.tick_retention", "30 minutes", "select gnomon.maintain()"));
    assertEquals("1", one("select count(*) from gnomon.tick"), "ticks an hour old are past 30 minutes");
  }

  @Test
  void historyPartitionRowsMustBeAPositiveWholeNumber() throws Exception {
    sql("create table sp (id int primary key)");
    gnomon().track("sp");
    for (String bad : new String[] {"-1", "0", "banana", "1.5"}) {
      refused("gnomon.history_partition_rows", bad, "a whole number of rows, at least 1", "select gnomon.maintain()");
    }
    assertEquals("1", one("select count(*) from pg_inherits where inhparent = 'gnomon_t.sp_h'::regclass"));
    assertEquals(null, withSetting("gnomon.history_partition_rows", "5000000", "select gnomon.maintain()"));
    // empty is unset: the default
    assertEquals(null, withSetting("gnomon.history_partition_rows", "", "select gnomon.maintain()"));
  }

  @Test
  void feedBatchesMustBeABoolean() throws Exception {
    sql("create table sf (id int primary key)");
    gnomon().track("sf");
    sql("select gnomon.feed_register('sfc', array['sf'])", "insert into sf values (1)", "select gnomon.tick()");
    refused("gnomon.feed_batches", "banana", "on or off", "select * from gnomon.feed_read('sfc', 10)");
    assertEquals(null, withSetting("gnomon.feed_batches", "off", "select * from gnomon.feed_read('sfc', 10)"));
    assertEquals(null, withSetting("gnomon.feed_batches", "on", "select * from gnomon.feed_read('sfc', 10)"));
  }

  @Test
  void mergeDirectMustBeABoolean() throws Exception {
    sql("create table sm (id int primary key, v int)", "insert into sm values (1, 1)");
    gnomon().track("sm");
    sql("select gnomon.branch_create('smb')");
    onBranch("smb", "update sm set v = 2 where id = 1");
    refused("gnomon.merge_direct", "banana", "on or off", "select gnomon.merge('smb', 'main')");
    assertEquals("1", one("select v from sm where id = 1"));
    assertEquals(null, withSetting("gnomon.merge_direct", "off", "select gnomon.merge('smb', 'main')"));
    assertEquals("2", one("select v from sm where id = 1"));
  }

  @Test
  void theListNamesEverySettingGnomonReads() throws Exception {
    assertEquals("gnomon.feed_batches=on,gnomon.feed_page_c=on,gnomon.history_partition_rows=10000000,"
        + "gnomon.merge_direct=on,"
        + "gnomon.tick_retention=7 days",
        one("select string_agg(name || '=' || gnomon.setting(name), ',' order by name) from gnomon.settings()"));
    SQLException e = withSetting("gnomon.tick_retention", "1 day", "select gnomon.setting('gnomon.nonsense')");
    assertEquals("GN021", e == null ? null : e.getSQLState());
    assertThrows(InvalidArgumentException.class, () -> sqlTranslated("select gnomon.setting('gnomon.nonsense')"));
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("set gnomon.tick_retention = '30 days'");
      try (ResultSet rs = st.executeQuery("select gnomon.setting('gnomon.tick_retention')")) {
        rs.next();
        assertEquals("30 days", rs.getString(1));
      }
    }
  }
}
