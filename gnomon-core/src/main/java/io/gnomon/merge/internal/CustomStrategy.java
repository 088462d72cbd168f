package io.gnomon.merge.internal;

import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.MergeFunction;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Strategy;
import java.util.Objects;

/** A user's function as a strategy, for every type. */
public final class CustomStrategy implements Strategy {
  private final String name;
  private final MergeFunction function;

  public CustomStrategy(String name, MergeFunction function) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("a custom strategy needs a name");
    }
    this.name = name;
    this.function = Objects.requireNonNull(function, "function");
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public boolean supports(ColumnType type) {
    return true;
  }

  @Override
  public Resolution resolve(Column column, Object base, Object ours, Object theirs) {
    Resolution r = function.merge(column, base, ours, theirs);
    if (r == null) {
      throw new IllegalStateException("custom strategy " + name + " returned null for column " + column.name()
          + "; return Resolution.resolved(value) or a Conflict");
    }
    return r;
  }

  @Override
  public String toString() {
    return name;
  }
}
