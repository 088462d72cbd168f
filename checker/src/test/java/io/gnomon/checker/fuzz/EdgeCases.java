package io.gnomon.checker.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gnomon.merge.ColumnType;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * The cases the fuzzer's generators make rarely or never, for the differential test: every combination of the integer
 * types' boundaries, numeric precisions and scales at their limits, text beyond ASCII (accents, combining marks,
 * U+E000..U+FFFF, characters beyond U+FFFF), lines without a final newline and with {@code \r\n}, arrays with
 * duplicates and NULL elements, numeric arrays whose elements differ only in scale, and nested JSON with keys that
 * need quoting. Seeded: the same seed gives the same cases.
 */
final class EdgeCases {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final String[] CHARS = {"a", "Z", "é", "e\u0301", "ß", "\uE000", "\uFFFD", "\uD83D\uDE00",
      "\uD834\uDD1E", "", " ", "|"};
  private static final String[] LINES = {"a\n", "b\n", "é\n", "\uD83D\uDE00\n", "\n", "x\r\n", "\uFFFD\n", "a", "b"};
  private static final String[] KEYS = {"a", "b", "é", "a b", "", "x\"y", "_1", "1x", "\uD83D\uDE00"};

  private final SplittableRandom r;
  private final List<FuzzCase> out = new ArrayList<>();

  private EdgeCases(long seed) {
    this.r = new SplittableRandom(seed);
  }

  /** The edge cases of a seed: a fixed exhaustive part and {@code random} random ones per kind. */
  static List<FuzzCase> of(long seed, int random) {
    EdgeCases e = new EdgeCases(seed);
    e.integerBounds();
    for (int i = 0; i < random; i++) {
      e.randomCase();
    }
    return e.out;
  }

  private void integerBounds() {
    for (ColumnType type : List.of(ColumnType.int2(), ColumnType.int4(), ColumnType.int8())) {
      List<Object> values = Arrays.asList(type.minValue(), type.minValue() + 1, -1L, 0L, 1L, type.maxValue() - 1,
          type.maxValue(), null);
      for (Object b : values) {
        for (Object o : values) {
          for (Object t : values) {
            out.add(new FuzzCase("counter", type, b, o, t));
            out.add(new FuzzCase(r.nextBoolean() ? "max" : "min", type, b, o, t));
          }
        }
      }
    }
  }

  private void randomCase() {
    ColumnType numeric = numericType();
    ColumnType unconstrained = ColumnType.numeric();
    add("counter", numeric, () -> decimal(numeric));
    add("counter", unconstrained, () -> decimal(unconstrained));
    add(pick("max", "min"), numeric, () -> decimal(numeric));
    add(pick("max", "min"), unconstrained, () -> decimal(unconstrained));
    add(pick("max", "min", "fail", "ours", "theirs", MergeFuzzer.CUSTOM), ColumnType.text(), this::word);
    add("text", ColumnType.text(), this::lines);
    ColumnType texts = ColumnType.arrayOf(ColumnType.text());
    ColumnType longs = ColumnType.arrayOf(ColumnType.int8());
    ColumnType decimals = ColumnType.arrayOf(ColumnType.numeric());
    add(pick("union", "fail", "ours", "theirs"), texts, () -> list(this::word));
    add("union", longs, () -> list(() -> r.nextInt(8) == 0 ? null : (Object) (long) r.nextInt(4)));
    add("union", decimals, () -> list(() -> BigDecimal.valueOf(r.nextInt(3), r.nextInt(3))));
    add(pick("json", SqlStrategies.JSON_SETS, "fail", "ours", "theirs"), ColumnType.json(), () -> object(0));
  }

  /** A case whose sides derive from its base: unchanged, NULL, new, or edited (for text and JSON). */
  private void add(String strategy, ColumnType type, Supplier<Object> fresh) {
    Object base = r.nextInt(15) == 0 ? null : fresh.get();
    Object ours = derive(type, base, fresh);
    Object theirs = r.nextInt(10) == 0 ? Generators.copy(ours) : derive(type, base, fresh);
    out.add(new FuzzCase(strategy, type, base, ours, theirs));
  }

  private Object derive(ColumnType type, Object base, Supplier<Object> fresh) {
    int p = r.nextInt(100);
    if (p < 20) {
      return Generators.copy(base);
    }
    if (p < 25) {
      return null;
    }
    if (p < 45 || base == null) {
      return fresh.get();
    }
    return switch (type.kind()) {
      case TEXT -> base instanceof String s && (s.contains("\n") || s.isEmpty()) ? editLines(s) : fresh.get();
      case JSON -> editJson((JsonNode) base, 0);
      case ARRAY -> editList((List<?>) base, type);
      default -> fresh.get();
    };
  }

  private String pick(String... names) {
    return names[r.nextInt(names.length)];
  }

  private ColumnType numericType() {
    int[][] types = {{1, 0}, {3, 3}, {5, 2}, {6, 2}, {19, 4}, {38, 10}};
    int[] t = types[r.nextInt(types.length)];
    return ColumnType.numeric(t[0], t[1]);
  }

