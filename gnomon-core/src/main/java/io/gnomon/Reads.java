package io.gnomon;

import io.gnomon.internal.Jdbc;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.Result;
import org.jooq.Table;
import org.jooq.conf.SettingsTools;
import org.jooq.exception.DataAccessException;

/**
 * Reads of tracked tables through one of their generated read functions, with jOOQ (typed records of the user's
 * own tables) or JDBC. {@link AsOf} reads main as of a coordinate; {@link At} reads any {@link Point}.
 */
abstract sealed class Reads permits AsOf, At {
  final Gnomon gnomon;

  Reads(Gnomon gnomon) {
    this.gnomon = gnomon;
  }

  /** The function call for a table, with {@code ?} parameters (bound by {@link #bind}). */
  abstract String call(TrackedTable table);

  /** The function call for a table with its arguments inlined as jOOQ bind values. */
  abstract Table<Record> call(TrackedTable table, String alias);

  /** Binds the call's parameters from index 1; returns the next free index. */
  abstract int bind(PreparedStatement ps) throws SQLException;

  /**
   * The table at this read's point, as a jOOQ table aliased with the table's own name, for use in any query.
   * Render such queries without schema names ({@code Settings.withRenderSchema(false)}) so the table's fields refer
   * to the alias; {@link #fetch} does this for you.
   */
  public Table<Record> table(Table<?> table) {
    return call(gnomon.tracked(qualified(table)), table.getName());
  }

  /**
   * Fetches the rows of a table that satisfy the conditions, as typed records of that table.
   *
   * <pre>{@code
   * Result<AccountsRecord> rows = reads.fetch(dsl, ACCOUNTS, ACCOUNTS.BALANCE.gt(0));
   * }</pre>
   */
  public <R extends Record> Result<R> fetch(DSLContext dsl, Table<R> table, Condition... conditions) {
    if (table.fields().length == 0) {
      throw new InvalidArgumentException(
          "fetch needs a jOOQ table that knows its columns (a generated table class), but " + table.getName()
              + " has none; for a table built from its name, select from " + getClass().getSimpleName() + ".table(table) instead",
          null);
    }
    // a copy: Settings' with... methods set the field on the object itself, and the caller's DSLContext must keep
    // rendering its schemas (without them, its next query of another schema's table failed, or read a table of the
    // same name earlier in search_path)
    DSLContext unqualified =
        dsl.configuration().derive(SettingsTools.clone(dsl.settings()).withRenderSchema(false)).dsl();
    try {
      return unqualified.selectFrom(table(table)).where(conditions).fetchInto(table);
    } catch (DataAccessException e) {
      // the read function's errors (GN011, GN012, GN013, GN050...) as Gnomon's exceptions, as every other call gives them
      throw Jdbc.translate("reading " + table.getName() + " "
          + (this instanceof AsOf a ? "as of " + a.coordinate() : "at " + ((At) this).point()), e);
    }
  }

  /** The SQL of a plain JDBC read, {@code select * from gnomon_t.<fn>(...)}; append your own {@code where} clause. */
  public String selectSql(String table) {
    return "select * from " + call(gnomon.tracked(table));
  }

  /**
   * Prepares a plain JDBC read of a table; {@code whereClause} (may be empty) is appended after {@code where}, and
   * its parameters are numbered from {@link #firstUserParameter()}.
   */
  public PreparedStatement prepare(Connection connection, String table, String whereClause) throws SQLException {
    String sql = selectSql(table);
    if (whereClause != null && !whereClause.isBlank()) {
      sql += " where " + whereClause;
    }
    PreparedStatement ps = connection.prepareStatement(sql);
    bind(ps);
    return ps;
  }

  /** The index of the first parameter of a where clause passed to {@link #prepare}. */
  public abstract int firstUserParameter();

  static String qualified(Table<?> table) {
    String schema = table.getSchema() == null ? "public" : table.getSchema().getName();
    return TrackedTable.quote(schema) + "." + TrackedTable.quote(table.getName());
  }
}
