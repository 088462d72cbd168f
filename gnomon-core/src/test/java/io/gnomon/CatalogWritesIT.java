package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/**
 * gnomon.grant_catalog_writes lets an ordinary role create, write, merge and drop branches (logged and scratch) and
 * consume the feed, without owning the catalog; taking it back makes PostgreSQL refuse again.
 */
class CatalogWritesIT extends GnomonIT {
  private String stateAs(String role, String statement) {
    try {
      as(role, statement);
      return "no error";
    } catch (SQLException e) {
      return e.getSQLState();
    }
  }

  @Test
  void aRoleGivenTheCatalogsWritesBranchesMergesAndConsumes() throws Exception {
    String app = "app_" + Long.toHexString(System.nanoTime());
    sql("create role " + app, "create table kv (k int primary key, v int)",
        "grant select, insert, update, delete on kv to " + app, "insert into kv values (1, 1), (2, 2)");
    gnomon().track("public.kv");

    // without the grant: PostgreSQL refuses the catalog's sequence, and nothing is created
    assertEquals("42501", stateAs(app, "select gnomon.branch_create('early')"));
    assertEquals("0", one("select count(*) from gnomon.branch"));

    int objects = Integer.parseInt(one("select gnomon.grant_catalog_writes('" + app + "')"));
    assertEquals(Integer.parseInt(one("select count(*) from gnomon.catalog_writes()")), objects);

    String logged = as(app, "select gnomon.branch_create('b1')");
    String scratch = as(app, "select gnomon.branch_create('s1', scratch => true)");
    assertTrue(Integer.parseInt(scratch) < 0, scratch);
    as(app, "select gnomon.branch_create('b2', 'b1')", "select gnomon.branch_rename('b2', 'b2x')");
    as(app, "select gnomon.branch_use('b1')", "update kv set v = 10 where k = 1", "insert into kv values (3, 3)");
    as(app, "select gnomon.branch_use('s1')", "update kv set v = 20 where k = 2");
    assertEquals("1", one("select count(*) from gnomon_t.kv_b where g_branch = " + scratch));
    assertEquals("1 1 0", as(app, "select gnomon.set_merge_strategy('public.kv', 'v', 'max')",
        "select concat_ws(' ', adds, modifications, conflicts) from gnomon.merge('b1', 'main')"));
    assertEquals("1:10,2:2,3:3", one("select string_agg(k || ':' || v, ',' order by k) from kv"));

    as(app, "select gnomon.feed_register('c1', array['public.kv'])");
    sql("select gnomon.tick()", "update kv set v = 11 where k = 1", "select gnomon.tick()");
    assertEquals("1", as(app, "select count(*) from gnomon.feed_read('c1', 10) where op = 'u'"));
    as(app, "select gnomon.feed_ack('c1', (select max(event_position) from gnomon.feed_read('c1', 10)))");
    assertEquals("0", as(app, "select count(*) from gnomon.feed_read('c1', 10) where op <> 'h'"));
    as(app, "select gnomon.feed_unregister('c1')");

    // dropping the branches takes their rows with them; the last scratch branch regenerates the views as the owner
    assertEquals("2", as(app, "select gnomon.branch_drop('b1', cascade => true)"));
    assertEquals("1", as(app, "select gnomon.branch_drop('s1')"));
    assertEquals("0", one("select count(*) from gnomon_t.kv_b"));
    assertEquals("0", one("select count(*) from gnomon_t.kv_bh where g_branch in (" + logged + ", " + scratch + ")"));
    assertEquals("0", one("select count(*) from gnomon.branch"));

    // the deletes of dropped branches' rows touch only ids without a catalog row
    sql("select gnomon.branch_create('kept')");
    onBranch("kept", "update kv set v = 99 where k = 2");
    String kept = one("select branch_id from gnomon.branch where branch_name = 'kept'");
    as(app, "select gnomon.branch_rows_drop(array[" + kept + "])");
    assertEquals("1", one("select count(*) from gnomon_t.kv_b where g_branch = " + kept));

    // taken back: refused again
    assertEquals(String.valueOf(objects), one("select gnomon.grant_catalog_writes('" + app + "', do_grant => false)"));
    assertEquals("42501", stateAs(app, "select gnomon.branch_create('late')"));
    assertEquals("42501", stateAs(app, "select gnomon.branch_rows_drop(array[" + kept + "])"));
  }

  @Test
  void badRolesAndCallersAreRefused() throws Exception {
    String other = "other_" + Long.toHexString(System.nanoTime());
    sql("create role " + other);
    assertEquals("GN021", stateOf("select gnomon.grant_catalog_writes('no_such_role_here')"));
    assertEquals("GN021", stateOf("select gnomon.grant_catalog_writes(null)"));
    assertEquals("GN021", stateOf("select gnomon.grant_catalog_writes('')"));
    // only the catalog's owner (or a superuser) hands the writes out
    assertEquals("42501", stateAs(other, "select gnomon.grant_catalog_writes('" + other + "')"));
  }

  private String stateOf(String statement) {
    try {
      sql(statement);
      return "no error";
    } catch (SQLException e) {
      return e.getSQLState();
    }
  }
}
