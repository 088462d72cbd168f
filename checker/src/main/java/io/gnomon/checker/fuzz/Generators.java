package io.gnomon.checker.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gnomon.merge.ColumnType;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * Random values for each strategy and column type, small domains on purpose so that sides collide, converge and
 * overflow often. Ours and theirs derive from the base: unchanged (sometimes an equal copy such as {@code 1.50} for
 * {@code 1.5}), edited, or replaced; theirs is sometimes ours.
 */
final class Generators {
  static final ColumnType NUMERIC_6_2 = ColumnType.numeric(6, 2);
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final String[] WORDS = {"a", "b", "c", "d", "e", "ab", "ba", ""};
  private static final String[] KEYS = {"a", "b", "c", "d", "e"};

  private Generators() {}

  /** The column types each strategy is fuzzed with. */
  static List<ColumnType> types(String strategy) {
    ColumnType ints = ColumnType.arrayOf(ColumnType.int4());
    ColumnType texts = ColumnType.arrayOf(ColumnType.text());
    return switch (strategy) {
      case "counter" -> List.of(ColumnType.int2(), ColumnType.int4(), ColumnType.int8(), NUMERIC_6_2,
          ColumnType.numeric());
      case "max", "min" -> List.of(ColumnType.int2(), ColumnType.int8(), NUMERIC_6_2, ColumnType.text());
      case "union" -> List.of(ints, texts);
      case "json" -> List.of(ColumnType.json());
      case "text", MergeFuzzer.CUSTOM -> List.of(ColumnType.text());
      default -> List.of(ColumnType.int4(), NUMERIC_6_2, ColumnType.text(), ints, ColumnType.json());
    };
  }

  static FuzzCase generate(String strategy, SplittableRandom r) {
    List<ColumnType> types = types(strategy);
    ColumnType type = types.get(r.nextInt(types.size()));
    boolean lines = strategy.equals("text") && r.nextBoolean(); // unique lines: the no-loss oracle applies
    Object base = r.nextInt(20) == 0 ? null : value(strategy, type, r, lines);
    Object ours = derive(strategy, type, base, r, lines, "o");
    Object theirs = r.nextInt(10) == 0 ? copy(ours) : derive(strategy, type, base, r, lines, "t");
    return new FuzzCase(strategy, type, base, ours, theirs);
  }

  private static Object derive(String strategy, ColumnType type, Object base, SplittableRandom r, boolean lines,
      String side) {
    int p = r.nextInt(100);
    if (p < 25) {
      return copy(base);
    }
    if (p < 28) {
      return null;
    }
    if (p < 40 || base == null) {
      return value(strategy, type, r, lines);
    }
    return edit(type, base, r, lines, side);
  }

  static Object value(String strategy, ColumnType type, SplittableRandom r, boolean lines) {
    return switch (type.kind()) {
      case INT2, INT4, INT8 -> integer(type, r);
      case NUMERIC -> type.precision() == 0
          ? BigDecimal.valueOf(r.nextLong(-1_000_000, 1_000_000), r.nextInt(4))
          : BigDecimal.valueOf(bounded(r, 999_999L), 2);
      case TEXT -> strategy.equals("text") ? text(r, lines) : WORDS[r.nextInt(WORDS.length)];
      case ARRAY -> list(type, r);
      case JSON -> object(r, 0);
    };
  }

  private static long integer(ColumnType type, SplittableRandom r) {
    return switch (r.nextInt(4)) {
      case 0 -> r.nextLong(-5, 6);
      case 1 -> type.maxValue() - r.nextLong(0, 4);
      case 2 -> type.minValue() + r.nextLong(0, 4);
      default -> type.kind() == ColumnType.Kind.INT8 ? r.nextLong() : r.nextLong(type.minValue(), type.maxValue() + 1);
    };
  }

  private static long bounded(SplittableRandom r, long max) {
    return switch (r.nextInt(3)) {
      case 0 -> r.nextLong(-500, 501);
      case 1 -> (r.nextBoolean() ? 1 : -1) * (max - r.nextLong(0, 300));
      default -> r.nextLong(-max, max + 1);
    };
  }

