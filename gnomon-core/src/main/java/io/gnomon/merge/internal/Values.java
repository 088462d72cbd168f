package io.gnomon.merge.internal;

import com.fasterxml.jackson.databind.JsonNode;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Sameness, ordering and hash keys of merge values (see {@code Merge.same}). */
public final class Values {
  /** The hash key of SQL NULL (maps cannot hold a null key the way we use them). */
  private static final Object NULL_KEY = new Object() {
    @Override
    public String toString() {
      return "NULL";
    }
  };

  private Values() {}

  /** Whether two values are the same for merging. */
  public static boolean same(Object a, Object b) {
    if (a == b) {
      return true;
    }
    if (a == null || b == null) {
      return false;
    }
    if (a instanceof Number x && b instanceof Number y) {
      return compareNumbers(x, y) == 0;
    }
    if (a instanceof List<?> x && b instanceof List<?> y) {
      int n = x.size();
      if (n != y.size()) {
        return false;
      }
      for (int i = 0; i < n; i++) {
        if (!same(x.get(i), y.get(i))) {
          return false;
        }
      }
      return true;
    }
    if (a instanceof JsonNode x && b instanceof JsonNode y) {
      return sameJson(x, y);
    }
    return a.equals(b);
  }

  /** Whether a number is one of the integral boxes we accept as integers. */
  public static boolean isIntegral(Object n) {
    return n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte;
  }

  /** The exact decimal value of a number (integral boxes, BigDecimal, BigInteger, finite doubles). */
  public static BigDecimal decimal(Number n) {
    if (n instanceof BigDecimal d) {
      return d;
    }
    if (isIntegral(n)) {
      return BigDecimal.valueOf(n.longValue());
    }
    if (n instanceof BigInteger i) {
      return new BigDecimal(i);
    }
    double d = n.doubleValue();
    if (Double.isNaN(d) || Double.isInfinite(d)) {
      throw new IllegalArgumentException("merge values cannot be NaN or infinite: " + n);
    }
    return BigDecimal.valueOf(d);
  }

  /** Compares two numbers by value. */
  public static int compareNumbers(Number x, Number y) {
    if (isIntegral(x) && isIntegral(y)) {
      return Long.compare(x.longValue(), y.longValue());
    }
    return decimal(x).compareTo(decimal(y));
  }

  /**
   * Compares two non-null values of one kind: numbers by value, strings by Unicode code points (PostgreSQL's
   * {@code COLLATE "C"} order on UTF-8 text, which the SQL strategies use; {@link String#compareTo} compares UTF-16
   * code units and disagrees for characters beyond U+FFFF against U+E000..U+FFFF).
   */
  @SuppressWarnings({"unchecked", "rawtypes"})
  public static int compare(Object a, Object b) {
    if (a instanceof Number x && b instanceof Number y) {
      return compareNumbers(x, y);
    }
    if (a instanceof String x && b instanceof String y) {
      return compareCodePoints(x, y);
    }
    if (a instanceof Comparable c && a.getClass() == b.getClass()) {
      return c.compareTo(b);
    }
    throw new IllegalArgumentException("cannot compare " + describe(a) + " with " + describe(b));
  }

  /** Compares two strings by Unicode code points, as PostgreSQL's {@code "C"} collation orders UTF-8 text. */
  public static int compareCodePoints(String a, String b) {
    int n = Math.min(a.length(), b.length());
    for (int i = 0; i < n; i++) {
      char x = a.charAt(i);
      char y = b.charAt(i);
      if (x != y) {
        // two BMP characters, or two high surrogates, order like their code points; a surrogate starts a
        // character beyond U+FFFF, which sorts after every BMP character (UTF-16 order puts U+E000..U+FFFF after it)
        boolean sx = Character.isSurrogate(x);
        if (sx == Character.isSurrogate(y)) {
          return Character.compare(x, y);
        }
        return sx ? 1 : -1;
      }
    }
    return Integer.compare(a.length(), b.length());
  }

  /** A hash key such that {@code same(a, b)} implies {@code key(a).equals(key(b))}. */
  public static Object key(Object v) {
    if (v == null) {
      return NULL_KEY;
    }
    if (isIntegral(v)) {
      return ((Number) v).longValue();
    }
    if (v instanceof Number n) {
      BigDecimal d = decimal(n);
      if (d.signum() == 0) {
        return 0L;
      }
      d = d.stripTrailingZeros();
      if (d.scale() <= 0 && d.precision() - d.scale() < 19) {
        return d.longValueExact();
      }
      return d;
    }
    if (v instanceof JsonNode j) {
      StringBuilder b = new StringBuilder();
      canonical(j, b);
      return b.toString();
    }
    return v;
  }

  /** The class of a value, for messages. */
  public static String describe(Object v) {
    return v == null ? "NULL" : v.getClass().getSimpleName() + " " + v;
  }

  /** Whether two JSON values are equal as jsonb compares them; iterative, so no depth overflows the stack. */
  public static boolean sameJson(JsonNode a, JsonNode b) {
    ArrayDeque<JsonNode> stack = new ArrayDeque<>();
    stack.push(a);
    stack.push(b);
    while (!stack.isEmpty()) {
      JsonNode y = stack.pop();
      JsonNode x = stack.pop();
      if (x == y) {
        continue;
      }
      if (x.isNumber() && y.isNumber()) {
        if (x.decimalValue().compareTo(y.decimalValue()) != 0) {
          return false;
        }
        continue;
      }
      if (x.getNodeType() != y.getNodeType() || x.size() != y.size()) {
        return false;
      }
      if (x.isObject()) {
        for (Iterator<Map.Entry<String, JsonNode>> it = x.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          JsonNode other = y.get(e.getKey());
          if (other == null) {
            return false;
          }
          stack.push(e.getValue());
          stack.push(other);
        }
      } else if (x.isArray()) {
        for (int i = 0; i < x.size(); i++) {
          stack.push(x.get(i));
          stack.push(y.get(i));
        }
      } else if (!x.equals(y)) {
        return false;
      }
    }
    return true;
  }

  /** A text form in which equal JSON values are equal strings: object keys sorted, numbers normalised. */
  private static void canonical(JsonNode n, StringBuilder b) {
    if (n.isNumber()) {
      BigDecimal d = n.decimalValue();
      b.append(d.signum() == 0 ? "0" : d.stripTrailingZeros().toPlainString());
    } else if (n.isObject()) {
      TreeMap<String, JsonNode> sorted = new TreeMap<>();
      n.fields().forEachRemaining(e -> sorted.put(e.getKey(), e.getValue()));
      b.append('{');
      sorted.forEach((k, v) -> {
        b.append(com.fasterxml.jackson.databind.node.TextNode.valueOf(k)).append(':');
        canonical(v, b);
        b.append(',');
      });
      b.append('}');
    } else if (n.isArray()) {
      b.append('[');
      for (JsonNode e : n) {
        canonical(e, b);
        b.append(',');
      }
      b.append(']');
    } else {
      b.append(n);
    }
  }
}