  /** A number near the type's limits, with its scale, one more or one less. */
  private BigDecimal decimal(ColumnType type) {
    int p = type.precision() == 0 ? 30 : type.precision();
    int s = type.precision() == 0 ? r.nextInt(12) : type.scale();
    BigDecimal max = BigDecimal.TEN.pow(p - s).subtract(BigDecimal.ONE.movePointLeft(s)); // 999.99 for (5,2)
    BigDecimal v = switch (r.nextInt(5)) {
      case 0 -> max;
      case 1 -> max.negate();
      case 2 -> BigDecimal.ONE.movePointLeft(s);
      case 3 -> BigDecimal.valueOf(r.nextInt(-3, 4));
      default -> new BigDecimal(new BigInteger(Math.max(1, p * 3), new Random(r.nextLong())), s)
          .remainder(max.add(BigDecimal.ONE.movePointLeft(s)));
    };
    int scale = Math.max(0, s + r.nextInt(-1, 2));
    return v.setScale(scale, RoundingMode.DOWN);
  }

  private String word() {
    StringBuilder b = new StringBuilder();
    int n = r.nextInt(4);
    for (int i = 0; i < n; i++) {
      b.append(CHARS[r.nextInt(CHARS.length)]);
    }
    return b.toString();
  }

  private String lines() {
    StringBuilder b = new StringBuilder();
    int n = r.nextInt(8);
    for (int i = 0; i < n; i++) {
      String line = LINES[r.nextInt(LINES.length)];
      b.append(line.endsWith("\n") || i == n - 1 ? line : line + "\n");
    }
    return b.toString();
  }

  /** Replaces up to two regions of lines, and sometimes adds or drops the final newline. */
  private String editLines(String s) {
    List<String> l = new ArrayList<>(TextOracle.lines(s));
    int regions = 1 + r.nextInt(2);
    for (int k = 0; k < regions; k++) {
      int from = r.nextInt(l.size() + 1);
      int to = Math.min(l.size(), from + r.nextInt(3));
      l.subList(from, to).clear();
      int add = r.nextInt(3);
      for (int i = 0; i < add; i++) {
        String line = LINES[r.nextInt(LINES.length)];
        l.add(from, line.endsWith("\n") ? line : line + "\n");
      }
    }
    String t = String.join("", l);
    if (r.nextInt(6) == 0) {
      t = t.endsWith("\n") ? t.substring(0, t.length() - 1) : t + "\n";
    }
    return t;
  }

  private List<Object> list(Supplier<Object> element) {
    List<Object> l = new ArrayList<>();
    int n = r.nextInt(7);
    for (int i = 0; i < n; i++) {
      l.add(r.nextInt(4) == 0 && !l.isEmpty() ? l.get(r.nextInt(l.size())) : element.get()); // duplicates
    }
    return l;
  }

  private List<Object> editList(List<?> base, ColumnType type) {
    List<Object> l = new ArrayList<>(base);
    int edits = 1 + r.nextInt(3);
    for (int k = 0; k < edits; k++) {
      int op = r.nextInt(3);
      if (op == 0 || l.isEmpty()) {
        Object e = !l.isEmpty() && r.nextBoolean() ? l.get(r.nextInt(l.size()))
            : type.element().kind() == ColumnType.Kind.TEXT ? word()
            : type.element().kind() == ColumnType.Kind.NUMERIC ? BigDecimal.valueOf(r.nextInt(3), r.nextInt(3))
            : (Object) (long) r.nextInt(4);
        l.add(r.nextInt(l.size() + 1), e);
      } else if (op == 1) {
        l.remove(r.nextInt(l.size()));
      } else {
        int i = r.nextInt(l.size());
        l.set(i, l.get(r.nextInt(l.size())));
      }
    }
    return l;
  }

  private JsonNode object(int depth) {
    ObjectNode o = NODES.objectNode();
    int n = r.nextInt(depth == 0 ? 5 : 4);
    for (int i = 0; i < n; i++) {
      o.set(KEYS[r.nextInt(KEYS.length)], jsonValue(depth + 1));
    }
    return o;
  }

  private JsonNode jsonValue(int depth) {
    return switch (r.nextInt(depth >= 6 ? 6 : 8)) {
      case 0 -> NODES.numberNode(r.nextInt(3));
      case 1 -> DecimalNode.valueOf(BigDecimal.valueOf(r.nextInt(3), r.nextInt(2))); // 1 and 1.0 are the same
      case 2 -> NODES.textNode(word());
      case 3 -> NODES.booleanNode(r.nextBoolean());
      case 4 -> NODES.nullNode();
      case 5 -> {
        ArrayNode a = NODES.arrayNode();
        int n = r.nextInt(4);
        for (int i = 0; i < n; i++) {
          a.add(r.nextInt(4) == 0 ? object(depth + 1) : NODES.numberNode(r.nextInt(3)));
        }
        yield a;
      }
      default -> object(depth);
    };
  }

  private JsonNode editJson(JsonNode base, int depth) {
    if (!base.isObject() || r.nextInt(8) == 0) {
      return r.nextBoolean() ? jsonValue(depth) : object(depth);
    }
    ObjectNode o = NODES.objectNode();
    for (Iterator<Map.Entry<String, JsonNode>> it = base.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      int p = r.nextInt(10);
      if (p < 6) {
        o.set(e.getKey(), e.getValue());
      } else if (p < 8) {
        o.set(e.getKey(), editJson(e.getValue(), depth + 1));
      }
    }
    if (r.nextInt(3) == 0) {
      o.set(KEYS[r.nextInt(KEYS.length)], jsonValue(depth + 1));
    }
    return o;
  }
}