  private static Object edit(ColumnType type, Object base, SplittableRandom r, boolean lines, String side) {
    switch (type.kind()) {
      case INT2, INT4, INT8 -> {
        long b = (Long) base;
        long d = r.nextLong(-3, 4);
        long v = b + d;
        if ((d > 0 && v < b) || (d < 0 && v > b) || v > type.maxValue() || v < type.minValue()) {
          return b;
        }
        return v;
      }
      case NUMERIC -> {
        BigDecimal b = (BigDecimal) base;
        if (r.nextInt(5) == 0) {
          return b.setScale(b.scale() + 1); // the same value, another scale
        }
        BigDecimal v = b.add(BigDecimal.valueOf(r.nextLong(-300, 301), 2));
        if (type.precision() > 0 && v.abs().compareTo(new BigDecimal("9999.99")) > 0) {
          return b;
        }
        return v;
      }
      case TEXT -> {
        String s = (String) base;
        return s.contains("\n") || s.isEmpty() ? editLines(s, r, lines, side) : WORDS[r.nextInt(WORDS.length)];
      }
      case ARRAY -> {
        List<Object> l = new ArrayList<>((List<?>) base);
        int edits = 1 + r.nextInt(3);
        for (int k = 0; k < edits; k++) {
          int op = r.nextInt(3);
          if (op == 0 || l.isEmpty()) {
            l.add(r.nextInt(l.size() + 1), element(type, r));
          } else if (op == 1) {
            l.remove(r.nextInt(l.size()));
          } else {
            int i = r.nextInt(l.size());
            int j = r.nextInt(l.size());
            Object x = l.get(i);
            l.set(i, l.get(j));
            l.set(j, x);
          }
        }
        return l;
      }
      case JSON -> {
        return editJson((JsonNode) base, r, 0);
      }
      default -> throw new IllegalStateException(type.toString());
    }
  }

  private static String text(SplittableRandom r, boolean unique) {
    int n = r.nextInt(9);
    StringBuilder b = new StringBuilder();
    for (int i = 0; i < n; i++) {
      b.append(unique ? "L" + i : WORDS[r.nextInt(4)]).append('\n');
    }
    if (!unique && n > 0 && r.nextInt(5) == 0) {
      b.setLength(b.length() - 1); // no newline at the end
    }
    return b.toString();
  }

  /** Replaces one or two regions of lines; in unique mode with lines fresh to this side. */
  private static String editLines(String s, SplittableRandom r, boolean unique, String side) {
    List<String> l = TextOracle.lines(s);
    int regions = 1 + r.nextInt(2);
    int fresh = 0;
    for (int k = 0; k < regions; k++) {
      int from = r.nextInt(l.size() + 1);
      int to = Math.min(l.size(), from + r.nextInt(3));
      List<String> replacement = new ArrayList<>();
      int add = r.nextInt(3);
      for (int i = 0; i < add; i++) {
        replacement.add(unique ? side + (fresh++) + "\n" : WORDS[r.nextInt(4)] + "\n");
      }
      if (from == to && replacement.isEmpty()) {
        replacement.add(unique ? side + (fresh++) + "\n" : "x\n");
      }
      l.subList(from, to).clear();
      l.addAll(from, replacement);
    }
    return String.join("", l);
  }

  private static List<Object> list(ColumnType type, SplittableRandom r) {
    int n = r.nextInt(6);
    List<Object> l = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      l.add(element(type, r));
    }
    return l;
  }

  private static Object element(ColumnType type, SplittableRandom r) {
    return type.element().kind() == ColumnType.Kind.TEXT ? WORDS[r.nextInt(5)] : (long) r.nextInt(6);
  }

  private static JsonNode object(SplittableRandom r, int depth) {
    ObjectNode o = NODES.objectNode();
    int n = r.nextInt(depth == 0 ? 5 : 3);
    for (int i = 0; i < n; i++) {
      o.set(KEYS[r.nextInt(KEYS.length)], jsonValue(r, depth + 1));
    }
    return o;
  }

  private static JsonNode jsonValue(SplittableRandom r, int depth) {
    int p = r.nextInt(depth >= 3 ? 5 : 7);
    return switch (p) {
      case 0 -> NODES.numberNode(r.nextInt(4));
      case 1 -> NODES.textNode(WORDS[r.nextInt(4)]);
      case 2 -> NODES.booleanNode(r.nextBoolean());
      case 3 -> NODES.nullNode();
      case 4 -> {
        ArrayNode a = NODES.arrayNode();
        int n = r.nextInt(3);
        for (int i = 0; i < n; i++) {
          a.add(r.nextInt(3));
        }
        yield a;
      }
      default -> object(r, depth);
    };
  }

  private static JsonNode editJson(JsonNode base, SplittableRandom r, int depth) {
    if (!base.isObject() || r.nextInt(10) == 0) {
      return r.nextBoolean() ? jsonValue(r, depth) : object(r, depth);
    }
    ObjectNode o = NODES.objectNode();
    for (Iterator<Map.Entry<String, JsonNode>> it = base.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      int p = r.nextInt(10);
      if (p < 6) {
        o.set(e.getKey(), e.getValue());
      } else if (p < 8) {
        o.set(e.getKey(), editJson(e.getValue(), r, depth + 1));
      } // else: removed
    }
    if (r.nextInt(3) == 0) {
      o.set(KEYS[r.nextInt(KEYS.length)], jsonValue(r, depth + 1));
    }
    return o;
  }

  /** An equal value, as a distinct object where that is cheap (numbers get another scale sometimes). */
  static Object copy(Object v) {
    if (v instanceof BigDecimal d) {
      return d.setScale(d.scale() + 1);
    }
    if (v instanceof List<?> l) {
      return new ArrayList<>(l);
    }
    if (v instanceof JsonNode j) {
      return j.deepCopy();
    }
    return v;
  }
}
