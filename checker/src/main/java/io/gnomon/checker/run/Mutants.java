package io.gnomon.checker.run;

import io.gnomon.checker.SqlMutant;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Makes a {@link SqlMutant} in the checker's throwaway database: reads a generated function's definition with
 * {@code pg_get_functiondef}, replaces one precise piece of it, and creates it again. Fails loudly when the piece is
 * not there (the generated SQL changed and the mutant must follow it).
 */
public final class Mutants {
  private Mutants() {}

  /** Applies the mutant to every tracked table's generated functions. */
  public static void apply(Connection c, SqlMutant mutant, int tables) throws SQLException {
    for (int t = 1; t <= tables; t++) {
      String[] objects = objects(c, Schema.tracked(t));
      String trigger = "gnomon_t." + quote(objects[0]);
      String asOf = "gnomon_t." + quote(objects[1]);
      String changes = "gnomon_t." + quote(objects[2]);
      String history = "gnomon_t." + quote(objects[3]);
      String atPoint = "gnomon_t." + quote(objects[4]);
      switch (mutant) {
        case TRIGGER_SKIPS_VERSION -> {
          String def = definition(c, trigger + "()");
          String tail = "from gnomon_old o;";
          int at = def.indexOf("pg_current_xact_id(), 'U', ");
          int end = at < 0 ? -1 : def.indexOf(tail, at);
          require(end >= 0, mutant, trigger, "the plain UPDATE branch (pg_current_xact_id(), 'U', ... " + tail + ")");
          def = def.substring(0, end) + "from gnomon_old o where pg_catalog.pg_current_xact_id()::text::bigint % 4 <> 1;"
              + def.substring(end + tail.length());
          execute(c, def);
        }
        case FEED_BY_SEQUENCE -> {
          String def = definition(c, changes + "(pg_snapshot, pg_snapshot, pg_snapshot, boolean)");
          String piece = "and pg_visible_in_snapshot(h.g_xid, cur) and not pg_visible_in_snapshot(h.g_xid, prev)";
          require(def.contains(piece), mutant, changes, piece);
          execute(c, def.replace(piece, "and pg_visible_in_snapshot(h.g_xid, cur) and h.g_vid > (select "
              + "coalesce(max(p.g_vid), 0) from " + history + " p where pg_visible_in_snapshot(p.g_xid, prev))"));
        }
        case ASOF_IGNORES_IN_PROGRESS -> {
          String def = definition(c, asOf + "(text)");
          String piece = "not pg_visible_in_snapshot(x.g_xid, (select r.snap from r))";
          require(def.contains(piece), mutant, asOf, piece);
          execute(c, def.replace(piece, "x.g_xid >= pg_snapshot_xmax((select r.snap from r))"));
        }
        case BRANCH_IGNORES_CUTOFF -> {
          String def = definition(c, atPoint + "(gnomon.point)");
          // main is read live for every key (as if the point's main snapshot were now), never rolled back: the arm
          // of main's versions the main snapshot does not see (which outrank the live row) hinges on it being set
          String piece = "r.msnap is not null";
          require(def.contains(piece), mutant, atPoint, piece + " (in the arm of main's unseen versions)");
          execute(c, def.replace(piece, "false"));
        }
        case MERGE_DROPS_SIDE -> {
          if (t == 1) { // a catalog function, not a per-table one: once
            String def = definition(c, "gnomon.merge_theirs(anycompatible, anycompatible, anycompatible)");
            String piece = "then ours else theirs end";
            require(def.contains(piece), mutant, "gnomon.merge_theirs", piece);
            execute(c, def.replace(piece, "then ours else ours end"));
          }
        }
        default -> throw new IllegalArgumentException("mutant " + mutant.cliName() + " is a slot for a feature that "
            + "is not built yet: " + mutant.description());
      }
    }
  }

  /** Trigger function, as-of function, changes function, history table and read-at-a-point function of a table. */
  private static String[] objects(Connection c, String table) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("select trigger_function, as_of_function, "
        + "gnomon.object_name(base_name, '_changes'), history_table, gnomon.object_name(base_name, '_at') "
        + "from gnomon.tracked_table "
        + "where schema_name = 'public' and table_name = ?")) {
      ps.setString(1, table);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw new SQLException(table + " is not tracked: no generated functions to mutate");
        }
        return new String[] {rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4), rs.getString(5)};
      }
    }
  }

  private static String definition(Connection c, String signature) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("select pg_get_functiondef(?::regprocedure)")) {
      ps.setString(1, signature);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getString(1);
      }
    }
  }

  private static void require(boolean found, SqlMutant m, String function, String piece) {
    if (!found) {
      throw new IllegalStateException("cannot make mutant " + m.cliName() + ": " + function + " no longer contains "
          + piece + "; the generated SQL changed, so the mutant's rewrite in " + Mutants.class.getName()
          + " must follow it");
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }

  private static String quote(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }
}
