package io.gnomon;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import org.jooq.Record;
import org.jooq.Table;
import org.jooq.impl.DSL;

/**
 * Reads of tracked tables on main as of one coordinate, through jOOQ (typed records of the user's own tables) or
 * JDBC: {@link #table}, {@link #fetch}, {@link #selectSql}, {@link #prepare}.
 *
 * <p>Every read goes through the table's generated function {@code gnomon_t.<table>_as_of(coordinate)}, which
 * PostgreSQL inlines, so conditions reach the table's indexes. Rows unchanged since the coordinate come from the
 * live table; only changed rows are rebuilt from history. The coordinate is checked (GN011 in the future, GN012
 * older than the tracking).
 */
public final class AsOf extends Reads {
  private final Coordinate coordinate;

  AsOf(Gnomon gnomon, Coordinate coordinate) {
    super(gnomon);
    this.coordinate = coordinate;
  }

  /** The coordinate these reads are as of. */
  public Coordinate coordinate() {
    return coordinate;
  }

  @Override
  String call(TrackedTable table) {
    return table.asOfFunctionSql() + "(?)";
  }

  @Override
  Table<Record> call(TrackedTable table, String alias) {
    return DSL.table("{0}.{1}({2})", DSL.name("gnomon_t"), DSL.name(table.asOfFunction()), DSL.val(coordinate.toString()))
        .as(DSL.name(alias));
  }

  @Override
  int bind(PreparedStatement ps) throws SQLException {
    ps.setString(1, coordinate.toString());
    return 2;
  }

  /** Parameters of a where clause passed to {@link #prepare} are numbered from 2 (1 is the coordinate). */
  @Override
  public int firstUserParameter() {
    return 2;
  }
}
