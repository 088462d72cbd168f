package io.gnomon.merge.internal;

import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.Conflict;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategy;
import java.math.BigDecimal;
import java.math.BigInteger;

/**
 * {@code counter}: {@code base + (ours − base) + (theirs − base)}, exact. A NULL base counts as 0 (so two inserts of
 * one key add up); NULL on a side is a conflict. A result outside the column's type is a conflict, never a wrap.
 */
public final class CounterStrategy implements Strategy {
  public static final CounterStrategy INSTANCE = new CounterStrategy();

  private CounterStrategy() {}

  @Override
  public String name() {
    return "counter";
  }

  @Override
  public boolean supports(ColumnType type) {
    return type.isNumber();
  }

  @Override
  public Resolution resolve(Column column, Object base, Object ours, Object theirs) {
    ColumnType type = column.type();
    if (ours == null || theirs == null) {
      return conflict(column, base, ours, theirs,
          (ours == null ? "ours" : "theirs") + " set " + column.name() + " to NULL, which a counter cannot add");
    }
    if (type.isInteger()) {
      long b = base == null ? 0 : integer(column, base);
      long o = integer(column, ours);
      long t = integer(column, theirs);
      // o + (t - b), with overflow of long detected without exceptions
      long d = t - b;
      boolean overflow = ((t ^ b) & (t ^ d)) < 0;
      long r = o + d;
      overflow |= ((o ^ r) & (d ^ r)) < 0;
      if (!overflow && r >= type.minValue() && r <= type.maxValue()) {
        return new Resolved(r);
      }
      BigInteger exact = BigInteger.valueOf(o).add(BigInteger.valueOf(t)).subtract(BigInteger.valueOf(b));
      if (exact.bitLength() < 64 && exact.longValue() >= type.minValue() && exact.longValue() <= type.maxValue()) {
        return new Resolved(exact.longValue()); // only an intermediate step overflowed a long
      }
      return conflict(column, base, ours, theirs, "counter: " + b + " + (" + o + " − " + b + ") + (" + t + " − " + b
          + ") = " + exact + " is outside the range of " + type + " [" + type.minValue() + ", " + type.maxValue() + "]");
    }
    BigDecimal b = base == null ? BigDecimal.ZERO : Values.decimal(number(column, base));
    BigDecimal o = Values.decimal(number(column, ours));
    BigDecimal t = Values.decimal(number(column, theirs));
    BigDecimal r = o.add(t).subtract(b);
    if (type.precision() == 0) {
      return new Resolved(r);
    }
    BigDecimal stripped = r.signum() == 0 ? BigDecimal.ZERO : r.stripTrailingZeros();
    if (stripped.scale() > type.scale()) {
      return conflict(column, base, ours, theirs, "counter: the result " + r.toPlainString() + " has more than "
          + type.scale() + " decimal places, which " + type + " would round");
    }
    BigDecimal scaled = r.setScale(type.scale());
    if (scaled.precision() - scaled.scale() > type.precision() - type.scale() && scaled.signum() != 0) {
      return conflict(column, base, ours, theirs, "counter: the result " + r.toPlainString() + " overflows " + type
          + " (at most " + (type.precision() - type.scale()) + " digits before the point)");
    }
    return new Resolved(scaled);
  }

  private static long integer(Column column, Object v) {
    if (Values.isIntegral(v)) {
      return ((Number) v).longValue();
    }
    throw new IllegalArgumentException(
        "column " + column.name() + " (" + column.type() + ") holds " + Values.describe(v) + ", not a Long");
  }

  private static Number number(Column column, Object v) {
    if (v instanceof Number n) {
      return n;
    }
    throw new IllegalArgumentException(
        "column " + column.name() + " (" + column.type() + ") holds " + Values.describe(v) + ", not a number");
  }

  private Conflict conflict(Column column, Object base, Object ours, Object theirs, String reason) {
    return new Conflict(column.name(), base, ours, theirs, name(), reason);
  }

  @Override
  public String toString() {
    return name();
  }
}
