package io.gnomon;

import com.fasterxml.jackson.databind.JsonNode;
import io.gnomon.internal.Args;
import io.gnomon.internal.Jdbc;
import io.gnomon.internal.JsonText;
import io.gnomon.merge.DeleteRule;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Three-way merges run in the database: declare strategies, merge, look at conflicts, resolve them, merge again.
 * Each call is one round trip to the SQL functions of docs/merge.md ({@code gnomon.merge} and friends).
 *
 * <pre>{@code
 * Merges merges = gnomon.merges();
 * merges.setStrategy("public.account", "balance", "counter");
 * MergeResult r = merges.merge("feature", "main");
 * if (r.hasConflicts()) {
 *   for (MergeConflict c : merges.conflicts(r.mergeId())) {
 *     merges.resolve(r.mergeId(), c.table(), c.key(), c.column(), "theirs", null);
 *   }
 *   r = merges.merge("feature", "main");   // applies the resolutions
 * }
 * }</pre>
 */
public final class Merges {
  private final Gnomon gnomon;

  Merges(Gnomon gnomon) {
    this.gnomon = gnomon;
  }

  /**
   * Merges {@code source} into {@code target} ({@code "main"} or branch names), atomically. With conflicts it writes
   * nothing to the target and records them ({@link MergeResult#hasConflicts()}); resolve them and merge again.
   *
   * @throws MergeException a branch merged into itself (GN060)
   * @throws BranchNotFoundException, BranchLostException
   * @throws GnomonException with {@link GnomonException#retryable()} when a row the merge planned to write changed
   *     concurrently (40001): nothing was written, merge again
   */
  public MergeResult merge(String source, String target) {
    return run(source, target, false);
  }

  /** Plans and records a merge (status {@code dry_run}, with its counts and conflicts) without writing anything. */
  public MergeResult dryRun(String source, String target) {
    return run(source, target, true);
  }

