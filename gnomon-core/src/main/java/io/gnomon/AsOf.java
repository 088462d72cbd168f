package io.gnomon;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Record;
import org.jooq.Result;
import org.jooq.Table;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;

/**
 * Reads of tracked tables as of one coordinate, through jOOQ (typed records of the user's own tables) or JDBC.
 *
 * <p>Every read goes through the table's generated function {@code gnomon_t.<table>_as_of(coordinate)}, which
 * PostgreSQL inlines, so conditions reach the table's indexes. Rows unchanged since the coordinate come from the
 * live table; only changed rows are rebuilt from history.
 */
public final class AsOf {
  private final Gnomon gnomon;
  private final Coordinate coordinate;

  AsOf(Gnomon gnomon, Coordinate coordinate) {
    this.gnomon = gnomon;
    this.coordinate = coordinate;
  }

  /** The coordinate these reads are as of. */
  public Coordinate coordinate() {
    return coordinate;
  }

  /**
   * The table as of the coordinate, as a jOOQ table aliased with the table's own name, for use in any query. Render
   * such queries without schema names ({@code Settings.withRenderSchema(false)}) so the table's fields refer to
   * the alias; {@link #fetch} does this for you.
   */
  public Table<Record> table(Table<?> table) {
    TrackedTable t = gnomon.tracked(qualified(table));
    return DSL.table("{0}.{1}({2})", DSL.name("gnomon_t"), DSL.name(t.asOfFunction()), DSL.val(coordinate.toString()))
        .as(DSL.name(table.getName()));
  }

  /**
   * Fetches the rows of a table as of the coordinate that satisfy the conditions, as typed records of that table.
   *
   * <pre>{@code
   * Result<AccountsRecord> rows = gnomon.asOf(c).fetch(dsl, ACCOUNTS, ACCOUNTS.BALANCE.gt(0));
   * }</pre>
   */
  public <R extends Record> Result<R> fetch(DSLContext dsl, Table<R> table, Condition... conditions) {
    if (table.fields().length == 0) {
      throw new InvalidArgumentException(
          "fetch needs a jOOQ table that knows its columns (a generated table class), but " + table.getName()
              + " has none; for a table built from its name, select from AsOf.table(table) instead",
          null);
    }
    DSLContext unqualified =
        dsl.configuration().derive(dsl.settings().withRenderSchema(false)).dsl();
    return unqualified.selectFrom(table(table)).where(conditions).fetchInto(table);
  }

  /**
   * The SQL of a plain JDBC read: {@code select * from gnomon_t.<fn>(?)} where the first parameter is the
   * coordinate (bound by {@link #prepare}); append your own {@code where} clause.
   */
  public String selectSql(String table) {
    return "select * from " + gnomon.tracked(table).asOfFunctionSql() + "(?)";
  }

  /**
   * Prepares a plain JDBC read of a table as of the coordinate; {@code whereClause} (may be empty) is appended
   * after {@code where}, and its parameters are numbered from 2.
   */
  public PreparedStatement prepare(Connection connection, String table, String whereClause) throws SQLException {
    String sql = selectSql(table);
    if (whereClause != null && !whereClause.isBlank()) {
      sql += " where " + whereClause;
    }
    PreparedStatement ps = connection.prepareStatement(sql);
    ps.setString(1, coordinate.toString());
    return ps;
  }

  private static String qualified(Table<?> table) {
    String schema = table.getSchema() == null ? "public" : table.getSchema().getName();
    return TrackedTable.quote(schema) + "." + TrackedTable.quote(table.getName());
  }
}
