package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Test;

/**
 * An application's role that owns its tables but not the catalog (an administrator installed Gnomon and tracked them).
 *
 * <p>A role that owns a tracked table but not Gnomon's objects for it (another role ran gnomon.track: the usual split
 * between an administrator and an application whose migrations alter its own tables) can still ADD COLUMN and add
 * CHECK constraints: the event trigger follows the change as the catalog's owner. The value a new column gives the
 * versions written before it is the one PostgreSQL computed for the table's rows as the application's role, not the
 * default's expression evaluated again as the catalog's owner. Its ticker's upkeep (gnomon.maintain) runs as the
 * catalog's owner, with the settings the database gives, not the session's.
 */
class ApplicationRoleIT extends GnomonIT {
  @Test
  void theTablesOwnerAltersATableAnotherRoleTracked() throws Exception {
    String app = "app_" + Long.toHexString(System.nanoTime());
    sql("create role " + app, "grant usage on schema gnomon to " + app, "grant create on schema public to " + app,
        "create table owned (k int primary key, v int)", "insert into owned values (1, 1), (2, 2)",
        "alter table owned owner to " + app);
    gnomon().track("public.owned");
    sql("update owned set v = 10 where k = 1", "select gnomon.branch_create('ob')");
    assertEquals("postgres", one("select r.rolname from pg_class c join pg_roles r on r.oid = c.relowner"
        + " where c.oid = 'gnomon_t.owned_h'::regclass"), "the history belongs to the role that tracked the table");

    as(app, "create function public.who_adds() returns text stable language sql as 'select current_user::text'",
        "alter table owned add constraint v_positive check (v > 0)",
        "alter table owned add column w int default 7",
        "alter table owned add column added_by text default who_adds()",
        "insert into owned values (3, 3, 3, 'x')");

    // the branch table holds the new constraint, the history the new columns
    assertEquals("1", one("select count(*) from pg_constraint where conrelid = 'gnomon_t.owned_b'::regclass"
        + " and conname = 'v_positive'"));
    // the version written before the columns existed shows what the table's rows got, computed as the application
    assertEquals("1 1 7 " + app, one("select concat_ws(' ', k, v, w, added_by) from gnomon_t.owned_h where g_op = 'U'"));
    assertEquals("1 10 7 " + app + ";2 2 7 " + app + ";3 3 3 x",
        one("select string_agg(concat_ws(' ', k, v, w, added_by), ';' order by k) from owned"));

    // a branch write meets the constraint the owner added
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("set role " + app);
      st.execute("select gnomon.branch_use('ob')");
      SQLException e = assertThrows(SQLException.class, () -> st.execute("update owned set v = -1 where k = 2"));
      assertEquals("23514", e.getSQLState(), e.getMessage());
    }

    // a default whose value would run a domain's check again when read from text is refused, and nothing changes
    as(app, "create domain public.positive as int check (value > 0)",
        "create type public.boxed as (n public.positive)");
    SQLException refused = assertThrows(SQLException.class,
        () -> as(app, "alter table owned add column b public.boxed default row(1)::public.boxed"));
    assertEquals("GN006", refused.getSQLState(), refused.getMessage());
    assertEquals("0", one("select count(*) from pg_attribute where attrelid = 'owned'::regclass and attname = 'b'"));
    // without a default it is followed
    as(app, "alter table owned add column b public.boxed");
    assertEquals("1", one("select count(*) from pg_attribute where attrelid = 'gnomon_t.owned_h'::regclass"
        + " and attname = 'b'"));
  }

  @Test
  void itsTickerRunsUpkeepWithTheDatabasesSettings() throws Exception {
    String app = "app_" + Long.toHexString(System.nanoTime());
    String db = one("select current_database()");
    sql("create role " + app, "create table kept (k int primary key, v int)",
        "insert into kept select g, g from generate_series(1, 100) g", "alter table kept owner to " + app);
    gnomon().track("public.kept");
    as(app, "update kept set v = v + 1");
    sql("analyze gnomon_t.kept_h", "select gnomon.tick()", "select gnomon.tick()",
        "update gnomon.tick set tick_at = tick_at - interval '3 days' where tick_id = (select min(tick_id) from gnomon.tick)");
    String ticks = one("select count(*) from gnomon.tick");
    String partitions = "select count(*) from pg_inherits where inhparent = 'gnomon_t.kept_h'::regclass";
    assertEquals("1", one(partitions));

    // the session's values are not the application's to choose: nothing rolled, no tick deleted
    // (as a session of the role, as an application's pool logs in: upkeep tells the catalog's owner by session_user)
    String login = "set session authorization " + app;
    assertEquals("0", as(app, login, "set gnomon.history_partition_rows = 1", "set gnomon.tick_retention = '1 second'",
        "select gnomon.maintain()"));
    assertEquals("1", one(partitions));
    assertEquals(ticks, one("select count(*) from gnomon.tick"));
    // a value the database sets is read
    sql("alter database \"" + db + "\" set gnomon.history_partition_rows = 1");
    try {
      assertEquals("1", as(app, login, "select gnomon.maintain()"));
      assertEquals("2", one(partitions));
    } finally {
      sql("alter database \"" + db + "\" reset gnomon.history_partition_rows");
    }
    // the catalog's owner still reads its session's (the tick is 3 days old: kept by the default retention of 7)
    assertEquals("0", one("select gnomon.maintain()"));
    assertEquals(ticks, one("select count(*) from gnomon.tick"));
    try (var c = connect(); var st = c.createStatement()) {
      st.execute("set gnomon.tick_retention = '1 day'");
      st.execute("select gnomon.maintain()");
    }
    assertEquals(String.valueOf(Integer.parseInt(ticks) - 1), one("select count(*) from gnomon.tick"));
    // a bad database value is refused as a bad session value is
    sql("alter database \"" + db + "\" set gnomon.tick_retention = 'banana'");
    try {
      SQLException e = assertThrows(SQLException.class, () -> as(app, login, "select gnomon.maintain()"));
      assertEquals("GN041", e.getSQLState(), e.getMessage());
    } finally {
      sql("alter database \"" + db + "\" reset gnomon.tick_retention");
    }
  }

  @Test
  void typesThatRunCodeOnInput() throws Exception {
    sql("create domain checked_int as int check (value > 0)", "create domain plain_int as int",
        "create type holds_checked as (n checked_int)", "create type holds_plain as (n plain_int)",
        "create type checked_range as range (subtype = checked_int)");
    String q = "select gnomon.type_runs_code_on_input('%s'::regtype)";
    assertEquals("f", one(String.format(q, "int")));
    assertEquals("f", one(String.format(q, "checked_int")), "a domain at the top is read as its base type");
    assertEquals("f", one(String.format(q, "plain_int[]")));
    assertEquals("t", one(String.format(q, "checked_int[]")));
    assertEquals("t", one(String.format(q, "holds_checked")));
    assertEquals("t", one(String.format(q, "holds_checked[]")));
    assertEquals("f", one(String.format(q, "holds_plain")));
    assertEquals("t", one(String.format(q, "checked_range")));
  }
}
