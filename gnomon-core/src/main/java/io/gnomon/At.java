package io.gnomon;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.jooq.Record;
import org.jooq.Table;
import org.jooq.impl.DSL;

/**
 * Reads of tracked tables at a {@link Point} (main or a branch, now or as of a coordinate), through jOOQ or JDBC:
 * {@link #table}, {@link #fetch}, {@link #selectSql}, {@link #prepare}. Every read goes through the table's
 * generated function {@code gnomon_t.<table>_at(gnomon.point(branch, coordinate))}, which PostgreSQL inlines.
 *
 * <pre>{@code
 * Result<AccountsRecord> rows = gnomon.at(Point.branch("feature", c)).fetch(dsl, ACCOUNTS, ACCOUNTS.ID.eq(7));
 * }</pre>
 */
public final class At extends Reads {
  private final Point point;

  At(Gnomon gnomon, Point point) {
    super(gnomon);
    this.point = point;
  }

  /** The point these reads are at. */
  public Point point() {
    return point;
  }

  @Override
  String call(TrackedTable table) {
    return table.atFunctionSql() + "(gnomon.point(?, ?))";
  }

  @Override
  Table<Record> call(TrackedTable table, String alias) {
    return DSL.table(
            "{0}(gnomon.point({1}, {2}))",
            DSL.field(table.atFunctionSql()),
            DSL.val(point.branch()),
            DSL.val(point.coordinateText(), String.class))
        .as(DSL.name(alias));
  }

  @Override
  int bind(PreparedStatement ps) throws SQLException {
    ps.setString(1, point.branch());
    ps.setString(2, point.coordinateText());
    return 3;
  }

  /** Parameters of a where clause passed to {@link #prepare} are numbered from 3 (1 and 2 are the point). */
  @Override
  public int firstUserParameter() {
    return 3;
  }
}
