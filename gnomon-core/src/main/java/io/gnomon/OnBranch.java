package io.gnomon;

import io.gnomon.internal.Jdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.LinkedHashSet;
import java.util.Set;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.conf.MappedSchema;
import org.jooq.conf.RenderMapping;
import org.jooq.conf.Settings;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/**
 * Work on one branch: ordinary jOOQ queries or JDBC statements against the tracked tables, read from and written
 * to the branch. Each call borrows a connection, selects the branch on it ({@code gnomon.branch_use(name)}), runs the
 * work in one transaction, and selects main again before giving the connection back, also when the work throws: nothing
 * leaks to the next borrower of a pooled connection. A commit or rollback inside the work ends the transaction, not the
 * branch: what runs after it still runs on the branch.
 *
 * <pre>{@code
 * gnomon.onBranch("feature").transaction(dsl -> {
 *   dsl.update(ACCOUNTS).set(ACCOUNTS.BALANCE, 0).where(ACCOUNTS.ID.eq(7)).execute();
 *   return dsl.selectFrom(ACCOUNTS).where(ACCOUNTS.ID.eq(7)).fetchOne();   // typed AccountsRecord
 * });
 * }</pre>
 *
 * <p>jOOQ queries are rendered with the tracked tables' schemas mapped to their branch schemas
 * ({@code public.accounts} becomes the branch view {@code gnomon_b_public.accounts}); a query naming an untracked
 * table fails with {@link TableNotTrackedException} instead of silently touching main. Through JDBC, the branch
 * schemas come first in {@code search_path}, so unqualified table names resolve to the branch views.
 */
public final class OnBranch {
  /** Work with jOOQ on the branch. */
  @FunctionalInterface
  public interface DslWork<T> {
    /** Does the work; queries through {@code dsl} go to the branch. */
    T run(DSLContext dsl) throws SQLException;
  }

  /** Work with JDBC on the branch. */
  @FunctionalInterface
  public interface JdbcWork<T> {
    /** Does the work; unqualified names of tracked tables on {@code connection} are the branch views. */
    T run(Connection connection) throws SQLException;
  }

  private final Gnomon gnomon;
  private final String branch;
  private final int isolation;

  OnBranch(Gnomon gnomon, String branch, int isolation) {
    this.gnomon = gnomon;
    this.branch = branch;
    this.isolation = isolation;
  }

  /** The branch's name. */
  public String branch() {
    return branch;
  }

  /** The same, with transactions at an isolation level ({@link Connection#TRANSACTION_SERIALIZABLE} and others). */
  public OnBranch withIsolation(int level) {
    return new OnBranch(gnomon, branch, level);
  }

  /** Runs jOOQ work in one transaction on the branch, and commits it; rolls back when the work throws. */
  public <T> T transaction(DslWork<T> work) {
    Set<String> schemas = new LinkedHashSet<>();
    if (!Point.MAIN.equals(branch)) {
      // on main the tables are themselves: no mapping (the branch views read the selected branch, and main is none)
      for (TrackedTable t : gnomon.trackedTables()) {
        schemas.add(t.schema());
      }
    }
    RenderMapping mapping = new RenderMapping();
    for (String s : schemas) {
      mapping.withSchemata(new MappedSchema().withInput(s).withOutput(TrackedTable.branchSchema(s)));
    }
    Settings settings = new Settings().withRenderMapping(mapping);
    return jdbc(c -> {
      try {
        return work.run(DSL.using(c, SQLDialect.POSTGRES, settings));
      } catch (DataAccessException e) {
        SQLException cause = e.getCause(SQLException.class);
        if (cause != null && "42P01".equals(cause.getSQLState()) && String.valueOf(cause.getMessage()).contains("gnomon_b_")) {
          throw new TableNotTrackedException(
              "on branch '" + branch + "': " + cause.getMessage().replaceFirst("^ERROR: ", "")
                  + "\n  Detail: a branch holds only tracked tables; the query names a table Gnomon does not track."
                  + "\n  Hint: track it on main first (gnomon.track), then create the branch; or read it outside onBranch.",
              cause);
        }
        throw e;
      }
    });
  }

  /**
   * Runs JDBC work in one transaction on the branch (unqualified tracked tables are the branch views), and commits.
   *
   * <p>The branch is selected for the connection's session before the transaction starts, so that work which ends
   * the transaction itself (a {@code commit()}, or jOOQ's {@code dsl.transaction(...)}, which commits or rolls back
   * the connection) goes on on the branch instead of on main; main is selected again before the connection goes back
   * to the data source, whether the work succeeded or threw.
   */
  public <T> T jdbc(JdbcWork<T> work) {
    return Jdbc.withConnection(
        gnomon.dataSource(),
        "working on branch " + branch,
        c -> {
          // in autocommit mode (Jdbc.withConnection): the selection is committed at once, and no commit or rollback
          // of the work can undo it
          use(c, branch, false);
          Throwable failure = null;
          try {
            return inTransaction(c, work);
          } catch (Throwable t) {
            failure = t;
            throw t;
          } finally {
            backToMain(c, failure);
          }
        });
  }

  private <T> T inTransaction(Connection c, JdbcWork<T> work) throws SQLException {
    int level = c.getTransactionIsolation();
    boolean isolate = isolation >= 0 && isolation != level;
    c.setAutoCommit(false);
    try {
      if (isolate) {
        c.setTransactionIsolation(isolation);
      }
      T result = work.run(c);
      c.commit();
      return result;
    } catch (SQLException | RuntimeException | Error e) {
      c.rollback();
      throw e;
    } finally {
      if (isolate) {
        c.setTransactionIsolation(level);
      }
      c.setAutoCommit(true);
    }
  }

  /** Selects main again on a connection going back to its pool; a failure of the work stays the one thrown. */
  private static void backToMain(Connection c, Throwable failure) throws SQLException {
    try {
      if (!c.isClosed()) {
        try (PreparedStatement ps = c.prepareStatement("select gnomon.branch_use(?, false)")) {
          ps.setString(1, Point.MAIN);
          ps.executeQuery().close();
        }
      }
    } catch (SQLException e) {
      if (failure == null) {
        throw e;
      }
      failure.addSuppressed(e);
    }
  }

  /**
   * Selects a branch on the caller's connection ({@code gnomon.branch_use}): for the rest of the session, or with
   * {@code local} only until the current transaction ends. {@code "main"} goes back to main.
   *
   * @throws InvalidArgumentException with {@code local} on a connection in autocommit mode: the selection would end
   *     with its own statement, and the next statement would run on main
   */
  public static void use(Connection c, String branch, boolean local) {
    Jdbc.on(
        c,
        "selecting branch " + branch,
        conn -> {
          if (local && conn.getAutoCommit()) {
            throw new InvalidArgumentException(
                "selecting branch " + branch + " for the current transaction only (local) on a connection in autocommit"
                    + " mode would select nothing: each statement is a transaction of its own, so the next one would run"
                    + " on main\n  Hint: call setAutoCommit(false) first (or work in your framework's transaction), or"
                    + " select it for the session (local false) and select \"main\" again before closing the connection",
                null);
          }
          try (PreparedStatement ps = conn.prepareStatement("select gnomon.branch_use(?, ?)")) {
            ps.setString(1, branch);
            ps.setBoolean(2, local);
            ps.executeQuery().close();
          }
          return null;
        });
  }
}
