package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.internal.Errors;
import io.gnomon.sql.GnomonSqlState;
import java.io.StringReader;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;

/** Tracking: what is installed, the write path's versions, and the cases that must keep working. */
class TrackingIT extends GnomonIT {

  @Test
  void columnsNamedLikeGnomonsOwnAreRefused() throws Exception {
    sql("create table rz (id int primary key, g_lvl int)");
    java.sql.SQLException track = assertThrows(java.sql.SQLException.class, () -> sql("select gnomon.track('rz')"));
    assertEquals("GN004", track.getSQLState(), track.getMessage());
    assertTrue(track.getMessage().contains("its column g_lvl has a name Gnomon reserves"), track.getMessage());
    sql("alter table rz rename column g_lvl to lvl");
    gnomon().track("rz");
    java.sql.SQLException add = assertThrows(java.sql.SQLException.class,
        () -> sql("alter table rz add column g_branch int"));
    assertEquals("GN006", add.getSQLState(), add.getMessage());
    assertEquals("0", one("select count(*) from pg_attribute where attrelid = 'rz'::regclass and attname = 'g_branch'"));
  }

  @Test
  void addColumnWithADefaultThatGivesEachRowItsOwnValueIsRefused() throws Exception {
    sql("create table vd (id int primary key, v int)", "insert into vd select g, 0 from generate_series(1, 20) g");
    gnomon().track("vd");
    String before = coordinate();
    sql("update vd set v = 1 where id <= 10");
    // random() rewrote every row with a value of its own: as of `before`, ten rows showed it and ten NULL
    UnsupportedDdlException e = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("alter table vd add column r double precision default random()"));
    assertTrue(e.getMessage().contains("adding column r to tracked table public.vd with the default random()"), e.getMessage());
    assertTrue(e.getMessage().contains("update public.vd set r = random()"), e.getMessage());
    assertEquals("0", one("select count(*) from pg_attribute where attrelid = 'vd'::regclass and attname = 'r'"));
    // the way the hint gives: every past read shows NULL, the update's values from then on
    sql("alter table vd add column r double precision", "update vd set r = random()",
        "alter table vd alter column r set default random()");
    assertEquals("20|0", one("select count(*) || '|' || count(r) from gnomon_t.vd_as_of('" + before + "')"));
    assertEquals("20|20", one("select count(*) || '|' || count(r) from gnomon_t.vd_as_of(gnomon.coordinate())"));
    // a constant default, and a volatile one on an empty table, are followed as before
    sql("alter table vd add column k int default 5");
    assertEquals("20|5", one("select count(*) || '|' || min(k) from gnomon_t.vd_as_of('" + before + "')"));
    sql("create table ve (id int primary key)");
    gnomon().track("ve");
    sql("alter table ve add column r double precision default random()", "insert into ve (id) values (1)");
    assertEquals("1", one("select count(r) from gnomon_t.ve_as_of(gnomon.coordinate())"));
  }

  @Test
  void addingAnIdentityOrStoredGeneratedColumnToATableWithRowsIsRefused() throws Exception {
    sql("create table gc (id int primary key, v int)", "insert into gc select g, 0 from generate_series(1, 20) g");
    gnomon().track("gc");
    String before = coordinate();
    sql("update gc set v = 1 where id <= 10");
    // each existing row got a value of its own, the versions none: as of `before`, the ten rows unchanged since showed
    // their new value and the ten rebuilt from history NULL
    UnsupportedDdlException generated = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("alter table gc add column twice int generated always as (id * 2) stored"));
    assertTrue(generated.getMessage().startsWith("adding column twice generated always as ((id * 2)) stored to tracked table "
        + "public.gc, which gives each existing row a value of its own, is not supported"), generated.getMessage());
    UnsupportedDdlException identity = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("alter table gc add column n bigint generated always as identity"));
    assertTrue(identity.getMessage().contains("adding column n generated always as identity to tracked table public.gc"),
        identity.getMessage());
    assertTrue(identity.getMessage().contains("alter table public.gc add column n bigint; update public.gc set n = ...;"),
        identity.getMessage());
    assertEquals("0", one("select count(*) from pg_attribute where attrelid = 'gc'::regclass and attname in ('twice', 'n')"));
    // the identity the hint's way: past reads show NULL, later ones the values the versioned update gave
    sql("alter table gc add column n bigint", "update gc set n = id",
        "alter table gc alter column n set not null, alter column n add generated by default as identity (start with 100)",
        "insert into gc (id, v) values (21, 0)");
    assertEquals("20|0", one("select count(*) || '|' || count(n) from gnomon_t.gc_as_of('" + before + "')"));
    assertEquals("21|100", one("select count(*) || '|' || max(n) from gnomon_t.gc_as_of(gnomon.coordinate())"));
    // on an empty table there are no existing rows to fill: followed
    sql("create table ge (id int primary key)");
    gnomon().track("ge");
    sql("alter table ge add column twice int generated always as (id * 2) stored",
        "alter table ge add column n bigint generated always as identity", "insert into ge (id) values (4)");
    assertEquals("8|1", one("select twice || '|' || n from gnomon_t.ge_as_of(gnomon.coordinate())"));
  }

  /** The rows of a table as of now, "id:v,..." in key order, read through an instance's Java API. */
  private String readThrough(Gnomon g, String table) throws SQLException {
    StringBuilder out = new StringBuilder();
    try (Connection c = connect();
        PreparedStatement ps = g.asOf(g.coordinate()).prepare(c, table, "");
        ResultSet rs = ps.executeQuery()) {
      while (rs.next()) {
        out.append(out.length() == 0 ? "" : ",").append(rs.getInt("id")).append(':').append(rs.getInt("v"));
      }
    }
    return out.toString();
  }

  @Test
  void trackedSeesUntrackTrackAgainAndAddColumnByAnotherInstance() throws Exception {
    // both tables' generated objects want the base name x_y: the one tracked second gets another
    sql("create schema x", "create table x.y (id int primary key, v int)", "create table public.x_y (id int primary key, v int)",
        "insert into x.y values (1, 10)", "insert into public.x_y values (2, 20)");
    Gnomon mine = gnomon();
    mine.track("public.x_y");
    mine.track("x.y");
    TrackedTable before = mine.tracked("public.x_y");
    assertEquals("x_y_as_of", before.asOfFunction());
    assertEquals("2:20", readThrough(mine, "public.x_y"));
    try (Gnomon other = Gnomon.open(dataSource())) {
      other.untrack("public.x_y", true);
      other.untrack("x.y", true);
      other.track("x.y");
      other.track("public.x_y");
      assertEquals("x_y_as_of", other.tracked("x.y").asOfFunction());
    }
    // the instance that had read public.x_y before sees its new tracking: with the row it kept, it read x.y's history,
    // whose generated objects now have the names public.x_y's had
    TrackedTable after = mine.tracked("public.x_y");
    assertNotEquals(before.id(), after.id());
    assertNotEquals("x_y_as_of", after.asOfFunction());
    assertEquals("2:20", readThrough(mine, "public.x_y"));
    assertEquals("1:10", readThrough(mine, "x.y"));
    // ADD COLUMN by another session: the same tracking, and reads show the column
    sql("alter table public.x_y add column note text default 'n'");
    assertEquals(after, mine.tracked("public.x_y"));
    try (Connection c = connect();
        PreparedStatement ps = mine.asOf(mine.coordinate()).prepare(c, "public.x_y", "");
        ResultSet rs = ps.executeQuery()) {
      assertTrue(rs.next());
      assertEquals("n", rs.getString("note"));
    }
    // untracked by another session: the Gnomon error, not a call of a function that is gone
    sql("select gnomon.untrack('public.x_y')");
    assertThrows(TableNotTrackedException.class, () -> mine.tracked("public.x_y"));
    assertThrows(TableNotTrackedException.class, () -> mine.asOf(mine.coordinate()).selectSql("public.x_y"));
  }

  @Test
  void attachingOrDetachingAPartitionThatHoldsRowsIsRefused() throws Exception {
    sql("create table pt (id int primary key, v int) partition by range (id)",
        "create table pt_1 partition of pt for values from (0) to (100)",
        "create table pt_9 partition of pt for values from (900) to (1000) partition by range (id)",
        "create table pt_90 partition of pt_9 for values from (900) to (950)",
        "insert into pt select g, 0 from generate_series(1, 10) g");
    gnomon().track("pt");
    String before = coordinate();
    sql("create table pt_2 (id int primary key, v int)", "insert into pt_2 values (150, 0)",
        "create table pt_95 (id int primary key, v int)", "insert into pt_95 values (960, 0)");
    // the attached rows had no versions: as of `before` they showed, as if they had always been there
    UnsupportedDdlException attach = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("alter table pt attach partition pt_2 for values from (100) to (200)"));
    assertTrue(attach.getMessage().startsWith(
        "attaching partition pt_2, which holds rows, to tracked table public.pt is not supported"), attach.getMessage());
    // a level below the tracked table too
    UnsupportedDdlException below = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("alter table pt_9 attach partition pt_95 for values from (950) to (1000)"));
    assertTrue(below.getMessage().startsWith("attaching partition pt_95, which holds rows, to tracked table public.pt"),
        below.getMessage());
    // the detached rows left without versions: as of `before` they were gone
    UnsupportedDdlException detach = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("alter table pt detach partition pt_1"));
    assertTrue(detach.getMessage().startsWith(
        "detaching partition pt_1, which holds rows, from tracked table public.pt is not supported"), detach.getMessage());
    assertEquals("10", one("select count(*) from pt"));
    // the hints' way: empty partitions come and go, the rows move through the table, versioned
    sql("delete from pt_2", "alter table pt attach partition pt_2 for values from (100) to (200)",
        "insert into pt values (150, 1)");
    String attached = coordinate();
    sql("delete from pt where id >= 100", "alter table pt detach partition pt_2",
        "alter table pt add column note text"); // other ALTER TABLEs pass as before
    assertEquals("10", one("select count(*) from gnomon_t.pt_as_of('" + before + "')"));
    assertEquals("11", one("select count(*) from gnomon_t.pt_as_of('" + attached + "')"));
    assertEquals("10", one("select count(*) from gnomon_t.pt_as_of(gnomon.coordinate())"));
  }

  /** A tracked table pq partitioned at two levels: pq_1 (ids 0-99) and pq_2 (100-199) holding pq_21 (100-149). */
  private void partitioned() throws SQLException {
    sql("create table pq (id int primary key, v int) partition by range (id)",
        "create table pq_1 partition of pq for values from (0) to (100)",
        "create table pq_2 partition of pq for values from (100) to (200) partition by range (id)",
        "create table pq_21 partition of pq_2 for values from (100) to (150)",
        "insert into pq select g, 0 from generate_series(1, 120) g");
    gnomon().track("pq");
  }

  @Test
  void writesAndTruncatesNamingAPartitionAreVersioned() throws Exception {
    partitioned();
    String before = coordinate();
    // PostgreSQL fires a statement trigger only on the table a statement names: these left no version, so as of
    // `before` rows 1, 2 and 101 showed their new state or were missing, and pq_21's truncated rows were gone
    sql("update pq_1 set v = 1 where id in (1, 2)", "delete from pq_21 where id = 101", "insert into pq_2 values (149, 5)");
    String written = coordinate();
    sql("truncate pq_21");
    assertEquals("120|0", one("select count(*) || '|' || sum(v) from gnomon_t.pq_as_of('" + before + "')"));
    assertEquals("120|7", one("select count(*) || '|' || sum(v) from gnomon_t.pq_as_of('" + written + "')"));
    assertEquals("99", one("select count(*) from gnomon_t.pq_as_of(gnomon.coordinate())"));
    // a TRUNCATE of the table fires the table's trigger and every partition's: each row gets one delete version (99,
    // after the 21 of pq_21 and the one of the delete)
    sql("truncate pq");
    assertEquals("121", one("select count(*) from gnomon_t.pq_h where g_op = 'D'"));
    assertEquals("120|7", one("select count(*) || '|' || sum(v) from gnomon_t.pq_as_of('" + written + "')"));
    // a partition made after tracking writes versions too; one detached (empty) writes no more
    sql("create table pq_3 partition of pq for values from (200) to (300)", "insert into pq_3 values (250, 1)",
        "delete from pq_3", "alter table pq detach partition pq_3", "insert into pq_3 values (251, 1)");
    assertEquals("2", one("select count(*) from gnomon_t.pq_h where id in (250, 251)"));
    assertEquals("0", one("select count(*) from pg_trigger where tgrelid = 'pq_3'::regclass"));
    // through the table, as before: one version per row, not one more from the partition's triggers
    sql("insert into pq values (0, 0), (140, 0)", "update pq set v = 3", "delete from pq");
    assertEquals("2|2|2", one("select count(*) filter (where g_op = 'I') || '|' || count(*) filter (where g_op = 'U') || '|' "
        + "|| count(*) filter (where g_op = 'D') from gnomon_t.pq_h where id in (0, 140)"));
    // a partition without one of them is GN072 at start-up, and re-creating the triggers gives it back
    sql("drop trigger gnomon_update on pq_21");
    WriteTriggersMissingException missing = assertThrows(WriteTriggersMissingException.class,
        () -> sqlTranslated("select gnomon.check_triggers()"));
    assertTrue(missing.getMessage().contains("pq_21, a partition of public.pq (gnomon_update)"), missing.getMessage());
    sql("select gnomon.install_triggers(table_id) from gnomon.tracked_table where table_name = 'pq'", "select gnomon.check_triggers()");
    // untracking takes the partitions' triggers too
    gnomon().untrack("pq", true);
    assertEquals("0", one("select count(*) from pg_trigger where tgname like 'gnomon%' and tgrelid in "
        + "('pq'::regclass, 'pq_1'::regclass, 'pq_2'::regclass, 'pq_21'::regclass)"));
  }

  @Test
  void droppingOrConcurrentlyDetachingAPartitionThatHoldsRowsIsRefused() throws Exception {
    partitioned();
    String before = coordinate();
    // the rows left without versions: as of `before` they were gone
    UnsupportedDdlException drop = assertThrows(UnsupportedDdlException.class, () -> sqlTranslated("drop table pq_1"));
    assertTrue(drop.getMessage().startsWith(
        "dropping partition public.pq_1, which holds rows, of tracked table public.pq is not supported"), drop.getMessage());
    assertTrue(drop.getMessage().contains("delete from public.pq where"), drop.getMessage());
    UnsupportedDdlException below = assertThrows(UnsupportedDdlException.class, () -> sqlTranslated("drop table pq_2"));
    assertTrue(below.getMessage().startsWith("dropping partition public.pq_21, which holds rows"), below.getMessage());
    // DETACH ... CONCURRENTLY commits the detach before the command ends: refused when it starts
    UnsupportedDdlException detach = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("alter table pq detach partition pq_1 concurrently"));
    assertTrue(detach.getMessage().startsWith(
        "detaching partition pq_1, which holds rows, from tracked table public.pq is not supported"), detach.getMessage());
    UnsupportedDdlException quoted = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("ALTER TABLE IF EXISTS ONLY \"public\".pq DETACH PARTITION public.\"pq_2\" CONCURRENTLY;"));
    assertTrue(quoted.getMessage().startsWith("detaching partition pq_2, which holds rows"), quoted.getMessage());
    UnsupportedDdlException unread = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("/* moving */ alter table pq detach partition pq_1 concurrently"));
    assertTrue(unread.getMessage().startsWith("Gnomon cannot tell which partition this DETACH PARTITION ... CONCURRENTLY"),
        unread.getMessage());
    assertEquals("120", one("select count(*) from pq"));
    // the hints' way: the rows go through the table, versioned, then the empty partitions go
    sql("delete from pq where id >= 100", "alter table pq detach partition pq_2 concurrently", "delete from pq where id < 50",
        "delete from pq_1", "drop table pq_1");
    assertEquals("0", one("select count(*) from pg_trigger where tgrelid in ('pq_2'::regclass, 'pq_21'::regclass)"));
    assertEquals("120", one("select count(*) from gnomon_t.pq_as_of('" + before + "')"));
    assertEquals("0", one("select count(*) from gnomon_t.pq_as_of(gnomon.coordinate())"));
    // other tables are dropped and detached as before
    sql("create table plain_p (id int) partition by list (id)", "create table plain_p1 partition of plain_p for values in (1)",
        "insert into plain_p values (1)", "alter table plain_p detach partition plain_p1 concurrently", "drop table plain_p1");
  }

  /** Runs a statement on a connection of its own, in the background; its result is null or its translated failure. */
  private CompletableFuture<RuntimeException> inBackground(Connection c, String statement) {
    return CompletableFuture.supplyAsync(() -> {
      try (Statement st = c.createStatement()) {
        st.execute(statement);
        return null;
      } catch (SQLException e) {
        return Errors.translate("running " + statement, e);
      }
    });
  }

  /** Waits, with a deadline instead of a sleep, until a backend waits for a lock (or a virtual xid). */
  @Test
  void aRowWrittenWhileADropOfItsPartitionWaitsIsSeen() throws Exception {
    partitioned();
    sql("delete from pq where id < 100");
    String before = coordinate();
    try (Connection writer = connect(); Connection dropper = connect()) {
      writer.setAutoCommit(false);
      try (Statement st = writer.createStatement()) {
        st.execute("insert into pq values (5, 1)");
      }
      // pq_1 is empty to every other session until the writer commits: the DROP reads it once it holds the lock the
      // writer holds, not before (then it dropped the row the writer committed meanwhile, unversioned)
      int dropperPid = pid(dropper);
      CompletableFuture<RuntimeException> drop = inBackground(dropper, "drop table pq_1");
      awaitLockWait(dropperPid, drop);
      writer.commit();
      RuntimeException refused = drop.get(60, TimeUnit.SECONDS);
      assertTrue(refused instanceof UnsupportedDdlException, String.valueOf(refused));
      assertTrue(refused.getMessage().startsWith(
          "dropping partition public.pq_1, which holds rows, of tracked table public.pq is not supported"),
          refused.getMessage());
    }
    assertEquals("5:1", one("select string_agg(id || ':' || v, ',') from pq_1"));
    String written = coordinate();
    // a DROP of several tables, quoted and qualified, locks them all the same way; the empty one goes
    sql("delete from pq where id = 5", "drop table if exists public.\"pq_1\", pq_nothing cascade;");
    assertEquals("21", one("select count(*) from gnomon_t.pq_as_of('" + before + "')"));
    assertEquals("22", one("select count(*) from gnomon_t.pq_as_of('" + written + "')"));
    assertEquals("21", one("select count(*) from gnomon_t.pq_as_of(gnomon.coordinate())"));
  }

  @Test
  void aConcurrentDetachLeftPendingIsCompletedOnlyOnceItsRowsAreVersioned() throws Exception {
    partitioned();
    sql("delete from pq where id < 100");
    String emptied = coordinate();
    int detacherPid;
    try (Connection old = connect(); Connection detacher = connect()) {
      // a transaction whose snapshot still sees pq_1 in the table: the detach waits for it, and its insert through
      // the table lands in pq_1 meanwhile (versioned, since pq_1 is still a partition)
      old.setAutoCommit(false);
      try (Statement st = old.createStatement()) {
        st.execute("set transaction isolation level repeatable read");
        st.execute("select count(*) from pq");
      }
      detacherPid = pid(detacher);
      CompletableFuture<RuntimeException> detach = inBackground(detacher,
          "alter table pq detach partition pq_1 concurrently");
      awaitLockWait(detacherPid, detach);
      try (Statement st = old.createStatement()) {
        st.execute("insert into pq values (7, 7)");
      }
      old.commit();
      // refused when it ends: its first transaction has committed, so pq_1 stays pending, out of the table's reads
      RuntimeException refused = detach.get(60, TimeUnit.SECONDS);
      assertTrue(refused instanceof UnsupportedDdlException, String.valueOf(refused));
      assertTrue(refused.getMessage().startsWith(
          "detaching partition pq_1, which holds rows, from tracked table public.pq is not supported"), refused.getMessage());
      assertTrue(refused.getMessage().contains("delete from pq_1"), refused.getMessage());
    }
    assertEquals("t", one("select inhdetachpending from pg_inherits where inhrelid = 'pq_1'::regclass"));
    assertEquals("0", one("select count(*) from pq where id < 100"));
    // another ALTER TABLE of the table leaves the pending partition its write triggers
    sql("alter table pq alter column v set default 0");
    assertEquals("4", one("select count(*) from pg_trigger where tgrelid = 'pq_1'::regclass and tgname in "
        + "('gnomon_insert', 'gnomon_update', 'gnomon_delete', 'gnomon_truncate')"));
    // FINALIZE completes it only once it is empty: it was not guarded at all
    UnsupportedDdlException finalize = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("alter table pq detach partition pq_1 finalize"));
    assertTrue(finalize.getMessage().startsWith("detaching partition pq_1, which holds rows"), finalize.getMessage());
    // the hint's way: its rows leave through the partition, versioned, then the detach completes and the triggers go
    sql("delete from pq_1", "alter table pq detach partition pq_1 finalize", "insert into pq_1 values (8, 8)");
    assertEquals("0", one("select count(*) from pg_trigger where tgrelid = 'pq_1'::regclass"));
    assertEquals("D|I|D", one("select string_agg(g_op::text, '|' order by g_vid) from gnomon_t.pq_h where id = 7"));
    assertEquals("0", one("select count(*) from gnomon_t.pq_h where id = 8 and g_op = 'I'"));
    assertEquals("21|21", one("select (select count(*) from gnomon_t.pq_as_of('" + emptied + "')) || '|' || "
        + "(select count(*) from gnomon_t.pq_as_of(gnomon.coordinate()))"));
  }

  @Test
  void aDetachLeftPendingBeforeTrackingIsCompletedWithItsRows() throws Exception {
    sql("create table pr (id int primary key, v int) partition by range (id)",
        "create table pr_1 partition of pr for values from (0) to (100)",
        "create table pr_2 partition of pr for values from (100) to (200)",
        "insert into pr select g, 0 from generate_series(1, 150) g");
    try (Connection old = connect(); Connection detacher = connect()) {
      old.setAutoCommit(false);
      try (Statement st = old.createStatement()) {
        st.execute("set transaction isolation level repeatable read");
        st.execute("select count(*) from pr");
      }
      int detacherPid = pid(detacher);
      CompletableFuture<RuntimeException> detach = inBackground(detacher,
          "alter table pr detach partition pr_2 concurrently");
      awaitLockWait(detacherPid, detach);
      sql("select pg_cancel_backend(" + detacherPid + ")");
      assertTrue(detach.get(60, TimeUnit.SECONDS) != null, "the detach was interrupted");
      old.rollback();
    }
    assertEquals("t", one("select inhdetachpending from pg_inherits where inhrelid = 'pr_2'::regclass"));
    gnomon().track("pr");
    // its rows were never the tracked table's: pr_2 got no write triggers, and FINALIZE completes with them
    assertEquals("0", one("select count(*) from pg_trigger where tgrelid = 'pr_2'::regclass and tgname like 'gnomon%'"));
    sql("alter table pr detach partition pr_2 finalize");
    assertEquals("51", one("select count(*) from pr_2"));
    assertEquals("99", one("select count(*) from gnomon_t.pr_as_of(gnomon.coordinate())"));
  }

  @Test
  void inheritanceChildrenOfATrackedTableAreRefused() throws Exception {
    sql("create table inh (id int primary key, v text)", "insert into inh values (1, 'a')");
    gnomon().track("inh");
    String before = coordinate();
    // reads of inh include a child's rows, which had no versions: as of `before` they showed all the same
    UnsupportedDdlException created = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("create table inh_c () inherits (inh)"));
    assertTrue(created.getMessage().startsWith(
        "making inh_c an inheritance child of tracked table public.inh is not supported"), created.getMessage());
    sql("create table inh_o (id int primary key, v text)", "insert into inh_o values (2, 'o')");
    UnsupportedDdlException altered = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("alter table inh_o inherit inh"));
    assertTrue(altered.getMessage().startsWith("making inh_o an inheritance child of tracked table public.inh"),
        altered.getMessage());
    assertEquals("1:a", rows("inh", before));
    assertEquals("1:a", rows("inh", coordinate()));
    // a table with children cannot be tracked; other tables inherit and are altered as before
    sql("create table par (id int primary key, v text)", "create table par_c () inherits (par)",
        "alter table inh_o add column note text", "alter table par_c no inherit par", "alter table par_c inherit par");
    UnsupportedRelationException tracked = assertThrows(UnsupportedRelationException.class, () -> gnomon().track("par"));
    assertTrue(tracked.getMessage().contains("public.par cannot be tracked: tables inherit from it (par_c)")
        || tracked.getMessage().contains("par cannot be tracked: tables inherit from it (par_c)"), tracked.getMessage());
  }

  @Test
  void aColumnDroppedWithAnObjectItDependsOnIsRefused() throws Exception {
    sql("create type mood as enum ('a', 'b')",
        "create function twice(int) returns int immutable language sql as 'select $1 * 2'",
        "create table dep (id int primary key, m mood, d int generated always as (twice(id)) stored)",
        "insert into dep (id, m) values (1, 'a')");
    gnomon().track("dep");
    // the cascade took the column from the table and its history, the generated objects with it, and every later
    // write failed
    UnsupportedDdlException type = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("drop type mood cascade"));
    assertTrue(type.getMessage().startsWith("dropping column m of tracked table public.dep is not supported"),
        type.getMessage());
    UnsupportedDdlException function = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("drop function twice(int) cascade"));
    assertTrue(function.getMessage().startsWith("dropping column d of tracked table public.dep is not supported"),
        function.getMessage());
    sql("update dep set m = 'b'");
    assertEquals("1:a:2", one("select id || ':' || m || ':' || d from gnomon_t.dep_h where g_op = 'U'"));
    // other drops pass as before
    sql("create type unused as enum ('x')", "drop type unused cascade", "create index dep_m on dep (m)", "drop index dep_m");
  }

  @Test
  void unloggedTrackedTablesAndPartitionsAreRefused() throws Exception {
    // a crash empties an unlogged table without a version, and as-of reads take unchanged rows from the table itself
    sql("create unlogged table ul (id int primary key)");
    UnsupportedRelationException track = assertThrows(UnsupportedRelationException.class, () -> gnomon().track("ul"));
    assertTrue(track.getMessage().contains("ul cannot be tracked: it is an unlogged table"), track.getMessage());
    assertTrue(track.getMessage().contains("alter table ul set logged;"), track.getMessage());
    partitioned();
    sql("create table lg (id int primary key)");
    gnomon().track("lg");
    UnsupportedDdlException table = assertThrows(UnsupportedDdlException.class, () -> sqlTranslated("alter table lg set unlogged"));
    assertTrue(table.getMessage().startsWith("an unlogged lg is not supported while public.lg is tracked"), table.getMessage());
    UnsupportedDdlException part = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("alter table pq_21 set unlogged"));
    assertTrue(part.getMessage().startsWith("an unlogged pq_21 is not supported while public.pq is tracked"), part.getMessage());
    UnsupportedDdlException created = assertThrows(UnsupportedDdlException.class,
        () -> sqlTranslated("create unlogged table pq_3 partition of pq for values from (200) to (300)"));
    assertTrue(created.getMessage().startsWith("an unlogged pq_3 is not supported"), created.getMessage());
    assertEquals("p|p", one("select string_agg(relpersistence::text, '|' order by relname) from pg_class where relname in ('lg', 'pq_21') and relnamespace = 'public'::regnamespace"));
  }

  @Test
  void aDisabledWriteTriggerIsWarnedAboutAndRefusedAtStartUp() throws Exception {
    sql("create table dt (id int primary key, v int)");
    gnomon().track("dt");
    try (Connection c = connect(); Statement st = c.createStatement()) {
      st.execute("alter table dt disable trigger gnomon_update");
      StringBuilder warnings = new StringBuilder();
      for (java.sql.SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
        warnings.append(w.getMessage()).append('\n');
      }
      assertTrue(warnings.toString().contains("writes to tracked table public.dt (gnomon_update) now leave no history"),
          warnings.toString());
    }
    java.sql.SQLException check = assertThrows(java.sql.SQLException.class, () -> sql("select gnomon.check_triggers()"));
    assertEquals(GnomonSqlState.TRIGGERS_MISSING.sqlState(), check.getSQLState());
    assertTrue(check.getMessage().contains("disabled") && check.getMessage().contains("public.dt (gnomon_update)"),
        check.getMessage());
    WriteTriggersMissingException open = assertThrows(WriteTriggersMissingException.class, () -> Gnomon.open(dataSource()));
    assertTrue(open.getMessage().contains("public.dt (gnomon_update)"), open.getMessage());
    sql("alter table dt disable trigger all");
    assertEquals("public.dt (gnomon_insert, gnomon_update, gnomon_delete, gnomon_truncate"
        + (cWritePath() ? "" : ", gnomon_key_change") + ")", one("select gnomon.disabled_write_triggers()"));
    sql("alter table dt enable trigger all", "select gnomon.check_triggers()");
    assertEquals(null, one("select gnomon.disabled_write_triggers()"));
    // a replica trigger fires only where session_replication_role = replica: the application's writes left no history
    sql("alter table dt enable replica trigger gnomon_insert");
    assertEquals("public.dt (gnomon_insert)", one("select gnomon.disabled_write_triggers()"));
    // ALWAYS fires in every session
    sql("alter table dt enable always trigger gnomon_insert", "select gnomon.check_triggers()");
    sql("alter table dt enable trigger gnomon_insert");
    Gnomon.open(dataSource()).close();
    sql("update dt set v = 1");
  }

  @Test
  void trackingIsConstantTimeAndRowsGetTheirBaselineOnFirstWrite() throws Exception {
    sql("create table pre (id int primary key, v int)");
    sql("insert into pre select g, g from generate_series(1, 5000) g");
    TrackedTable t = gnomon().track("public.pre");
    assertEquals(List.of("id"), t.keyColumns());
    assertEquals("0", one("select count(*) from gnomon_t.pre_h"), "tracking wrote no per-row history");
    String before = coordinate();
    sql("update pre set v = -1 where id = 7");
    assertEquals("1", one("select count(*) from gnomon_t.pre_h"));
    assertEquals("U|7", one("select g_op::text || '|' || v from gnomon_t.pre_h"), "the version holds the row from before");
    assertEquals("7", one("select v from gnomon_t.pre_as_of('" + before + "') where id = 7"));
    assertEquals("-1", one("select v from gnomon_t.pre_as_of(gnomon.coordinate()) where id = 7"));
    assertEquals("5000", one("select count(*) from gnomon_t.pre_as_of('" + before + "')"));
  }

  @Test
  void primaryKeyChangedByUpdateReadsAsDeleteAndInsert() throws Exception {
    sql("create table pk (id int primary key, v text)");
    gnomon().track("pk");
    sql("insert into pk values (1, 'a'), (2, 'b')");
    String before = coordinate();
    sql("update pk set id = 10 where id = 1");
    sql("update pk set id = id + 100"); // every key changes in one statement
    assertEquals("1:a,2:b", rows("pk", before));
    assertEquals("102:b,110:a", rows("pk", coordinate()));
  }

  @Test
  void keysShiftedSwappedOrMovedAcrossPartitionsReplayExactly() throws Exception {
    sql("create table sh (id int, v text, primary key (id) deferrable initially deferred)");
    gnomon().track("sh");
    sql("insert into sh values (1, 'a'), (2, 'b'), (3, 'c')");
    String c1 = coordinate();
    sql("update sh set id = id + 1"); // every key but one is both an old and a new key
    String c2 = coordinate();
    sql("update sh set id = case id when 2 then 3 when 3 then 2 else id end"); // a swap
    assertEquals("1:a,2:b,3:c", rows("sh", c1));
    assertEquals("2:a,3:b,4:c", rows("sh", c2));
    assertEquals("2:b,3:a,4:c", rows("sh", coordinate()));

    sql("create table pt (id int primary key, v text) partition by range (id)",
        "create table pt_low partition of pt for values from (0) to (100)",
        "create table pt_high partition of pt for values from (100) to (200)");
    gnomon().track("pt");
    sql("insert into pt values (1, 'x'), (2, 'y')");
    String p1 = coordinate();
    sql("update pt set id = id + 150 where id = 1"); // row movement: DELETE + INSERT underneath
    assertEquals("1:x,2:y", rows("pt", p1));
    assertEquals("2:y,151:x", rows("pt", coordinate()));
  }

  /** The key-change row trigger's form: AFTER UPDATE OF the key, or of any column ("" when the table has none). */
  private String keyChangeTriggerForm(String table) throws SQLException {
    return one("select coalesce((select case when cardinality(tgattr::int2[]) > 0 then 'of key' else 'every update' end"
        + " from pg_trigger where tgrelid = '" + table + "'::regclass and tgname = 'gnomon_key_change'), '')");
  }

  @Test
  void aKeyChangedByABeforeTriggerReplaysExactly() throws Exception {
    // an UPDATE that assigns no key column can still change the key, through a row-level BEFORE UPDATE trigger
    sql("create table bk (id int primary key, v int)",
        "insert into bk select g, g from generate_series(1, 3) g",
        "create function bk_shift() returns trigger language plpgsql as $$ begin"
            + " if new.v = 99 then new.id := new.id + 1000; end if; return new; end $$");
    gnomon().track("bk");
    assertEquals(cWritePath() ? "" : "of key", keyChangeTriggerForm("bk"), "no BEFORE trigger: only UPDATEs naming the key");
    sql("create trigger bk_shift before update on bk for each row execute function bk_shift()");
    assertEquals(cWritePath() ? "" : "every update", keyChangeTriggerForm("bk"), "the guard follows CREATE TRIGGER");
    String c0 = coordinate();
    sql("update bk set v = 99 where id = 1");
    String c1 = coordinate();
    assertEquals("1:1,2:2,3:3", rows("bk", c0));
    assertEquals("2:2,3:3,1001:99", rows("bk", c1));
    assertEquals("D|1,I|1001", one("select string_agg(g_op::text || '|' || id, ',' order by g_vid) from gnomon_t.bk_h"));

    sql("drop trigger bk_shift on bk");
    assertEquals(cWritePath() ? "" : "of key", keyChangeTriggerForm("bk"), "the guard follows DROP TRIGGER");
    sql("update bk set v = 99 where id = 2", "update bk set id = 20 where id = 3");
    assertEquals("2:2,3:3,1001:99", rows("bk", c1));
    assertEquals("2:99,20:3,1001:99", rows("bk", coordinate()));

    // a table that has such a trigger when it is tracked; the key-change trigger keeps its enabled state
    sql("create table bk2 (id int primary key, v int)", "insert into bk2 values (1, 1)",
        "create trigger bk2_shift before update on bk2 for each row execute function bk_shift()");
    gnomon().track("bk2");
    assertEquals(cWritePath() ? "" : "every update", keyChangeTriggerForm("bk2"));
    if (!cWritePath()) {
      sql("alter table bk2 enable always trigger gnomon_key_change", "drop trigger bk2_shift on bk2");
      assertEquals("of key", keyChangeTriggerForm("bk2"));
      assertEquals("A", one("select tgenabled from pg_trigger where tgrelid = 'bk2'::regclass and tgname = 'gnomon_key_change'"));
    }
    String d0 = coordinate();
    sql("update bk2 set id = 5");
    assertEquals("1:1", rows("bk2", d0));
    assertEquals("5:1", rows("bk2", coordinate()));

    // a role that may create triggers on the table without owning it: the guard re-creates Gnomon's as the catalog's owner
    sql("create role bk_trigger_maker", "grant usage on schema public to bk_trigger_maker",
        "grant trigger on bk to bk_trigger_maker", "grant execute on function bk_shift() to bk_trigger_maker");
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("set role bk_trigger_maker");
      st.execute("create trigger bk_shift_again before update on bk for each row execute function bk_shift()");
    }
    assertEquals(cWritePath() ? "" : "every update", keyChangeTriggerForm("bk"));
    sql("drop trigger bk_shift_again on bk", "drop owned by bk_trigger_maker", "drop role bk_trigger_maker");
    assertEquals(cWritePath() ? "" : "of key", keyChangeTriggerForm("bk"));

    // made where the guard did not run: Gnomon.open's check (gnomon.check_triggers) refuses it until it is refreshed
    sql("alter event trigger gnomon_trigger_guard disable",
        "create trigger bk_shift_unseen before update on bk for each row execute function bk_shift()",
        "alter event trigger gnomon_trigger_guard enable");
    if (!cWritePath()) {
      SQLException narrow = assertThrows(SQLException.class, () -> sql("select gnomon.check_triggers()"));
      assertEquals("GN072", narrow.getSQLState());
      assertTrue(narrow.getMessage().contains("public.bk"), narrow.getMessage());
      sql("select gnomon.refresh_key_change_trigger(table_id) from gnomon.tracked_table where relid = 'bk'::regclass");
    }
    sql("select gnomon.check_triggers()");
    assertEquals(cWritePath() ? "" : "every update", keyChangeTriggerForm("bk"));
  }

  @Test
  void keyChangesInsideNestedStatementsOnTheSameTableReplayExactly() throws Exception {
    // a user's row trigger that updates the same table: statements at two trigger depths interleave
    sql("create table nest (id int primary key, v int)",
        "insert into nest select g, 0 from generate_series(1, 4) g",
        "insert into nest values (1000, 0), (2000, 0)",
        "create function nest_touch() returns trigger language plpgsql as $$ begin"
            + " if new.id = 101 then update nest set v = v + 1 where id = 1000; end if;" // outer changes a key
            + " if new.id = 2 then update nest set id = 2001 where id = 2000; end if;" // inner changes a key
            + " return null; end $$",
        "create trigger nest_touch after update on nest for each row when (pg_trigger_depth() < 1)"
            + " execute function nest_touch()");
    gnomon().track("nest");
    String c0 = coordinate();
    sql("update nest set id = id + 100 where id = 1");
    String c1 = coordinate();
    sql("update nest set v = 7 where id = 2");
    assertEquals("1:0,2:0,3:0,4:0,1000:0,2000:0", rows("nest", c0));
    assertEquals("2:0,3:0,4:0,101:0,1000:1,2000:0", rows("nest", c1));
    assertEquals("2:7,3:0,4:0,101:0,1000:1,2001:0", rows("nest", coordinate()));
    assertEquals("U|1000,D|1,I|101,D|2000,I|2001,U|2", // a nested statement ends before the outer one
        one("select string_agg(g_op::text || '|' || id, ',' order by g_vid) from gnomon_t.nest_h where g_op <> 'I' or id > 4"));
  }

  @Test
  void upsertCopySavepointsAndTwoPhaseCommit() throws Exception {
    sql("create table w (id int primary key, v int)");
    gnomon().track("public.w");
    sql("insert into w values (1, 1)");
    String c1 = coordinate();
    sql("insert into w values (1, 5), (2, 2) on conflict (id) do update set v = excluded.v");
    try (Connection c = connect()) {
      ((PGConnection) c.unwrap(PGConnection.class)).getCopyAPI().copyIn("copy w from stdin", new StringReader("3\t3\n4\t4\n"));
    }
    String c2 = coordinate();
    try (Connection c = connect()) {
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute("update w set v = 100 where id = 1");
        st.execute("savepoint s");
        st.execute("update w set v = 200 where id = 2");
        st.execute("delete from w where id = 3");
        st.execute("rollback to savepoint s");
      }
      c.commit();
    }
    String c3 = coordinate();
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("begin");
      st.execute("update w set v = 44 where id = 4");
      st.execute("prepare transaction 'gnomon_2pc'");
    }
    String prepared = coordinate();
    sql("commit prepared 'gnomon_2pc'");
    assertEquals("1:1", rows("w", c1));
    assertEquals("1:5,2:2,3:3,4:4", rows("w", c2));
    assertEquals("1:100,2:2,3:3,4:4", rows("w", c3));
    assertEquals("1:100,2:2,3:3,4:4", rows("w", prepared), "a prepared transaction is invisible until committed");
    assertEquals("1:100,2:2,3:3,4:44", rows("w", coordinate()));
    assertEquals("0", one("select count(*) from gnomon_t.w_h where v = 200 or (id = 3 and g_op = 'D')"),
        "a rolled-back savepoint leaves no version");
  }

  @Test
  void quotedLongNamesCompositeKeysAndEveryColumnType() throws Exception {
    sql("create type mood as enum ('sad', 'ok', 'happy')");
    sql("create domain posint as int not null check (value > 0)");
    sql("create schema \"Odd Schema\"");
    String name = "\"Odd Schema\".\"" + "T".repeat(63) + "\"";
    sql("create table " + name + " (k1 int, \"K 2\" text, j jsonb, arr int[], num numeric(10,2), m mood, d posint,"
        + " big text, n int, primary key (k1, \"K 2\"))");
    TrackedTable t = gnomon().track(name);
    assertEquals(List.of("k1", "K 2"), t.keyColumns());
    assertTrue(t.asOfFunction().getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= 63);
    sql("insert into " + name + " values (1, 'a', '{\"x\": [1, 2]}', '{1,2}', 12.50, 'ok', 5, repeat('z', 200000), null)");
    String before = coordinate();
    sql("update " + name + " set j = '{\"x\": 3}', arr = null, num = 1, m = 'happy', d = 9, big = 'short', n = 1");
    String replay = "select j::text || '|' || arr::text || '|' || num || '|' || m || '|' || d || '|' || length(big)"
        + " || '|' || coalesce(n::text, 'null') from " + t.asOfFunctionSql() + "('" + before + "')";
    assertEquals("{\"x\": [1, 2]}|{1,2}|12.50|ok|5|200000|null", one(replay), "TOASTed and typed values replay whole");
    assertEquals("1", one("select count(*) from " + t.asOfFunctionSql() + "(gnomon.coordinate()) where \"K 2\" = 'a'"));
  }

  @Test
  void theWriteTriggerResolvesNoNameThroughTheCallersSearchPath() throws Exception {
    // the trigger function is SECURITY DEFINER: a name it resolved through the caller's search_path would run the
    // caller's function with the definer's rights. Here every shadowing function raises, so a write that used one fails.
    sql("create table sp (id int primary key, v text)", "insert into sp values (1, 'a'), (2, 'b')");
    gnomon().track("sp");
    sql("create schema evil",
        "create function evil.pg_current_xact_id() returns xid8 language plpgsql as $$ begin raise 'evil xid'; end $$",
        "create function evil.nextval(regclass) returns bigint language plpgsql as $$ begin raise 'evil nextval'; end $$",
        "create function evil.current_setting(text, boolean) returns text language plpgsql as $$ begin raise 'evil setting'; end $$",
        "create function evil.text_eq(text, text) returns boolean language plpgsql as $$ begin raise 'evil ='; end $$",
        "create operator evil.= (leftarg = text, rightarg = text, function = evil.text_eq)");
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("set search_path = evil, public, pg_catalog");
      st.execute("insert into sp values (3, 'c')");
      st.execute("update sp set v = 'x' where id = 1");
      st.execute("update sp set id = 20 where id = 2"); // the key-pairing path
      var rs = st.executeQuery("select current_setting('search_path')");
      rs.next();
      assertEquals("evil, public, pg_catalog", rs.getString(1), "the pairing gives the caller's search_path back");
      st.execute("delete from sp where id = 3");
      st.execute("truncate sp");
    }
    assertEquals("I:3,U:1,D:2,I:20,D:3,D:1,D:20",
        one("select string_agg(g_op::text || ':' || id, ',' order by g_xid, g_op, id) from gnomon_t.sp_h"));
    assertEquals("0", one("select count(*) from gnomon_t.sp_h where g_xid < (select track_xid from gnomon.tracked_table"
        + " where table_name = 'sp')"), "every version has its writer's xid");
  }

  @Test
  void truncateIsRecordedSoPastReadsStillSeeTheRows() throws Exception {
    sql("create table tr (id int primary key, v int)");
    gnomon().track("tr");
    sql("insert into tr select g, g from generate_series(1, 3) g");
    String before = coordinate();
    sql("truncate tr");
    assertEquals("1:1,2:2,3:3", rows("tr", before));
    assertEquals("", rows("tr", coordinate()));
  }

  @Test
  void addColumnIsFollowedAndOtherDdlIsRefused() throws Exception {
    sql("create table ddl (id int primary key, v int)");
    gnomon().track("ddl");
    sql("insert into ddl values (1, 1)");
    String before = coordinate();
    sql("update ddl set v = 2");
    sql("alter table ddl add column flag int default 7");
    sql("alter table ddl add column note text");
    sql("update ddl set note = 'x', v = 3");
    assertEquals("1|7|null", one("select v || '|' || flag || '|' || coalesce(note, 'null') from gnomon_t.ddl_as_of('" + before + "')"),
        "as of before the change, the new column shows the value existing rows got");
    assertEquals("3|7|x", one("select v || '|' || flag || '|' || note from gnomon_t.ddl_as_of(gnomon.coordinate())"));
    for (String ddl : List.of(
        "alter table ddl drop column note",
        "alter table ddl rename column v to w",
        "alter table ddl alter column v type bigint",
        "alter table ddl rename to ddl2",
        "alter schema public rename to elsewhere",
        "alter table ddl drop constraint ddl_pkey")) {
      UnsupportedDdlException e = assertThrows(UnsupportedDdlException.class, () -> sqlTranslated(ddl), ddl);
      assertEquals("GN006", e.sqlState());
      assertTrue(e.getMessage().contains("ddl"), e.getMessage());
      assertTrue(e.getMessage().contains("Hint:"), "the message says what to do: " + e.getMessage());
    }
    assertEquals("3", one("select v from ddl"), "refused DDL changed nothing");
    sql("create index on ddl (v)"); // harmless DDL is allowed
  }

  @Test
  void badInputGetsAClearErrorAndLeavesNothingInstalled() throws Exception {
    sql("create table nopk (a int)");
    sql("create view vw as select 1 as a");
    sql("create foreign data wrapper gnomon_test_fdw");
    sql("create server gnomon_test_server foreign data wrapper gnomon_test_fdw");
    sql("create foreign table ft (a int) server gnomon_test_server");
    sql("create table js (id int primary key, doc json)");
    sql("create table parted (id int primary key) partition by range (id)");
    sql("create table parted_1 partition of parted for values from (0) to (10)");
    sql("create table ok (id int primary key)");
    gnomon().track("ok");
    String objectsBefore = one("select count(*) from pg_class where relnamespace = 'gnomon_t'::regnamespace");
    assertThrows(NoPrimaryKeyException.class, () -> gnomon().track("nopk"));
    assertThrows(UnsupportedRelationException.class, () -> gnomon().track("vw"));
    assertThrows(UnsupportedRelationException.class, () -> gnomon().track("ft"));
    assertThrows(UnsupportedRelationException.class, () -> gnomon().track("parted_1"));
    UnsupportedColumnTypeException json = assertThrows(UnsupportedColumnTypeException.class, () -> gnomon().track("js"));
    assertTrue(json.getMessage().contains("jsonb"), json.getMessage());
    sql("create table reserved (id int primary key, g_vid int)");
    UnsupportedRelationException reserved = assertThrows(UnsupportedRelationException.class, () -> gnomon().track("reserved"));
    assertTrue(reserved.getMessage().contains("g_vid"), reserved.getMessage());
    assertThrows(TableAlreadyTrackedException.class, () -> gnomon().track("ok"));
    assertThrows(TableNotFoundException.class, () -> gnomon().track("no_such_table"));
    // malformed names are GN007 too, an empty one GN021, and Gnomon's own tables GN004 (not raw 42602 / 42601)
    assertThrows(TableNotFoundException.class, () -> gnomon().track("\"x"));
    assertThrows(TableNotFoundException.class, () -> gnomon().track("a.b.c.d"));
    assertThrows(InvalidArgumentException.class, () -> gnomon().track(" "));
    assertThrows(UnsupportedRelationException.class, () -> gnomon().track("gnomon.error_code"));
    assertThrows(TableNotTrackedException.class, () -> gnomon().untrack("nopk", false));
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("create temporary table tmp (id int primary key)");
      var e = assertThrows(java.sql.SQLException.class, () -> st.execute("select gnomon.track('tmp')"));
      assertEquals("GN004", e.getSQLState());
    }
    assertEquals(objectsBefore, one("select count(*) from pg_class where relnamespace = 'gnomon_t'::regnamespace"),
        "a refused track leaves nothing half-installed");
    assertEquals("1", one("select count(*) from gnomon.tracked_table"));
    gnomon().track("parted"); // a partitioned table is tracked at its root
  }

  @Test
  void untrackKeepsOrDropsTheHistory() throws Exception {
    sql("create table u1 (id int primary key)");
    sql("create table u2 (id int primary key)");
    gnomon().track("u1");
    gnomon().track("u2");
    sql("insert into u1 values (1)");
    sql("insert into u2 values (1)");
    gnomon().untrack("u1", false);
    gnomon().untrack("u2", true);
    assertEquals("1", one("select count(*) from pg_class where relnamespace = 'gnomon_t'::regnamespace"
        + " and relname like 'u1_h_untracked%' and relkind = 'p'"), "u1's history is kept, renamed");
    assertEquals("0", one("select count(*) from pg_class where relnamespace = 'gnomon_t'::regnamespace and relname like 'u2%'"));
    assertEquals("0", one("select count(*) from pg_trigger where tgrelid in ('u1'::regclass, 'u2'::regclass)"));
    sql("insert into u1 values (2)"); // the table works as before
    gnomon().track("u1"); // and can be tracked again
  }
}
