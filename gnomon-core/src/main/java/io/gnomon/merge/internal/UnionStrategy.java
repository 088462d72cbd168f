package io.gnomon.merge.internal;

import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.Conflict;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategy;
import java.util.List;

/** {@code union} for arrays: see {@link MultisetMerge}. A NULL base is an empty array; NULL on a side conflicts. */
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
    return new Resolved(MultisetMerge.merge(base == null ? List.of() : list(column, base), list(column, ours),
        list(column, theirs)));
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
