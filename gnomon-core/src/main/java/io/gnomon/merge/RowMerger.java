package io.gnomon.merge;

import io.gnomon.InvalidArgumentException;
import io.gnomon.merge.internal.Values;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The row-level rules of a three-way merge, over rows given as maps from column name to value ({@code null} for an
 * absent row):
 *
 * <ul>
 *   <li>absent in all three: absent;
 *   <li>a change on one side only (insert, update or delete) wins; the same change on both sides converges;
 *   <li>delete against delete converges (absent);
 *   <li>delete against update follows {@link DeleteRule} ({@link DeleteRule#CONFLICT} by default);
 *   <li>insert against insert of the same key merges as an update of an empty base: every column's base is NULL;
 *   <li>otherwise each column merges by {@link Merge#column} with its strategy ({@code fail} unless declared).
 * </ul>
 *
 * <p>Immutable and thread-safe; build one per table with {@link #builder()}.
 */
public final class RowMerger {
  private final Map<String, Column> columns;
  private final Map<String, Strategy> strategies;
  private final DeleteRule deleteRule;

  private RowMerger(Builder b) {
    this.columns = Collections.unmodifiableMap(new LinkedHashMap<>(b.columns));
    Map<String, Strategy> s = new LinkedHashMap<>();
    b.columns.keySet().forEach(name -> s.put(name, b.strategies.getOrDefault(name, b.defaultStrategy)));
    this.strategies = Collections.unmodifiableMap(s);
    this.deleteRule = b.deleteRule;
  }

  /** A builder: declare every column, then {@link Builder#build()}. */
  public static Builder builder() {
    return new Builder();
  }

  /** The columns, in declaration order. */
  public List<Column> columns() {
    return List.copyOf(columns.values());
  }

  /** The strategy of a declared column. */
  public Strategy strategy(String column) {
    Strategy s = strategies.get(column);
    if (s == null) {
      throw new IllegalArgumentException("no column " + column + "; declared: " + columns.keySet());
    }
    return s;
  }

  /** The rule for delete against update. */
  public DeleteRule deleteRule() {
    return deleteRule;
  }

  /**
   * Merges one row. A map may omit a column (it is NULL) but may not name an undeclared one.
   *
   * @param base the common ancestor's row, or null when the key did not exist
   * @param ours the target's row now, or null when absent
   * @param theirs the source's row now, or null when absent
   * @throws IllegalArgumentException when a row names a column that was not declared
   */
  public RowResult merge(Map<String, ?> base, Map<String, ?> ours, Map<String, ?> theirs) {
    Map<String, Object> b = normalize("base", base);
    Map<String, Object> o = normalize("ours", ours);
    Map<String, Object> t = normalize("theirs", theirs);
    if (b == null) {
      if (o == null || t == null) {
        return clean(o == null ? t : o);
      }
      return byColumn(empty(), o, t); // insert against insert: an update of an empty base
    }
    if (o == null && t == null) {
      return clean(null); // delete against delete converges
    }
    if (o == null || t == null) {
      Map<String, Object> updated = o == null ? t : o;
      if (sameRow(b, updated)) {
        return clean(null); // a one-sided delete
      }
      return switch (deleteRule) {
        case DELETE_WINS -> clean(null);
        case UPDATE_WINS -> clean(updated);
        case CONFLICT ->
            new RowResult(
                o,
                List.of(
                    new Conflict(null, b, o, t, "delete-vs-update",
                        (o == null ? "ours deleted the row and theirs updated it" : "theirs deleted the row and ours updated it")
                            + " (delete rule CONFLICT; declare DELETE_WINS or UPDATE_WINS to resolve)")));
      };
    }
    return byColumn(b, o, t);
  }

  private RowResult byColumn(Map<String, Object> b, Map<String, Object> o, Map<String, Object> t) {
    Map<String, Object> row = new LinkedHashMap<>();
    List<Conflict> conflicts = new ArrayList<>();
    for (Column c : columns.values()) {
      String n = c.name();
      Resolution r = Merge.column(c, strategies.get(n), b.get(n), o.get(n), t.get(n));
      if (r instanceof Conflict conflict) {
        conflicts.add(conflict);
      } else {
        row.put(n, ((Resolved) r).value());
      }
    }
    return conflicts.isEmpty() ? new RowResult(row, conflicts) : new RowResult(o, conflicts);
  }

  private boolean sameRow(Map<String, Object> a, Map<String, Object> b) {
    for (String n : columns.keySet()) {
      if (!Values.same(a.get(n), b.get(n))) {
        return false;
      }
    }
    return true;
  }

  private static RowResult clean(Map<String, Object> row) {
    return new RowResult(row, List.of());
  }

  private Map<String, Object> empty() {
    Map<String, Object> m = new LinkedHashMap<>();
    columns.keySet().forEach(n -> m.put(n, null));
    return m;
  }

  private Map<String, Object> normalize(String side, Map<String, ?> row) {
    if (row == null) {
      return null;
    }
    Map<String, Object> m = new LinkedHashMap<>();
    for (String n : columns.keySet()) {
      m.put(n, row.get(n));
    }
    for (String n : row.keySet()) {
      if (!columns.containsKey(n)) {
        throw new IllegalArgumentException(side + " row has column " + n + ", which was not declared; declared: " + columns.keySet());
      }
    }
    return m;
  }

  /** Declares the columns, their strategies, the default strategy and the delete rule; validates all at once. */
  public static final class Builder {
    private final Map<String, Column> columns = new LinkedHashMap<>();
    private final Map<String, Strategy> strategies = new LinkedHashMap<>();
    private final List<String> problems = new ArrayList<>();
    private Strategy defaultStrategy = Strategies.fail();
    private DeleteRule deleteRule = DeleteRule.CONFLICT;

    private Builder() {}

    /** Declares a column that merges with the default strategy. */
    public Builder column(String name, ColumnType type) {
      return declare(name, type, null);
    }

    /** Declares a column with its strategy. */
    public Builder column(String name, ColumnType type, Strategy strategy) {
      if (strategy == null) {
        problems.add("column " + name + ": the strategy is null");
      }
      return declare(name, type, strategy);
    }

    private Builder declare(String name, ColumnType type, Strategy strategy) {
      if (name == null || name.isEmpty()) {
        problems.add("a column has no name");
        return this;
      }
      if (type == null) {
        problems.add("column " + name + ": the type is null");
        return this;
      }
      if (columns.put(name, Column.of(name, type)) != null) {
        problems.add("column " + name + " is declared twice");
      }
      if (strategy != null) {
        strategies.put(name, strategy);
      }
      return this;
    }

    /** The strategy of columns declared without one; {@link Strategies#fail()} unless set. */
    public Builder defaultStrategy(Strategy strategy) {
      this.defaultStrategy = Objects.requireNonNull(strategy, "strategy");
      return this;
    }

    /** The rule for delete against update; {@link DeleteRule#CONFLICT} unless set. */
    public Builder deleteVsUpdate(DeleteRule rule) {
      this.deleteRule = Objects.requireNonNull(rule, "rule");
      return this;
    }

    /**
     * Builds the merger.
     *
     * @throws InvalidArgumentException listing every problem: no columns, duplicate names, a strategy that does not
     *     fit its column's type (e.g. {@code counter} on text)
     */
    public RowMerger build() {
      List<String> all = new ArrayList<>(problems);
      if (columns.isEmpty()) {
        all.add("no columns declared");
      }
      for (Column c : columns.values()) {
        Strategy s = strategies.getOrDefault(c.name(), defaultStrategy);
        if (!s.supports(c.type())) {
          all.add("column " + c.name() + ": strategy " + s.name() + " does not fit type " + c.type());
        }
      }
      if (!all.isEmpty()) {
        throw new InvalidArgumentException("invalid row merge: " + String.join("; ", all), null);
      }
      return new RowMerger(this);
    }
  }
}
