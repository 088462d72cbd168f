package io.gnomon.internal;

import io.gnomon.GnomonException;
import java.sql.Connection;
import java.sql.SQLException;
import javax.sql.DataSource;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;

/** Runs short units of work on a connection of Gnomon's data source, translating errors. */
public final class Jdbc {
  /** Work on a connection. */
  @FunctionalInterface
  public interface Work<T> {
    /** Does the work. */
    T run(Connection c) throws SQLException;
  }

  private Jdbc() {}

  /**
   * Runs work on a fresh connection in autocommit mode; {@code doing} names the work in error messages. A connection
   * that comes out of the data source with autocommit off (a pool configured {@code autoCommit=false}, as Spring
   * applications often do) is switched to autocommit for the work and switched back before it is returned: otherwise
   * the pool would roll back, on return, what Gnomon had just reported done.
   */
  public static <T> T withConnection(DataSource ds, String doing, Work<T> work) {
    try (Connection c = ds.getConnection()) {
      if (c.getAutoCommit()) {
        return work.run(c);
      }
      c.setAutoCommit(true);
      T result;
      try {
        result = work.run(c);
      } catch (Throwable t) {
        try {
          restoreManualCommit(c);
        } catch (SQLException r) {
          t.addSuppressed(r);
        }
        throw t;
      }
      restoreManualCommit(c);
      return result;
    } catch (SQLException e) {
      throw Errors.translate(doing, e);
    } catch (DataAccessException e) {
      throw translate(doing, e);
    }
  }

  /** Switches autocommit off again on a connection going back to its pool, even after a failure of the work. */
  private static void restoreManualCommit(Connection c) throws SQLException {
    if (!c.isClosed() && c.getAutoCommit()) {
      c.setAutoCommit(false);
    }
  }

  /** Runs work on the caller's connection (inside the caller's transaction). */
  public static <T> T on(Connection c, String doing, Work<T> work) {
    try {
      return work.run(c);
    } catch (SQLException e) {
      throw Errors.translate(doing, e);
    } catch (DataAccessException e) {
      throw translate(doing, e);
    }
  }

  /** jOOQ on a connection, for the generated catalog classes and routines. */
  public static DSLContext dsl(Connection c) {
    return DSL.using(c, SQLDialect.POSTGRES);
  }

  /** A jOOQ failure as the Gnomon exception of its SQLSTATE; {@code doing} names the work. */
  public static GnomonException translate(String doing, DataAccessException e) {
    SQLException cause = e.getCause(SQLException.class);
    return cause != null ? Errors.translate(doing, cause) : new GnomonException(doing + ": " + e.getMessage(), null, e);
  }

  /** Wraps a non-database failure. */
  public static GnomonException failure(String message, Throwable cause) {
    return new GnomonException(message, null, cause);
  }
}
