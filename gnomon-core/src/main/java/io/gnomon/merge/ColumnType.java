package io.gnomon.merge;

import java.util.Objects;

/**
 * The SQL type of a merged column, as far as merging cares: the integer types with their ranges, {@code numeric} with
 * its declared precision and scale, {@code text}, arrays, and {@code jsonb}. {@link #toString()} is the SQL spelling
 * ({@code int4}, {@code numeric(10,2)}, {@code text[]}, {@code jsonb}).
 *
 * @param kind the kind of type
 * @param precision for {@code numeric}: the declared precision, or 0 when none was declared
 * @param scale for {@code numeric}: the declared scale (0 when no precision was declared)
 * @param element for arrays: the element type; otherwise null
 */
public record ColumnType(Kind kind, int precision, int scale, ColumnType element) {

  /** The kinds of column type. */
  public enum Kind {
    /** {@code smallint}: −32,768 to 32,767, as a {@code Long}. */
    INT2,
    /** {@code integer}: −2³¹ to 2³¹−1, as a {@code Long}. */
    INT4,
    /** {@code bigint}: −2⁶³ to 2⁶³−1, as a {@code Long}. */
    INT8,
    /** {@code numeric}, with or without a declared precision and scale, as a {@code BigDecimal}. */
    NUMERIC,
    /** {@code text} (and {@code varchar}), as a {@code String}. */
    TEXT,
    /** An array, as a {@code List} of element values. */
    ARRAY,
    /** {@code jsonb}, as a Jackson {@code JsonNode}. */
    JSON
  }

  /** Checks the fields: numeric precision 1..1000 with 0 ≤ scale ≤ precision (or 0, 0), and an element for arrays. */
  public ColumnType {
    Objects.requireNonNull(kind, "kind");
    if (kind == Kind.NUMERIC) {
      if (precision == 0 ? scale != 0 : precision < 1 || precision > 1000 || scale < 0 || scale > precision) {
        throw new IllegalArgumentException(
            "numeric(" + precision + "," + scale + "): precision must be 1..1000 and scale 0..precision");
      }
    } else if (precision != 0 || scale != 0) {
      throw new IllegalArgumentException(kind + " takes no precision or scale");
    }
    if ((kind == Kind.ARRAY) != (element != null)) {
      throw new IllegalArgumentException(kind == Kind.ARRAY ? "an array needs an element type" : kind + " has no element type");
    }
    if (element != null && (element.kind == Kind.ARRAY || element.kind == Kind.JSON)) {
      throw new IllegalArgumentException("array elements must be integers, numerics or text, not " + element);
    }
  }

  /** {@code smallint}. */
  public static ColumnType int2() {
    return new ColumnType(Kind.INT2, 0, 0, null);
  }

  /** {@code integer}. */
  public static ColumnType int4() {
    return new ColumnType(Kind.INT4, 0, 0, null);
  }

  /** {@code bigint}. */
  public static ColumnType int8() {
    return new ColumnType(Kind.INT8, 0, 0, null);
  }

  /** {@code numeric} without a declared precision: any value. */
  public static ColumnType numeric() {
    return new ColumnType(Kind.NUMERIC, 0, 0, null);
  }

  /** {@code numeric(precision, scale)}: at most {@code precision − scale} digits before the point. */
  public static ColumnType numeric(int precision, int scale) {
    if (precision == 0) {
      throw new IllegalArgumentException("numeric(0," + scale + "): precision must be 1..1000");
    }
    return new ColumnType(Kind.NUMERIC, precision, scale, null);
  }

  /** {@code text}. */
  public static ColumnType text() {
    return new ColumnType(Kind.TEXT, 0, 0, null);
  }

  /** {@code jsonb}. */
  public static ColumnType json() {
    return new ColumnType(Kind.JSON, 0, 0, null);
  }

  /** An array of {@code element} (integers, numerics or text). */
  public static ColumnType arrayOf(ColumnType element) {
    return new ColumnType(Kind.ARRAY, 0, 0, Objects.requireNonNull(element, "element"));
  }

  /** Whether this is {@code int2}, {@code int4} or {@code int8}. */
  public boolean isInteger() {
    return kind == Kind.INT2 || kind == Kind.INT4 || kind == Kind.INT8;
  }

  /** Whether values of this type are numbers (an integer type or {@code numeric}). */
  public boolean isNumber() {
    return isInteger() || kind == Kind.NUMERIC;
  }

  /** The smallest value of an integer type. */
  public long minValue() {
    return switch (kind) {
      case INT2 -> Short.MIN_VALUE;
      case INT4 -> Integer.MIN_VALUE;
      case INT8 -> Long.MIN_VALUE;
      default -> throw new IllegalStateException(this + " is not an integer type");
    };
  }

  /** The largest value of an integer type. */
  public long maxValue() {
    return switch (kind) {
      case INT2 -> Short.MAX_VALUE;
      case INT4 -> Integer.MAX_VALUE;
      case INT8 -> Long.MAX_VALUE;
      default -> throw new IllegalStateException(this + " is not an integer type");
    };
  }

  @Override
  public String toString() {
    return switch (kind) {
      case INT2 -> "int2";
      case INT4 -> "int4";
      case INT8 -> "int8";
      case NUMERIC -> precision == 0 ? "numeric" : "numeric(" + precision + "," + scale + ")";
      case TEXT -> "text";
      case JSON -> "jsonb";
      case ARRAY -> element + "[]";
    };
  }
}