  private MergeResult run(String source, String target, boolean dryRun) {
    return Jdbc.withConnection(
        gnomon.dataSource(),
        (dryRun ? "dry-running the merge of " : "merging ") + source + " into " + target,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(
              "select merge_id, status, adds, modifications, deletes, conflicts from gnomon.merge(?, ?, ?)")) {
            ps.setString(1, source);
            ps.setString(2, target);
            ps.setBoolean(3, dryRun);
            try (ResultSet rs = ps.executeQuery()) {
              rs.next();
              return new MergeResult(rs.getLong(1), rs.getString(2), rs.getLong(3), rs.getLong(4), rs.getLong(5), rs.getLong(6));
            }
          }
        });
  }

  /** What a merge would do, key by key, without doing or recording anything. */
  public List<MergeStep> preview(String source, String target) {
    return Jdbc.withConnection(
        gnomon.dataSource(),
        "previewing the merge of " + source + " into " + target,
        c -> {
          List<MergeStep> out = new ArrayList<>();
          c.setAutoCommit(false);
          try (PreparedStatement ps = c.prepareStatement(
              "select table_name, key::text, action, ours::text, result::text, conflicts::text from gnomon.merge_preview(?, ?)")) {
            ps.setString(1, source);
            ps.setString(2, target);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(new MergeStep(rs.getString(1), JsonText.parse(rs.getString(2)), rs.getString(3), JsonText.parse(rs.getString(4)),
                    JsonText.parse(rs.getString(5)), JsonText.parse(rs.getString(6))));
              }
            }
          } finally {
            c.rollback();
            c.setAutoCommit(true);
          }
          return out;
        });
  }

  /** The conflicts of a merge run. */
  public List<MergeConflict> conflicts(long mergeId) {
    return Jdbc.withConnection(
        gnomon.dataSource(),
        "listing the conflicts of merge " + mergeId,
        c -> {
          List<MergeConflict> out = new ArrayList<>();
          try (PreparedStatement ps = c.prepareStatement(
              "select table_name, key::text, column_name, kind, base::text, ours::text, theirs::text, strategy, reason"
                  + " from gnomon.merge_conflicts(?)")) {
            ps.setLong(1, mergeId);
            try (ResultSet rs = ps.executeQuery()) {
              while (rs.next()) {
                out.add(new MergeConflict(rs.getString(1), JsonText.parse(rs.getString(2)), rs.getString(3), rs.getString(4),
                    JsonText.parse(rs.getString(5)), JsonText.parse(rs.getString(6)), JsonText.parse(rs.getString(7)), rs.getString(8), rs.getString(9)));
              }
            }
          }
          return out;
        });
  }

  /**
   * Declares how to resolve one conflict: {@code "ours"}, {@code "theirs"}, {@code "base"}, or {@code "value"} with
   * the value as JSON (as {@code to_jsonb} renders the column). For a row conflict ({@code column} {@code ""}), ours
   * keeps the target's row and theirs takes the source's. The next merge of the same pair applies it, as long as it
   * meets the same conflict.
   */
  public void resolve(long mergeId, String table, JsonNode key, String column, String choice, JsonNode value) {
    Args.required(key, "the key of the conflict to resolve", "pass MergeConflict.key() of a conflict of merge " + mergeId);
    Jdbc.withConnection(
        gnomon.dataSource(),
        "resolving a conflict of merge " + mergeId,
        c -> {
          try (PreparedStatement ps = c.prepareStatement("select gnomon.merge_resolve(?, ?, ?::jsonb, ?, ?, ?::jsonb)")) {
            ps.setLong(1, mergeId);
            ps.setString(2, table);
            ps.setString(3, key.toString());
            ps.setString(4, column);
            ps.setString(5, choice);
            ps.setString(6, value == null ? null : value.toString());
            ps.executeQuery().close();
          }
          return null;
        });
  }

  /**
   * Declares a column's merge strategy ({@code "*"}: the table's default): fail, ours, theirs, counter, max, min,
   * union, json, text.
   *
   * @throws MergeException unknown strategy (GN061), or one that does not fit the column's type (GN062)
   */
  public void setStrategy(String table, String column, String strategy) {
    setStrategy(table, column, strategy, null, null);
  }

  /**
   * Declares a column's merge strategy with json options ({@code {"arrays_as_sets": true, "max_depth": 64,
   * "max_nodes": 100000}}) or a custom function ({@code "schema.fn(integer,integer,integer)"}, strategy {@code
   * custom}). A null strategy removes the declaration.
   */
  public void setStrategy(String table, String column, String strategy, JsonNode options, String customFunction) {
    Jdbc.withConnection(
        gnomon.dataSource(),
        "declaring the merge strategy of " + table + "." + column,
        c -> {
          try (PreparedStatement ps = c.prepareStatement(
              "select gnomon.set_merge_strategy(?, ?, ?, ?::jsonb, ?::regprocedure)")) {
            ps.setString(1, table);
            ps.setString(2, column);
            ps.setString(3, strategy);
            ps.setString(4, options == null ? null : options.toString());
            ps.setString(5, customFunction);
            ps.executeQuery().close();
          }
          return null;
        });
  }

  /** Sets what a delete on one side against an update on the other does in merges of a table. */
  public void setDeleteRule(String table, DeleteRule rule) {
    Args.required(rule, "the delete rule of " + table, "pass DeleteRule.CONFLICT (the default), DELETE_WINS or UPDATE_WINS");
    Jdbc.withConnection(
        gnomon.dataSource(),
        "setting the delete rule of " + table,
        c -> {
          try (PreparedStatement ps = c.prepareStatement("select gnomon.set_merge_rule(?, ?)")) {
            ps.setString(1, table);
            ps.setString(2, rule.name().toLowerCase(Locale.ROOT));
            ps.executeQuery().close();
          }
          return null;
        });
  }
}
