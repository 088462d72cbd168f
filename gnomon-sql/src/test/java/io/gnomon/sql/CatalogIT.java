package io.gnomon.sql;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.testkit.GnomonDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Installing, upgrading and checking the catalog; each test gets an empty database of its own. */
class CatalogIT {
  @RegisterExtension final GnomonDatabase db = GnomonDatabase.empty();

  @Test
  void installAppliesEveryMigrationOnceAndIsIdempotent() throws SQLException {
    int migrations = MigrationScripts.count();
    assertEquals(migrations, Catalog.install(db.dataSource()), "first install into an empty database");
    assertEquals(0, Catalog.install(db.dataSource()), "second install of a current catalog");

    try (Connection c = db.connect()) {
      // one row per migration, all successful (Flyway adds one more, of type SCHEMA, for creating the schema)
      assertEquals(
          List.of(migrations + " " + migrations),
          rows(
              c,
              "select count(*), count(*) filter (where success) from gnomon.flyway_schema_history"
                  + " where type <> 'SCHEMA'"));
      assertEquals(OptionalInt.of(Catalog.VERSION), Catalog.installedVersion(c));
    }
  }

  @Test
  void anUpgradeGivesThePartitionsOfATableTrackedBeforeTheirWriteTriggers() throws SQLException {
    Catalog.install(db.dataSource());
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      st.execute("create table pt (id int primary key, v int) partition by range (id)");
      st.execute("create table pt_1 partition of pt for values from (0) to (100)");
      st.execute("create table pt_2 partition of pt for values from (100) to (200)");
      st.execute("insert into pt values (1, 0), (150, 0)");
      st.execute("select gnomon.track('pt')");
      // as a catalog before partitions had write triggers left them: a write naming a partition left no version
      for (String part : List.of("pt_1", "pt_2")) {
        for (String trg : List.of("gnomon_insert", "gnomon_update", "gnomon_delete", "gnomon_truncate")) {
          st.execute("drop trigger " + trg + " on " + part);
        }
      }
      st.execute("insert into pt_1 values (2, 0)");
      assertEquals(List.of("0"), rows(c, "select count(*) from gnomon_t.pt_h"));
      // the repeatable migration runs again on an upgrade (its checksum changed)
      st.execute(MigrationScripts.all().get("R__06_ddl_guard.sql"));
      assertEquals(List.of("pt_1 4", "pt_2 4"), rows(c, "select tgrelid::regclass || ' ' || count(*) from pg_trigger"
          + " where tgrelid in ('pt_1'::regclass, 'pt_2'::regclass) and tgparentid = 0 group by tgrelid order by 1"));
      st.execute("insert into pt_2 values (151, 0)");
      st.execute("truncate pt");
      // one insert version, and one delete version per row: the table's TRUNCATE leaves its rows to its partitions
      assertEquals(List.of("D 4", "I 1"), rows(c, "select g_op::text || ' ' || count(*) from gnomon_t.pt_h group by g_op order by 1"));
    }
  }

  @Test
  void anUpgradeGivesWriteFunctionsTheVersionKeyDefaultAndTheKeyChangeTriggerItsColumns() throws SQLException {
    Catalog.install(db.dataSource());
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      st.execute("create table up (id int primary key, v int)");
      st.execute("insert into up values (1, 1), (2, 2)");
      st.execute("select gnomon.track('up')");
      // as an earlier catalog left them: no default on g_vid, a key-change trigger on every UPDATE
      st.execute("alter table gnomon_t.up_h alter column g_vid drop default");
      // (the trigger guard would give it its columns at once)
      st.execute("alter event trigger gnomon_trigger_guard disable");
      st.execute("drop trigger gnomon_key_change on up");
      st.execute("create trigger gnomon_key_change after update on up for each row when (old.id is distinct from new.id)"
          + " execute function gnomon_t.up_key_change()");
      st.execute("alter event trigger gnomon_trigger_guard enable");
      assertEquals(List.of(""), rows(c, "select tgattr::text from pg_trigger"
          + " where tgrelid = 'up'::regclass and tgname = 'gnomon_key_change'"));
      // the repeatable migration runs again on an upgrade (its checksum changed)
      st.execute(MigrationScripts.all().get("R__03_installer.sql"));
      assertEquals(List.of("nextval('gnomon.version_seq'::regclass)"), rows(c, "select pg_get_expr(d.adbin, d.adrelid)"
          + " from pg_attrdef d join pg_attribute a on a.attrelid = d.adrelid and a.attnum = d.adnum"
          + " where d.adrelid = 'gnomon_t.up_h'::regclass and a.attname = 'g_vid'"));
      assertEquals(List.of("1"), rows(c, "select tgattr::text from pg_trigger"
          + " where tgrelid = 'up'::regclass and tgname = 'gnomon_key_change'"));
      st.execute("update up set v = 5 where id = 1");
      st.execute("update up set id = 3 where id = 2");
      assertEquals(List.of("U 1 1", "D 2 2", "I 3 null"), rows(c, "select g_op::text || ' ' || id || ' ' || coalesce(v::text, 'null')"
          + " from gnomon_t.up_h order by g_xid, g_op"));
    }
  }

  @Test
  void installThroughACallersConnectionLeavesItOpen() throws SQLException {
    try (Connection c = db.connect()) {
      assertEquals(MigrationScripts.count(), Catalog.install(c));
      assertFalse(c.isClosed());
      assertEquals(0, Catalog.install(c));
      Catalog.check(c);
    }
  }

  @Test
  void flywayHistoryIsGnomonsOwnAndNothingIsCreatedInPublic() throws SQLException {
    List<String> schemasBefore;
    try (Connection c = db.connect()) {
      schemasBefore = rows(c, "select nspname from pg_namespace order by 1");
      assertEquals(List.of(), objectsIn(c, "public"), "template1 should leave public empty");
    }

    Catalog.install(db.dataSource());

    try (Connection c = db.connect()) {
      assertAll(
          () ->
              assertEquals(
                  List.of("gnomon.flyway_schema_history"),
                  rows(c, "select to_regclass('gnomon.' || " + quote(Catalog.HISTORY_TABLE) + ")::text")),
          () ->
              assertEquals(
                  List.of("<null>"), rows(c, "select to_regclass('public.flyway_schema_history')::text")),
          () -> assertEquals(List.of(), objectsIn(c, "public"), "objects the catalog created in public"),
          () -> {
            List<String> expected = new ArrayList<>(schemasBefore);
            expected.addAll(List.of("gnomon", "gnomon_t"));
            expected.sort(null);
            assertEquals(expected, rows(c, "select nspname from pg_namespace order by 1"), "schemas");
          });
    }
  }

  @Test
  void installNeverTouchesTheHostApplicationsFlywayHistory() throws SQLException {
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      // the host application's own Flyway history, in public, with a shape Flyway would refuse
      st.execute("create table public.flyway_schema_history (app_version text)");
      st.execute("insert into public.flyway_schema_history values ('host app v42')");
    }

    assertEquals(MigrationScripts.count(), Catalog.install(db.dataSource()));

    try (Connection c = db.connect()) {
      assertEquals(List.of("host app v42"), rows(c, "select app_version from public.flyway_schema_history"));
      Catalog.check(c);
    }
  }

  @Test
  void checkPassesOnACurrentCatalog() throws SQLException {
    Catalog.install(db.dataSource());
    try (Connection c = db.connect()) {
      Catalog.check(c);
      assertEquals(OptionalInt.of(Catalog.VERSION), Catalog.installedVersion(c));
    }
  }

  @Test
  void checkWithoutACatalogSaysHowToInstallIt() throws SQLException {
    try (Connection c = db.connect()) {
      assertEquals(OptionalInt.empty(), Catalog.installedVersion(c));
      CatalogVersionException e = assertThrows(CatalogVersionException.class, () -> Catalog.check(c));
      assertEquals(0, e.installedVersion());
      assertEquals(GnomonSqlState.CATALOG_VERSION_MISMATCH, e.state());
      assertTrue(e.getMessage().contains("No Gnomon catalog is installed"), e.getMessage());
      assertTrue(e.getMessage().contains(db.name()), "names the database: " + e.getMessage());
      assertTrue(e.getMessage().contains("install"), "says what to do: " + e.getMessage());
    }
  }

  @Test
  void checkOnANewerCatalogAsksForANewerLibrary() throws SQLException {
    Catalog.install(db.dataSource());
    try (Connection c = db.connect()) {
      replaceCatalogVersion(c, 999);
      assertEquals(OptionalInt.of(999), Catalog.installedVersion(c));
      CatalogVersionException e = assertThrows(CatalogVersionException.class, () -> Catalog.check(c));
      assertEquals(999, e.installedVersion());
      assertEquals(GnomonSqlState.CATALOG_VERSION_MISMATCH, e.state());
      assertTrue(e.getMessage().contains("has version 999"), e.getMessage());
      assertTrue(e.getMessage().contains("needs version " + Catalog.VERSION), e.getMessage());
      assertTrue(e.getMessage().contains(db.name()), "names the database: " + e.getMessage());
      assertTrue(e.getMessage().contains("library of version 999 or later"), e.getMessage());
    }
  }

  @Test
  void checkOnAnOlderCatalogAsksForAnUpgrade() throws SQLException {
    Catalog.install(db.dataSource());
    try (Connection c = db.connect()) {
      replaceCatalogVersion(c, Catalog.VERSION - 1);
      CatalogVersionException e = assertThrows(CatalogVersionException.class, () -> Catalog.check(c));
      assertEquals(Catalog.VERSION - 1, e.installedVersion());
      assertTrue(e.getMessage().contains("Upgrade it"), e.getMessage());
    }
  }

  @Test
  void upgradingFromVersion10KeepsBranchesAndTheirNamesUnique() throws SQLException {
    // version 11 gives branch names the "C" collation (a rewrite of gnomon.branch and its indexes)
    Flyway.configure().configuration(Catalog.flyway(db.dataSource()).getConfiguration()).target("10").load().migrate();
    try (Connection c = db.connect()) {
      assertEquals(OptionalInt.of(10), Catalog.installedVersion(c));
      for (String name : List.of("Zürich", "b1", "a b", "B1")) {
        branchOfMainBeforeVersion12(c, name);
      }
    }
    assertEquals(2, Catalog.install(db.dataSource()), "versions 11 and 12 are new");
    try (Connection c = db.connect()) {
      assertEquals(OptionalInt.of(Catalog.VERSION), Catalog.installedVersion(c));
      assertEquals(List.of("C"), rows(c, "select collation_name from information_schema.columns"
          + " where table_schema = 'gnomon' and table_name = 'branch' and column_name = 'branch_name'"));
      // listed in the database's order, as before the upgrade (C.UTF-8 and C order these four alike)
      assertEquals(List.of("B1", "Zürich", "a b", "b1"), rows(c, "select branch_name from gnomon.branches()"));
      SQLException e = assertThrows(SQLException.class, () -> rows(c, "select gnomon.branch_create('Zürich')"));
      assertEquals("GN051", e.getSQLState(), e.getMessage());
      rows(c, "select gnomon.branch_create('zürich')");
      assertEquals(List.of("5"), rows(c, "select count(*) from gnomon.branches()"));
    }
  }

  @Test
  void upgradingFromVersion11KeepsEveryBranchsPointAndStoresNoneForABranchOfMain() throws SQLException {
    // version 12 leaves chain, snaps and main_snap null for a branch of main: gnomon.branch_point gives {id}, {null}
    // and the cutoff, which the upgrade's rows must read as their stored point did
    Flyway.configure().configuration(Catalog.flyway(db.dataSource()).getConfiguration()).target("11").load().migrate();
    List<String> before;
    try (Connection c = db.connect()) {
      assertEquals(OptionalInt.of(11), Catalog.installedVersion(c));
      branchOfMainBeforeVersion12(c, "m");
      // a branch of m, as catalogs before 12 stored it: its level and m's, m read at its cutoff, main at m's
      rows(c, "insert into gnomon.branch (branch_id, branch_name, parent_id, cutoff, chain, snaps, main_snap, created_xid)"
          + " select x.id, 'c', m.branch_id, pg_current_snapshot(), array[x.id, m.branch_id],"
          + " array[null, pg_current_snapshot()], m.main_snap, pg_current_xact_id()"
          + " from gnomon.branch m, (select nextval('gnomon.branch_seq')::int as id) x where m.branch_name = 'm'"
          + " returning 1");
      before = rows(c, "select b.branch_name || ' ' || (b.chain, b.snaps, b.main_snap)::gnomon.point::text"
          + " from gnomon.branch b order by 1");
    }
    assertEquals(1, Catalog.install(db.dataSource()), "only version 12 is new");
    try (Connection c = db.connect()) {
      assertEquals(OptionalInt.of(12), Catalog.installedVersion(c));
      assertEquals(before, rows(c, "select b.branch_name || ' ' || gnomon.branch_point(b)::text from gnomon.branch b order by 1"));
      assertEquals(List.of("c false", "m true"), rows(c, "select branch_name || ' ' || (chain is null and snaps is null"
          + " and main_snap is null) from gnomon.branch order by 1"));
      assertEquals(List.of("c 2", "m 1"), rows(c, "select branch_name || ' ' || depth from gnomon.branches() order by 1"));
      // a branch created now: no point stored for a branch of main, the full point for a branch of a branch
      rows(c, "select gnomon.branch_create('m2')");
      rows(c, "select gnomon.branch_create('c2', 'm2')");
      assertEquals(List.of("c2 {" + id(c, "c2") + "," + id(c, "m2") + "} true", "m2 null null"),
          rows(c, "select branch_name || ' ' || coalesce(chain::text, 'null') || ' '"
              + " || coalesce((snaps[2]::text = (select cutoff::text from gnomon.branch where branch_name = 'c2'))::text, 'null')"
              + " from gnomon.branch where branch_name in ('m2', 'c2') order by 1"));
      assertEquals(List.of("t"), rows(c, "select gnomon.branch_point(b)::text = (array[b.branch_id], array[null::pg_snapshot],"
          + " b.cutoff)::gnomon.point::text from gnomon.branch b where b.branch_name = 'm2'"));
    }
  }

  private static String id(Connection c, String branch) throws SQLException {
    return rows(c, "select branch_id from gnomon.branch where branch_name = " + quote(branch)).get(0);
  }

  /** A logged branch of main, now, as catalogs before version 12 wrote it (its point stored: {id}, {null}, the cutoff). */
  private static void branchOfMainBeforeVersion12(Connection c, String name) throws SQLException {
    rows(c, "insert into gnomon.branch (branch_id, branch_name, cutoff, chain, snaps, main_snap, created_xid)"
        + " select x.id, " + quote(name) + ", pg_current_snapshot(), array[x.id], array[null::pg_snapshot],"
        + " pg_current_snapshot(), pg_current_xact_id() from (select nextval('gnomon.branch_seq')::int as id) x returning 1");
  }

  private static void replaceCatalogVersion(Connection c, int version) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(
          "create or replace function gnomon.catalog_version() returns integer language sql immutable as 'select "
              + version + "'");
    }
  }

  /** Every object in a schema, from every catalog that holds schema-qualified objects. */
  private static List<String> objectsIn(Connection c, String schema) throws SQLException {
    String ns = "to_regnamespace(" + quote(schema) + ")";
    return rows(
        c,
        "select kind || ' ' || name from ("
            + " select 'relation' kind, relname::text name from pg_class where relnamespace = " + ns
            + " union all select 'function', oid::regprocedure::text from pg_proc where pronamespace = " + ns
            + " union all select 'type', typname::text from pg_type where typnamespace = " + ns
            + " union all select 'operator', oid::regoperator::text from pg_operator where oprnamespace = " + ns
            + " union all select 'operator class', opcname::text from pg_opclass where opcnamespace = " + ns
            + " union all select 'operator family', opfname::text from pg_opfamily where opfnamespace = " + ns
            + " union all select 'collation', collname::text from pg_collation where collnamespace = " + ns
            + " union all select 'conversion', conname::text from pg_conversion where connamespace = " + ns
            + " union all select 'statistics', stxname::text from pg_statistic_ext where stxnamespace = " + ns
            + " union all select 'text search config', cfgname::text from pg_ts_config where cfgnamespace = " + ns
            + ") o order by 1");
  }

  private static String quote(String literal) {
    return "'" + literal.replace("'", "''") + "'";
  }

  /** The rows of a query, each as its columns joined by spaces ({@code <null>} for SQL NULL). */
  private static List<String> rows(Connection c, String sql) throws SQLException {
    List<String> rows = new ArrayList<>();
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      int n = rs.getMetaData().getColumnCount();
      while (rs.next()) {
        List<String> cols = new ArrayList<>();
        for (int i = 1; i <= n; i++) {
          String v = rs.getString(i);
          cols.add(v == null ? "<null>" : v);
        }
        rows.add(String.join(" ", cols));
      }
    }
    return rows;
  }
}
