package io.gnomon.merge.internal;

import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategy;

/**
 * {@code max} and {@code min}: the larger (smaller) of ours and theirs, like SQL's {@code greatest}/{@code least}:
 * NULL loses to any value. Numbers compare by value, text by code points (SQL: {@code COLLATE "C"}); on a tie
 * of values that differ only in scale ({@code 1.0}, {@code 1.00}) ours is kept.
 */
public final class ExtremeStrategy implements Strategy {
  public static final ExtremeStrategy MAX = new ExtremeStrategy("max", 1);
  public static final ExtremeStrategy MIN = new ExtremeStrategy("min", -1);

  private final String name;
  private final int sign;

  private ExtremeStrategy(String name, int sign) {
    this.name = name;
    this.sign = sign;
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public boolean supports(ColumnType type) {
    return type.isNumber() || type.kind() == ColumnType.Kind.TEXT;
  }

  @Override
  public Resolution resolve(Column column, Object base, Object ours, Object theirs) {
    if (ours == null) {
      return new Resolved(theirs);
    }
    if (theirs == null) {
      return new Resolved(ours);
    }
    return new Resolved(Values.compare(theirs, ours) * sign > 0 ? theirs : ours);
  }

  @Override
  public String toString() {
    return name;
  }
}
