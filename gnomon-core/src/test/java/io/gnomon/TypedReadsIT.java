package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.sql.Connection;
import org.jooq.DSLContext;
import org.jooq.JSONB;
import org.jooq.SQLDialect;
import org.jooq.TableField;
import org.jooq.impl.DSL;
import org.jooq.impl.SQLDataType;
import org.jooq.impl.SchemaImpl;
import org.jooq.impl.TableImpl;
import org.jooq.impl.UpdatableRecordImpl;
import org.junit.jupiter.api.Test;

/**
 * Typed reads of the user's own jOOQ table through Gnomon: a quoted schema and table name with a space, a composite
 * key with a quoted column, an enum, jsonb, a text array, numeric, and NULLs, as of a coordinate on main, at a branch,
 * and written on a branch; and a read leaves the caller's DSLContext as it was.
 */
class TypedReadsIT extends GnomonIT {
  /** What jOOQ's code generator would write for {@code "Sales"."Order Line"} (the enum read as text). */
  static final class Line extends TableImpl<LineRecord> {
    static final Line LINE = new Line();
    final TableField<LineRecord, Integer> ORDER_ID = createField(DSL.name("Order Id"), SQLDataType.INTEGER.nullable(false), this);
    final TableField<LineRecord, String> LINE_NO = createField(DSL.name("line"), SQLDataType.CLOB.nullable(false), this);
    final TableField<LineRecord, String> STATUS = createField(DSL.name("status"), SQLDataType.VARCHAR, this);
    final TableField<LineRecord, JSONB> DOC = createField(DSL.name("doc"), SQLDataType.JSONB, this);
    final TableField<LineRecord, String[]> TAGS = createField(DSL.name("tags"), SQLDataType.CLOB.array(), this);
    final TableField<LineRecord, java.math.BigDecimal> AMOUNT = createField(DSL.name("amount"), SQLDataType.NUMERIC(10, 2), this);

    private Line() {
      super(DSL.name("Order Line"), new SchemaImpl(DSL.name("Sales")));
    }

    @Override
    public Class<LineRecord> getRecordType() {
      return LineRecord.class;
    }
  }

  /** The typed record. */
  public static final class LineRecord extends UpdatableRecordImpl<LineRecord> {
    public LineRecord() {
      super(Line.LINE);
    }
  }

  /** The rows as "id/line/status/doc/tags/amount; ". */
  static String show(org.jooq.Result<LineRecord> rs) {
    Line l = Line.LINE;
    StringBuilder b = new StringBuilder();
    for (LineRecord r : rs) {
      b.append(r.get(l.ORDER_ID)).append('/').append(r.get(l.LINE_NO)).append('/').append(r.get(l.STATUS)).append('/')
          .append(r.get(l.DOC) == null ? null : r.get(l.DOC).data()).append('/').append(java.util.Arrays.toString(r.get(l.TAGS))).append('/').append(r.get(l.AMOUNT)).append("; ");
    }
    return b.toString();
  }

  private Line table() throws Exception {
    sql("create schema \"Sales\"", "create type \"Sales\".mood as enum ('new', 'paid')",
        "create table \"Sales\".\"Order Line\" (\"Order Id\" int, line text, status \"Sales\".mood, doc jsonb, tags text[],"
            + " amount numeric(10,2), primary key (\"Order Id\", line))",
        "insert into \"Sales\".\"Order Line\" values (1, 'a', 'new', '{\"k\": [1, 2]}', '{x,y}', 1.50),"
            + " (1, 'b', null, null, null, null), (2, 'a', 'paid', 'null', '{}', 0)");
    gnomon().track("\"Sales\".\"Order Line\"");
    return Line.LINE;
  }

  private static final String BEFORE =
      "1/a/new/{\"k\": [1, 2]}/[x, y]/1.50; 1/b/null/null/null/null; 2/a/paid/null/[]/0.00; ";

