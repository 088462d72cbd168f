package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.AsOfApiIT.Account;
import io.gnomon.internal.Ticker;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;

/**
 * Gnomon on a connection pool, as Spring and jOOQ applications use it: a pool whose connections come with autocommit
 * off, work that ends its transaction itself, and what the next borrower of a pooled connection finds after a
 * branch was worked on, after a success, a rollback and an exception.
 */
class PooledConnectionsIT extends GnomonIT {

  private void accounts() throws SQLException {
    sql("create table account (id int primary key, balance bigint, owner text)",
        "insert into account values (1, 100, 'a'), (2, 200, 'b')");
  }

  private long count(String query) throws SQLException {
    return Long.parseLong(one(query));
  }

  @Test
  void onAPoolWithAutocommitOffWhatGnomonReportsDoneIsCommitted() throws Exception {
    // a pool configured autoCommit=false (common with Spring) rolls back, on return, a transaction left open: every
    // call that borrows a connection must commit its own work (track, tick, branches, strategies used to be lost)
    accounts();
    try (TestPool pool = new TestPool(dataSource(), false);
        Gnomon g = Gnomon.open(pool)) {
      g.track("public.account");
      assertEquals(1, count("select count(*) from gnomon.tracked_table"), "track committed");
      long ticks = count("select count(*) from gnomon.tick");
      g.tick();
      assertEquals(ticks + 1, count("select count(*) from gnomon.tick"), "tick committed");
      g.branches().create("f");
      assertEquals(1, count("select count(*) from gnomon.branches() where branch_name = 'f'"), "branch committed");
      g.merges().setStrategy("public.account", "balance", "counter");
      assertEquals("counter", one("select strategy from gnomon.merge_strategy"), "strategy committed");
      g.onBranch("f").jdbc(c -> {
        try (Statement st = c.createStatement()) {
          return st.executeUpdate("update account set balance = balance + 1 where id = 1");
        }
      });
      MergeResult r = g.merges().merge("f", "main");
      assertTrue(r.applied(), r.toString());
      assertEquals(101, count("select balance from account where id = 1"), "merge committed");
      // the connection goes back to the pool as it came: autocommit off
      try (Connection c = pool.getConnection()) {
        assertEquals(false, c.getAutoCommit());
      }
    }
  }

