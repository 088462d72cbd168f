package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.internal.Errors;
import io.gnomon.sql.Catalog;
import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PostgresProvider;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Scratch versus logged branches across a crash (kill -9 of the postmaster, then crash recovery): a logged branch
 * keeps every committed row; a scratch branch (and a scratch branch of a logged one) is emptied by PostgreSQL and
 * marked lost — never read as if it were empty — and can be dropped and recreated.
 */
class BranchCrashIT {

  @Test
  void aCrashEmptiesScratchBranchesAndMarksThemLostWhileLoggedBranchesSurvive() throws Exception {
    try (PgCluster pg = PostgresProvider.startCluster(ClusterOptions.builder().build())) {
      pg.createDatabase("branch_crash");
      DataSource ds = pg.dataSource("branch_crash");
      Catalog.install(ds);
      Gnomon gnomon = Gnomon.open(ds);
      exec(ds, "create table t (id int primary key, v text)", "insert into t select g, 'main' from generate_series(1, 10) g");
      gnomon.track("public.t");
      Branches branches = gnomon.branches();
      branches.create("logged");
      branches.create("scratch", "main", Optional.empty(), true);
      branches.create("scratch-child", "logged", Optional.empty(), true);
      for (String b : new String[] {"logged", "scratch", "scratch-child"}) {
        gnomon.onBranch(b).jdbc(c -> {
          try (Statement st = c.createStatement()) {
            st.execute("update t set v = '" + b + "' where id <= 5");
            st.execute("insert into t values (100, '" + b + "')");
          }
          return null;
        });
      }
      assertEquals(6, count(ds, "select count(*) from gnomon_t.t_at(gnomon.point('scratch')) where v = 'scratch'"));
      // the intact check runs its statement under a search_path of its own: the branch view (the caller's search_path)
      // and the write trigger (pg_catalog) both call it, and a plan cached under another search_path is made again,
      // which made every scratch write re-plan it twice (2.3 times a logged write's server CPU)
      assertEquals(1, count(ds, "select count(*) from pg_proc"
          + " where oid = 'gnomon.branch_intact(gnomon.branch)'::regprocedure"
          + " and proconfig @> array['search_path=pg_catalog, pg_temp']"));

      pg.crash();
      pg.start();

      // the logged branch kept every committed write
      assertEquals(6, count(ds, "select count(*) from gnomon_t.t_at(gnomon.point('logged')) where v = 'logged'"));
      assertEquals(11, count(ds, "select count(*) from gnomon_t.t_at(gnomon.point('logged'))"));
      // the scratch branches are marked, and refuse reads and writes with GN053 instead of reading as main
      assertTrue(branches.get("logged").intact());
      assertFalse(branches.get("scratch").intact());
      assertFalse(branches.get("scratch-child").intact());
      assertThrows(BranchLostException.class, () -> translated(ds, "select count(*) from gnomon_t.t_at(gnomon.point('scratch'))"));
      assertThrows(BranchLostException.class, () -> gnomon.onBranch("scratch-child").jdbc(c -> {
        try (Statement st = c.createStatement()) {
          return st.executeUpdate("update t set v = 'x' where id = 1");
        }
      }));
      assertThrows(BranchLostException.class, () -> branches.create("from-lost", "scratch", Optional.empty(), true));
      // dropping and recreating them works; nothing is left of their rows
      branches.drop("scratch");
      branches.drop("scratch-child");
      assertEquals(0, count(ds, "select count(*) from gnomon_t.t_b where g_branch < 0"));
      branches.create("scratch", "main", Optional.empty(), true);
      assertTrue(branches.get("scratch").intact());
      assertEquals(10, count(ds, "select count(*) from gnomon_t.t_at(gnomon.point('scratch')) where v = 'main'"));
    }
  }

  private static void exec(DataSource ds, String... statements) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement()) {
      for (String s : statements) {
        st.execute(s);
      }
    }
  }

  private static long count(DataSource ds, String query) throws SQLException {
    try (Connection c = ds.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(query)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  private static void translated(DataSource ds, String query) {
    try {
      count(ds, query);
    } catch (SQLException e) {
      throw Errors.translate("running " + query, e);
    }
  }
}
