package io.gnomon.merge.internal;

import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.Conflict;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategy;
import java.util.List;

/**
 * {@code union} for arrays: see {@link MultisetMerge}. A NULL base is an empty array; NULL on a side conflicts, and so
 * does a multi-dimensional array (a list of lists) on any side: union merges one-dimensional arrays only.
 */
public final class UnionStrategy implements Strategy {
  public static final UnionStrategy INSTANCE = new UnionStrategy();

  private UnionStrategy() {}

  @Override
  public String name() {
    return "union";
  }

  @Override
  public boolean supports(ColumnType type) {
    return type.kind() == ColumnType.Kind.ARRAY;
  }

  @Override
  public Resolution resolve(Column column, Object base, Object ours, Object theirs) {
    if (ours == null || theirs == null) {
      return new Conflict(column.name(), base, ours, theirs, name(),
          (ours == null ? "ours" : "theirs") + " set " + column.name()
              + " to NULL while the other side changed its elements");
    }
    List<?> b = base == null ? List.of() : list(column, base);
    List<?> o = list(column, ours);
    List<?> t = list(column, theirs);
    int dimensions = Math.max(dimensions(o), Math.max(dimensions(t), dimensions(b)));
    if (dimensions > 1) {
      String side = dimensions(o) > 1 ? "ours" : dimensions(t) > 1 ? "theirs" : "base";
      return new Conflict(column.name(), base, ours, theirs, name(),
          "union merges one-dimensional arrays only, and " + side + " has " + dimensions + " dimensions");
    }
    return new Resolved(MultisetMerge.merge(b, o, t));
  }

  /** The number of dimensions of an array held as nested lists (PostgreSQL's arrays are rectangular). */
  private static int dimensions(List<?> l) {
    int inner = 0;
    for (Object e : l) {
      if (e instanceof List<?> sub) {
        inner = Math.max(inner, dimensions(sub));
      }
    }
    return 1 + inner;
  }

  private static List<?> list(Column column, Object v) {
    if (v instanceof List<?> l) {
      return l;
    }
    throw new IllegalArgumentException(
        "column " + column.name() + " (" + column.type() + ") holds " + Values.describe(v) + ", not a List");
  }

  @Override
  public String toString() {
    return name();
  }
}