  @Test
  void theTickerCommitsItsTicksOnAPoolWithAutocommitOff() throws Exception {
    long before = count("select count(*) from gnomon.tick");
    try (TestPool pool = new TestPool(dataSource(), false)) {
      try (Ticker t = new Ticker(pool, Duration.ofMillis(20), Duration.ofMillis(20))) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (t.ticks() < 3) {
          assertTrue(System.nanoTime() < deadline, "3 ticks in 60 s; failed " + t.failures());
          Thread.sleep(5);
        }
      }
      assertTrue(count("select count(*) from gnomon.tick") >= before + 3, "the ticks the ticker counted are committed");
      assertEquals(0, count("select count(*) from pg_stat_activity where state like 'idle in transaction%'"));
    }
  }

  @Test
  void workOnABranchThatEndsItsTransactionItselfStaysOnTheBranch() throws Exception {
    // a commit or rollback inside the work (c.commit(), jOOQ's dsl.transaction) ended the branch selection with the
    // transaction, and the rest of the work wrote to main
    accounts();
    gnomon().track("public.account");
    gnomon().branches().create("f");
    try (TestPool pool = new TestPool(dataSource(), true);
        Gnomon g = Gnomon.open(pool)) {
      g.onBranch("f").jdbc(c -> {
        try (Statement st = c.createStatement()) {
          st.executeUpdate("update account set balance = 1 where id = 1");
          c.commit();
          st.executeUpdate("update account set balance = 2 where id = 2");
          c.rollback();
          return st.executeUpdate("update account set balance = 3 where id = 2");
        }
      });
      Account a = Account.ACCOUNT;
      g.onBranch("f").transaction(dsl -> {
        dsl.transaction(cfg -> cfg.dsl().update(a).set(a.OWNER, "nested").where(a.ID.eq(1)).execute());
        return dsl.execute("update account set owner = 'after' where id = 2");
      });
      assertEquals("1:100:a,2:200:b", table("account"), "main is untouched");
      assertEquals("1:1:nested,2:3:after", table("gnomon_t.account_at(gnomon.point('f'))"));
    }
  }

  @Test
  void nothingOfABranchLeaksToTheNextBorrowerOfAPooledConnection() throws Exception {
    accounts();
    gnomon().track("public.account");
    gnomon().branches().create("f");
    Account a = Account.ACCOUNT;
    try (TestPool pool = new TestPool(dataSource(), true);
        Gnomon g = Gnomon.open(pool)) {
      String clean = session(pool);
      g.onBranch("f").jdbc(c -> c.createStatement().executeUpdate("update account set balance = 5 where id = 1"));
      assertEquals(clean, session(pool), "after a commit");
      assertThrows(IllegalStateException.class, () -> g.onBranch("f").jdbc(c -> {
        c.createStatement().executeUpdate("update account set balance = 6 where id = 1");
        throw new IllegalStateException("boom");
      }));
      assertEquals(clean, session(pool), "after the work threw");
      assertThrows(GnomonException.class, () -> g.onBranch("f").transaction(dsl -> dsl.execute("select 1/0")));
      assertEquals(clean, session(pool), "after a failed statement");
      assertThrows(IllegalStateException.class, () -> g.onBranch("f").withIsolation(Connection.TRANSACTION_SERIALIZABLE)
          .transaction(dsl -> {
            dsl.update(a).set(a.BALANCE, 7L).execute();
            dsl.transaction(cfg -> {
              throw new IllegalStateException("nested rollback");
            });
            return null;
          }));
      assertEquals(clean, session(pool), "after a nested jOOQ transaction rolled back");
      assertEquals(1, pool.physicalConnections(), "one session served every borrower");
      assertEquals("1:100:a,2:200:b", table("account"));
      assertEquals("1:5:a,2:200:b", table("gnomon_t.account_at(gnomon.point('f'))"));
    }
  }

  @Test
  void onBranchNamesMainOrABranchNeverNothing() throws Exception {
    accounts();
    gnomon().track("public.account");
    // null used to mean main, silently
    assertEquals("GN021", assertThrows(InvalidArgumentException.class, () -> gnomon().onBranch(null)).sqlState());
    assertThrows(InvalidArgumentException.class, () -> gnomon().onBranch(" "));
    // "main" works on main with jOOQ too (it used to map the tables to the branch views, and fail with GN054)
    Account a = Account.ACCOUNT;
    assertEquals(2, (int) gnomon().onBranch("main").transaction(dsl -> dsl.fetchCount(a)));
    gnomon().onBranch("main").transaction(dsl -> dsl.update(a).set(a.BALANCE, 0L).where(a.ID.eq(2)).execute());
    assertEquals("1:100:a,2:0:b", table("account"));
  }

  @Test
  void aSelectionForTheTransactionOnAConnectionInAutocommitIsRefused() throws Exception {
    accounts();
    gnomon().track("public.account");
    gnomon().branches().create("f");
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      // set_config(..., true) in autocommit ended with its own statement: the next statement ran on main, silently
      InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> OnBranch.use(c, "f", true));
      assertTrue(e.getMessage().contains("autocommit mode would select nothing"), e.getMessage());
      c.setAutoCommit(false);
      OnBranch.use(c, "f", true);
      st.executeUpdate("update account set balance = 9 where id = 1");
      c.commit();
      try (ResultSet rs = st.executeQuery("select coalesce(current_setting('gnomon.branch', true), '')")) {
        rs.next();
        assertEquals("", rs.getString(1), "main again after the transaction");
      }
      c.commit();
    }
    assertEquals("1:100:a,2:200:b", table("account"));
    assertEquals("1:9:a,2:200:b", table("gnomon_t.account_at(gnomon.point('f'))"));
  }

  /** The table's rows as "id:balance:owner,..." in key order. */
  private String table(String from) throws SQLException {
    return one("select string_agg(id || ':' || balance || ':' || owner, ',' order by id) from " + from);
  }

  /** What a borrower of a pooled connection finds: the selected branch, the search path, autocommit. */
  private static String session(DataSource pool) throws SQLException {
    try (Connection c = pool.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(
            "select coalesce(current_setting('gnomon.branch', true), '') || ' | ' || current_setting('search_path')")) {
      rs.next();
      return rs.getString(1) + " | autocommit " + c.getAutoCommit();
    }
  }
}