  @Test
  void typedRecordsOfAQuotedCompositeKeyTableAsOfAndOnABranch() throws Exception {
    Line l = table();
    Coordinate before = gnomon().coordinate();
    sql("update \"Sales\".\"Order Line\" set status = 'paid', doc = '{\"k\": 3}', tags = '{z}', amount = null where line = 'a'",
        "delete from \"Sales\".\"Order Line\" where \"Order Id\" = 1 and line = 'b'");
    try (Connection c = connect()) {
      DSLContext dsl = DSL.using(c, SQLDialect.POSTGRES);
      assertEquals(BEFORE, show(gnomon().asOf(before).fetch(dsl, l).sortAsc(l.LINE_NO).sortAsc(l.ORDER_ID)));
      assertEquals("1/b/null/null/null/null; ", show(gnomon().at(Point.main(before)).fetch(dsl, l, l.STATUS.isNull())));
      assertEquals("1/a/new/{\"k\": [1, 2]}/[x, y]/1.50; ",
          show(gnomon().asOf(before).fetch(dsl, l, l.ORDER_ID.eq(1), l.LINE_NO.eq("a"))));
      gnomon().branches().create("f", "main", java.util.Optional.of(before), false);
      assertEquals(BEFORE, show(gnomon().at(Point.branch("f")).fetch(dsl, l).sortAsc(l.LINE_NO).sortAsc(l.ORDER_ID)));
      gnomon().onBranch("f").transaction(d -> d.update(l).set(l.TAGS, new String[] {"q", null})
          .set(l.DOC, JSONB.valueOf("[1]")).setNull(l.AMOUNT).where(l.ORDER_ID.eq(2)).execute());
      assertEquals("2/a/paid/[1]/[q, null]/null; ", show(gnomon().at(Point.branch("f")).fetch(dsl, l, l.ORDER_ID.eq(2))));
      assertEquals("1/a/paid/{\"k\": 3}/[z]/null; 2/a/paid/{\"k\": 3}/[z]/null; ",
          show(dsl.selectFrom(l).orderBy(l.ORDER_ID, l.LINE_NO).fetch()));
    }
  }

  @Test
  void aTypedReadsErrorsAreGnomonsExceptions() throws Exception {
    // fetch let jOOQ's DataAccessException through: a coordinate before the tracking (GN012) or a dropped branch
    // (GN050) reached the caller as a jOOQ exception, where every other call gives the exception of its SQLSTATE
    sql("create table early (id int primary key)");
    Coordinate beforeTracking = gnomon().coordinate();
    Line l = table();
    try (Connection c = connect()) {
      DSLContext dsl = DSL.using(c, SQLDialect.POSTGRES);
      CoordinateTooOldException old =
          assertThrows(CoordinateTooOldException.class, () -> gnomon().asOf(beforeTracking).fetch(dsl, l));
      assertEquals("GN012", old.sqlState());
      assertThrows(BranchNotFoundException.class, () -> gnomon().at(Point.branch("nope")).fetch(dsl, l));
    }
  }

  @Test
  void aReadLeavesTheCallersDslContextRenderingSchemas() throws Exception {
    // fetch rendered its query without schemas by setting renderSchema=false on the caller's own Settings object:
    // the caller's next query of a table outside search_path failed, or read a same-named table that is in it
    Line l = table();
    sql("create table public.\"Order Line\" (\"Order Id\" int, line text, status text, doc jsonb, tags text[], amount numeric)");
    Coordinate now = gnomon().coordinate();
    try (Connection c = connect()) {
      DSLContext dsl = DSL.using(c, SQLDialect.POSTGRES);
      assertEquals(3, gnomon().asOf(now).fetch(dsl, l).size());
      assertEquals(3, gnomon().at(Point.main()).fetch(dsl, l).size());
      assertEquals(3, dsl.fetchCount(l), "the caller's query still names \"Sales\"");
      assertEquals(true, dsl.settings().isRenderSchema());
    }
  }
}
