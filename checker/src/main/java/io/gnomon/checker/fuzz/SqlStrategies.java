package io.gnomon.checker.fuzz;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.cfg.JsonNodeFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.DecimalNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.Conflict;
import io.gnomon.merge.JsonOptions;
import io.gnomon.merge.Merge;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategies;
import io.gnomon.merge.Strategy;
import io.gnomon.merge.internal.Values;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Both sides of the differential test: a case merged by the Java reference ({@link Merge#column}) and by the SQL
 * function of its strategy ({@code gnomon.merge_*}), the SQL side in batches of one statement per strategy and column
 * type, set-based ({@code unnest} of the inputs, {@code cross join lateral} the function). {@link #compare} says
 * where the two answers differ: a value against a conflict, two different values (numbers with their scale, text
 * exactly, arrays element by element, jsonb by value), a conflict whose value is not ours, or two different reasons.
 */
final class SqlStrategies {
  /** The name a test column has in the Java reference's conflicts; the SQL reasons say "the column" where it stands. */
  static final String COLUMN = "the column";

  /** {@code json} with {@code arraysAsSets}, fuzzed with the json cases. */
  static final String JSON_SETS = "json-sets";

  /** The SQL side of the fuzzer's custom strategy: the two texts, smaller first in code point order, joined by |. */
  static final String CUSTOM_FUNCTION_SQL = """
      create function public.merge_test_join(base text, ours text, theirs text, out value text, out conflict text)
      language sql immutable as $$
        select case when ours is null or theirs is null then null
                    when ours collate "C" <= theirs collate "C" then ours || '|' || theirs
                    else theirs || '|' || ours end,
               case when ours is null or theirs is null then 'a NULL side' end
      $$""";

  private static final ObjectMapper JSON =
      JsonMapper.builder().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS)
          .disable(JsonNodeFeature.STRIP_TRAILING_BIGDECIMAL_ZEROES).build();
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
  private static final int BATCH = 1_000;

  /** The reference strategy of each name; custom as the fuzzer's function, with the order the SQL side uses. */
  static final Map<String, Strategy> REFERENCE = references();

  private SqlStrategies() {}

  private static Map<String, Strategy> references() {
    Map<String, Strategy> m = new LinkedHashMap<>();
    for (String s : Strategies.NAMES) {
      m.put(s, Strategies.byName(s).orElseThrow());
    }
    m.put(JSON_SETS, Strategies.json(JsonOptions.defaults().withArraysAsSets(true)));
    m.put(MergeFuzzer.CUSTOM, Strategies.custom(MergeFuzzer.CUSTOM, (column, b, o, t) -> {
      if (o == null || t == null) {
        return new Conflict(column.name(), b, o, t, MergeFuzzer.CUSTOM, "a NULL side");
      }
      String x = (String) o;
      String y = (String) t;
      return Resolution.resolved(Values.compareCodePoints(x, y) <= 0 ? x + "|" + y : y + "|" + x);
    }));
    return m;
  }

  /** The Java reference's answer. */
  static Resolution reference(FuzzCase c) {
    return Merge.column(Column.of(COLUMN, c.type()), REFERENCE.get(c.strategy()), c.base(), c.ours(), c.theirs());
  }

  /** The SQL function call of a case's strategy and type, over the inputs B, O and T. */
  static String call(String strategy, ColumnType type) {
    String args = input(type, "c.b") + ", " + input(type, "c.o") + ", " + input(type, "c.t");
    return switch (strategy) {
      case "counter" -> type.kind() == ColumnType.Kind.NUMERIC && type.precision() > 0
          ? "gnomon.merge_counter(" + args + ", " + type.precision() + ", " + type.scale() + ")"
          : "gnomon.merge_counter(" + args + ")";
      case JSON_SETS -> "gnomon.merge_json(" + args + ", true)";
      case MergeFuzzer.CUSTOM -> "gnomon.merge_custom(" + args + ", 'public.merge_test_join(text,text,text)')";
      default -> "gnomon.merge_" + strategy + "(" + args + ")";
    };
  }

  /** The SQL expression that turns a text input into the column type. */
  private static String input(ColumnType type, String x) {
    return switch (type.kind()) {
      case INT2, INT4, INT8 -> x + "::" + type;
      case NUMERIC -> x + "::numeric";
      case TEXT -> x;
      case JSON -> x + "::jsonb";
      case ARRAY -> "case when " + x + " is null then null else array(select " + input(type.element(), "a.e")
          + " from jsonb_array_elements_text(" + x + "::jsonb) with ordinality a(e, n) order by a.n) end";
    };
  }

  /** A Java value as the text the SQL side casts. */
  static String text(Object v) {
    if (v == null) {
      return null;
    }
    if (v instanceof BigDecimal d) {
      return d.toPlainString();
    }
    if (v instanceof List<?> || v instanceof JsonNode) {
      return node(v).toString();
    }
    return v.toString();
  }

  /** A Java value as JSON: the form {@code to_jsonb} gives the SQL value. */
  static JsonNode node(Object v) {
    if (v == null) {
      return null;
    }
    if (v instanceof JsonNode j) {
      return j;
    }
    if (v instanceof BigDecimal d) {
      return DecimalNode.valueOf(d);
    }
    if (v instanceof Number n) {
      return NODES.numberNode(n.longValue());
    }
    if (v instanceof String s) {
      return NODES.textNode(s);
    }
    if (v instanceof List<?> l) {
      ArrayNode a = NODES.arrayNode();
      l.forEach(e -> a.add(e == null ? NODES.nullNode() : node(e)));
      return a;
    }
    throw new IllegalArgumentException(Values.describe(v));
  }

  /** What the SQL side answered: the value as {@code to_jsonb(value)::text}, and the conflict (null when none). */
  record Answer(String value, String conflict) {}

  /**
   * Merges every case through PostgreSQL, one statement per batch of one strategy and type; answers by index. Adds
   * the nanoseconds each strategy's statements took to {@code nanos}.
   */
  static Answer[] merge(Connection c, List<FuzzCase> cases, Map<String, Long> nanos) throws SQLException {
    Answer[] answers = new Answer[cases.size()];
    Map<String, List<Integer>> groups = new LinkedHashMap<>();
    for (int i = 0; i < cases.size(); i++) {
      FuzzCase k = cases.get(i);
      groups.computeIfAbsent(k.strategy() + "\u0000" + k.type(), x -> new ArrayList<>()).add(i);
    }
    for (List<Integer> group : groups.values()) {
      FuzzCase first = cases.get(group.get(0));
      String sql = "select c.i, to_jsonb(m.value)::text, m.conflict from unnest(?::int[], ?::text[], ?::text[],"
          + " ?::text[]) as c(i, b, o, t) cross join lateral " + call(first.strategy(), first.type()) + " m";
      try (PreparedStatement st = c.prepareStatement(sql)) {
        for (int from = 0; from < group.size(); from += BATCH) {
          List<Integer> batch = group.subList(from, Math.min(group.size(), from + BATCH));
          Integer[] ids = batch.toArray(Integer[]::new);
          String[][] inputs = new String[3][batch.size()];
          for (int k = 0; k < batch.size(); k++) {
            FuzzCase fc = cases.get(batch.get(k));
            inputs[0][k] = text(fc.base());
            inputs[1][k] = text(fc.ours());
            inputs[2][k] = text(fc.theirs());
          }
          st.setArray(1, c.createArrayOf("integer", ids));
          for (int s = 0; s < 3; s++) {
            st.setArray(2 + s, c.createArrayOf("text", inputs[s]));
          }
          long start = System.nanoTime();
          try (ResultSet rs = st.executeQuery()) {
            while (rs.next()) {
              answers[rs.getInt(1)] = new Answer(rs.getString(2), rs.getString(3));
            }
          }
          nanos.merge(first.strategy(), System.nanoTime() - start, Long::sum);
        }
      }
    }
    return answers;
  }

  /** Creates the SQL side of the custom strategy in the database. */
  static void createCustomFunction(Connection c) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(CUSTOM_FUNCTION_SQL);
    }
  }

  /** Where the two answers differ, or null when they agree. */
  static String compare(FuzzCase c, Resolution java, Answer sql) {
    if (sql == null) {
      return "PostgreSQL returned no row";
    }
    if (java instanceof Resolved r) {
      if (sql.conflict() != null) {
        return "Java resolved " + FuzzCase.show(r.value()) + ", PostgreSQL reported a conflict: " + sql.conflict();
      }
      String diff = differ(c.type(), r.value(), sql.value());
      return diff == null ? null : "Java resolved " + FuzzCase.show(r.value()) + ", PostgreSQL " + sql.value()
          + " (" + diff + ")";
    }
    Conflict conflict = (Conflict) java;
    if (sql.conflict() == null) {
      return "Java reported a conflict (" + conflict.reason() + "), PostgreSQL resolved " + sql.value();
    }
    String diff = differ(c.type(), c.ours(), sql.value());
    if (diff != null) {
      return "both conflict, but PostgreSQL's value is not ours: " + sql.value() + " (" + diff + ")";
    }
    if (!sameReason(conflict.reason(), sql.conflict())) {
      return "both conflict, with other reasons: Java '" + conflict.reason() + "', PostgreSQL '" + sql.conflict() + "'";
    }
    return null;
  }

  /**
   * Whether two reasons agree: equal, or for json the same paths (the Java reference lists them in its keys' order,
   * PostgreSQL in jsonb's; beyond five only the count is shown, so only the count is compared).
   */
  static boolean sameReason(String java, String sql) {
    if (java.equals(sql)) {
      return true;
    }
    String prefix = "json: both sides changed ";
    String suffix = " differently";
    if (!java.startsWith(prefix) || !sql.startsWith(prefix) || !java.endsWith(suffix) || !sql.endsWith(suffix)) {
      return false;
    }
    String a = java.substring(prefix.length(), java.length() - suffix.length());
    String b = sql.substring(prefix.length(), sql.length() - suffix.length());
    if (a.contains(" more paths") || b.contains(" more paths")) {
      return a.replaceAll(".* and ", "").equals(b.replaceAll(".* and ", ""));
    }
    List<String> x = new ArrayList<>(Arrays.asList(a.split(", ")));
    List<String> y = new ArrayList<>(Arrays.asList(b.split(", ")));
    x.sort(null);
    y.sort(null);
    return x.equals(y);
  }

  /** Why a Java value and the SQL value ({@code to_jsonb(value)::text}) differ, or null when they are the same. */
  static String differ(ColumnType type, Object java, String sql) {
    if (java == null || sql == null) {
      return java == null && sql == null ? null : "one is NULL";
    }
    JsonNode actual;
    try {
      actual = JSON.readTree(sql);
    } catch (Exception e) {
      return "unparsable: " + e.getMessage();
    }
    return switch (type.kind()) {
      case JSON -> Values.sameJson((JsonNode) java, actual) ? null : "other JSON";
      case ARRAY -> {
        List<?> l = (List<?>) java;
        if (!actual.isArray() || actual.size() != l.size()) {
          yield "other length";
        }
        for (int i = 0; i < l.size(); i++) {
          String d = differ(type.element(), l.get(i), actual.get(i).isNull() ? null : actual.get(i).toString());
          if (d != null) {
            yield "element " + (i + 1) + ": " + d;
          }
        }
        yield null;
      }
      case TEXT -> actual.isTextual() && actual.textValue().equals(java) ? null : "other text";
      default -> actual.isNumber() && Objects.equals(Values.decimal((Number) java), actual.decimalValue())
          ? null : "other number or scale";
    };
  }
}
