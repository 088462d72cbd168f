package io.gnomon.sql;

import static io.gnomon.sql.internal.generated.Tables.TICK;
import static io.gnomon.sql.internal.generated.Tables.TRACKED_TABLE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.sql.internal.generated.Routines;
import io.gnomon.sql.internal.generated.routines.ParsePosition;
import io.gnomon.sql.internal.generated.tables.records.TrackedTableRecord;
import io.gnomon.testkit.GnomonDatabase;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.util.List;
import org.jooq.DSLContext;
import org.jooq.SQLDialect;
import org.jooq.exception.DataAccessException;
import org.jooq.impl.DSL;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The generated jOOQ classes work against the real catalog: Java calls {@code gnomon.track(...)} and the other
 * functions through them, and {@code pg_snapshot} and {@code xid8} values are read and written through their text
 * form.
 */
class GeneratedClassesIT {
  @RegisterExtension
  static final GnomonDatabase db = GnomonDatabase.fromTemplate(CatalogTemplate.NAME, CatalogTemplate::install);

  @Test
  void tracksThroughTheGeneratedRoutines() throws SQLException {
    try (Connection c = db.connect()) {
      execute(c, "create table public.orders (id int primary key, note text)");
      // tag::example[] (shown in docs/sql-codegen.md; SqlCodegenDocTest keeps both equal)
      DSLContext sql = DSL.using(c, SQLDialect.POSTGRES);
      Integer id = Routines.track(sql.configuration(), "public.orders"); // select gnomon.track('public.orders')
      TrackedTableRecord tracked = Routines.tracked(sql.configuration(), "public.orders");
      String snapshot = tracked.getTrackSnapshot(); // pg_snapshot as text, e.g. "742:742:"
      Long xid = tracked.getTrackXid(); // xid8 as a Long
      // end::example[]

      assertEquals(id, tracked.getTableId());
      assertEquals("orders", tracked.getTableName());
      assertEquals(List.of("id"), List.of(tracked.getKeyColumns()));
      assertNotNull(xid);
      assertTrue(snapshot.matches("\\d+:\\d+:[\\d,]*"), snapshot);
      // an xid8 value round-trips as a bound parameter
      assertEquals(
          id,
          sql.select(TRACKED_TABLE.TABLE_ID)
              .from(TRACKED_TABLE)
              .where(TRACKED_TABLE.TRACK_XID.eq(xid))
              .fetchOne()
              .value1());
    }
  }

  @Test
  void gnomonErrorsKeepTheirSqlState() throws SQLException {
    try (Connection c = db.connect()) {
      DSLContext sql = DSL.using(c, SQLDialect.POSTGRES);
      DataAccessException e =
          assertThrows(DataAccessException.class, () -> Routines.track(sql.configuration(), "public.no_such_table"));
      assertEquals(GnomonSqlState.TABLE_NOT_FOUND.sqlState(), e.sqlState());
      e = assertThrows(DataAccessException.class, () -> Routines.parseCoordinate(sql.configuration(), "v2:1:1:"));
      assertEquals(GnomonSqlState.MALFORMED_COORDINATE.sqlState(), e.sqlState());
    }
  }

  @Test
  void readsAndWritesSnapshotsAndXids() throws SQLException {
    try (Connection c = db.connect()) {
      execute(c, "create table public.items (id int primary key)");
      DSLContext sql = DSL.using(c, SQLDialect.POSTGRES);
      Integer tableId = Routines.track(sql.configuration(), "public.items");

      String coordinate = Routines.coordinate(sql.configuration());
      String incarnation = String.valueOf(Routines.incarnation(sql.configuration()));
      assertEquals(coordinate.substring(("v2:" + incarnation + ":").length()), Routines.parseCoordinate(sql.configuration(), coordinate));

      // a pg_snapshot written through the generated table, as a bound value and inlined
      sql.insertInto(TICK, TICK.TICK_AT, TICK.SNAPSHOT).values(OffsetDateTime.now(), "10:20:12,15").execute();
      sql.settings().setStatementType(org.jooq.conf.StatementType.STATIC_STATEMENT);
      sql.insertInto(TICK, TICK.TICK_AT, TICK.SNAPSHOT).values(OffsetDateTime.now(), "10:21:").execute();
      sql.settings().setStatementType(org.jooq.conf.StatementType.PREPARED_STATEMENT);
      assertEquals(
          List.of("10:20:12,15", "10:21:"),
          sql.select(TICK.SNAPSHOT).from(TICK).orderBy(TICK.TICK_ID).fetch(TICK.SNAPSHOT));

      // a pg_snapshot argument and result: the full coordinate check returns a valid snapshot unchanged
      String snap = Routines.parseCoordinate(sql.configuration(), Routines.coordinate(sql.configuration()));
      assertEquals(snap, Routines.checkRead(sql.configuration(), snap, tableId));
      // a function with OUT parameters
      ParsePosition position = new ParsePosition();
      position.setPos("v1:3:4:5");
      position.execute(sql.configuration());
      assertEquals(List.of(3L, 4L, 5L), List.of(position.getTickId(), position.getTxnKey(), position.getVid()));
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
