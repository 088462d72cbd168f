package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Bad arguments from Java: every call refuses a null argument with InvalidArgumentException (GN021), naming it and
 * saying what to pass, never a NullPointerException from deep inside; and a closed Gnomon refuses its calls instead
 * of running them (or starting a ticker nobody stops).
 */
class ApiArgumentsIT extends GnomonIT {

  private static void refused(String argument, Executable call) {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, call, argument);
    assertEquals("GN021", e.sqlState());
    assertTrue(e.getMessage().startsWith(argument + " is null\n  Hint: "), e.getMessage());
  }

  @Test
  void nullArgumentsAreRefusedByName() throws Exception {
    sql("create table account (id int primary key, v int)", "insert into account values (1, 1)");
    Gnomon g = gnomon();
    g.track("public.account");
    refused("the coordinate to read as of", () -> g.asOf((Coordinate) null));
    refused("the time to find a coordinate at", () -> g.asOf((Instant) null));
    refused("the time to find a coordinate at", () -> g.coordinateAt(null));
    refused("the point to read at", () -> g.at(null));
    refused("the point to diff from", () -> g.diff("public.account", null, Point.main()));
    refused("the point to diff to", () -> g.diff("public.account", Point.main(), null));
    refused("the coordinate to create branch b at", () -> g.branches().create("b", "main", null, false));
    refused("the key of the conflict to resolve", () -> g.merges().resolve(1, "public.account", null, "v", "ours", null));
    refused("the delete rule of public.account", () -> g.merges().setDeleteRule("public.account", null));
    // the database's own refusal of a null table name, not a NullPointerException from the cache
    assertEquals("GN021", assertThrows(InvalidArgumentException.class, () -> g.tracked(null)).sqlState());
    assertTrue(g.branches().list().isEmpty(), "nothing was created");
  }

  @Test
  void aClosedGnomonRefusesItsCalls() throws Exception {
    sql("create table account (id int primary key, v int)");
    Gnomon g = Gnomon.open(dataSource());
    g.track("public.account");
    AsOf before = g.asOf(g.coordinate());
    g.close();
    g.close(); // idempotent
    for (Executable call : new Executable[] {
        g::startTicker, g::coordinate, g::tick, () -> g.track("public.account"), () -> g.tracked("public.account"),
        () -> g.branches().create("b"), () -> g.merges().merge("b", "main"), () -> g.onBranch("b").jdbc(c -> 1),
        () -> before.selectSql("public.account"), () -> g.diff("public.account", Point.main(), Point.main())}) {
      GnomonException e = assertThrows(GnomonException.class, call);
      assertTrue(e.getMessage().startsWith("this Gnomon was closed"), e.getMessage());
    }
    assertFalse(g.tickerRunning(), "no ticker started after close");
    assertTrue(g.branches() != null && g.config() != null);
    // the caller's own connection is the caller's: a coordinate of it is no call of the closed instance
    try (Connection c = connect()) {
      Gnomon.coordinate(c);
    }
  }
}
