package io.gnomon.checker.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.gnomon.internal.Errors;
import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.JsonOptions;
import io.gnomon.merge.Merge;
import io.gnomon.merge.MergeLimitExceededException;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategies;
import io.gnomon.sql.Catalog;
import io.gnomon.testkit.GnomonDatabase;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The differential test of the merge strategies: seeded random cases go through the Java reference ({@link
 * Merge#column}) and through the SQL functions ({@code gnomon.merge_*}) in batches, and the answers must be identical
 * (the same value, or both a conflict with the same reason). The cases are the merge fuzzer's (its generators, every
 * strategy) plus {@link EdgeCases}. Replay a run with {@code -Dgnomon.merge.seed=S}; size it with
 * {@code -Dgnomon.merge.cases=N}.
 */
class SqlStrategiesIT {
  @RegisterExtension
  static final GnomonDatabase db = GnomonDatabase.fromTemplate("gnomon_catalog_v" + Catalog.VERSION, Catalog::install);

  /** Fixed, so the suite is reproducible; printed first. Pass another with -Dgnomon.merge.seed=S to explore. */
  private static final long SEED = Long.getLong("gnomon.merge.seed", 20_261_130L);
  private static final int CASES = Integer.getInteger("gnomon.merge.cases", 20_000);
  private static final int SHOWN = 10;

  @BeforeAll
  static void customFunction() throws SQLException {
    try (Connection c = db.connect()) {
      SqlStrategies.createCustomFunction(c);
    }
  }

  @Test
  void fuzzerCasesAgree() throws SQLException {
    System.out.println("SqlStrategiesIT: seed " + SEED + " (replay with -Dgnomon.merge.seed=" + SEED + "), " + CASES
        + " fuzzer cases");
    MergeFuzzer fuzzer = new MergeFuzzer(CASES, SEED, 0, MergeFuzzer.STRATEGIES, null, 60_000);
    List<FuzzCase> cases = new ArrayList<>(CASES * 5 / 4);
    for (int i = 0; i < CASES; i++) {
      FuzzCase c = fuzzer.generate(i);
      cases.add(c);
      if (c.strategy().equals("json")) {
        cases.add(new FuzzCase(SqlStrategies.JSON_SETS, c.type(), c.base(), c.ours(), c.theirs()));
      }
    }
    agree(cases, "fuzzer");
  }

  @Test
  void edgeCasesAgree() throws SQLException {
    System.out.println("SqlStrategiesIT: seed " + SEED + " (replay with -Dgnomon.merge.seed=" + SEED + ")");
    agree(EdgeCases.of(SEED, Math.max(100, CASES / 10)), "edge");
  }

  /** Merges the cases on both sides and fails with the first differences, each with its seed and case. */
  private static void agree(List<FuzzCase> cases, String kind) throws SQLException {
    SqlStrategies.Answer[] answers;
    Map<String, Long> nanosBy = new TreeMap<>();
    long start = System.nanoTime();
    try (Connection c = db.connect()) {
      answers = SqlStrategies.merge(c, cases, nanosBy);
    }
    long nanos = System.nanoTime() - start;
    Map<String, int[]> byStrategy = new TreeMap<>();
    List<String> differences = new ArrayList<>();
    int conflicts = 0;
    for (int i = 0; i < cases.size(); i++) {
      FuzzCase c = cases.get(i);
      Resolution java = SqlStrategies.reference(c);
      conflicts += java.isConflict() ? 1 : 0;
      String diff = SqlStrategies.compare(c, java, answers[i]);
      int[] counts = byStrategy.computeIfAbsent(c.strategy(), k -> new int[2]);
      counts[0]++;
      if (diff != null) {
        counts[1]++;
        if (differences.size() < SHOWN) {
          differences.add("case " + i + ": " + c.describe() + "\n    " + diff);
        }
      }
    }
    System.out.printf(Locale.ROOT, "SqlStrategiesIT: %,d %s cases (%,d conflicts) through PostgreSQL in %.2f s:"
        + " %,.0f cases/s; by strategy (cases, differences, cases/s): %s%n", cases.size(), kind, conflicts,
        nanos / 1e9, cases.size() * 1e9 / nanos, describe(byStrategy, nanosBy));
    assertTrue(differences.isEmpty(), "Java and SQL disagree (seed " + SEED + ", -Dgnomon.merge.seed=" + SEED + "):\n  "
        + String.join("\n  ", differences));
    for (String s : SqlStrategies.REFERENCE.keySet()) {
      assertTrue(byStrategy.containsKey(s), "no " + kind + " case for strategy " + s);
    }
    assertTrue(conflicts > cases.size() / 50, "too few conflicts to prove anything: " + conflicts);
  }

  private static String describe(Map<String, int[]> byStrategy, Map<String, Long> nanos) {
    StringBuilder b = new StringBuilder();
    byStrategy.forEach((k, v) -> b.append(b.length() == 0 ? "" : ", ").append(k).append(' ').append(v[0])
        .append('/').append(v[1]).append(String.format(Locale.ROOT, "/%,.0f", v[0] * 1e9 / nanos.get(k))));
    return b.toString();
  }

  @Test
  void jsonLimitsAreErrorsOnBothSides() throws Exception {
    ObjectMapper mapper = new ObjectMapper();
    String deep = "1";
    for (int i = 0; i < 65; i++) {
      deep = "{\"a\":" + deep + "}";
    }
    String shallower = deep.substring("{\"a\":".length(), deep.length() - 1); // 64 levels: allowed
    StringBuilder big = new StringBuilder("{\"k\":[");
    for (int i = 0; i < 60_000; i++) {
      big.append(i == 0 ? "" : ",").append(i);
    }
    String wide = big.append("]}").toString();
    String wide2 = wide.replace("[0,", "[-1,");
    ColumnType json = ColumnType.json();
    // deeper than 64, in ours; more than 100,000 nodes together; the same within the limits
    assertLimit(mapper, "{}", deep, "{\"b\":1}", true, JsonOptions.defaults(), "");
    assertLimit(mapper, "{}", "{\"b\":2}", deep, true, JsonOptions.defaults(), "");
    assertLimit(mapper, "{}", shallower, "{\"b\":1}", false, JsonOptions.defaults(), "");
    assertLimit(mapper, "{}", wide, wide2, true, JsonOptions.defaults(), "");
    assertLimit(mapper, "{}", wide, "{\"b\":1}", false, JsonOptions.defaults(), "");
    // custom limits
    assertLimit(mapper, "{}", "{\"a\":{\"b\":{\"c\":1}}}", "{\"b\":1}", true, new JsonOptions(2, 100, false),
        ", false, 2, 100");
    assertLimit(mapper, "{}", "{\"a\":{\"b\":1}}", "{\"b\":1}", false, new JsonOptions(2, 100, false),
        ", false, 2, 100");
    assertLimit(mapper, "{\"x\":[1,2,3]}", "{\"x\":[1,2,3,4]}", "{\"x\":[0]}", true, new JsonOptions(9, 9, false),
        ", false, 9, 9");
    assertLimit(mapper, "{\"x\":[1,2]}", "{\"x\":[1,2,4]}", "{\"x\":[0]}", false, new JsonOptions(9, 12, true),
        ", true, 9, 12");
    assertLimit(mapper, "{\"x\":[1,2]}", "{\"x\":[1,2,4]}", "{\"x\":[0]}", true, new JsonOptions(9, 11, true),
        ", true, 9, 11");
    // equal sides converge before any walk, on both sides
    assertInstanceOf(Resolved.class, Merge.column(Column.of("c", json), Strategies.json(), null,
        mapper.readTree(deep), mapper.readTree(deep)));
    try (Connection c = db.connect();
        PreparedStatement st = c.prepareStatement("select value::text, conflict from gnomon.merge_json(null, ?::jsonb,"
            + " ?::jsonb)")) {
      st.setString(1, deep);
      st.setString(2, deep);
      try (ResultSet rs = st.executeQuery()) {
        assertTrue(rs.next());
        assertNull(rs.getString(2));
      }
    }
  }

  private static void assertLimit(ObjectMapper mapper, String b, String o, String t, boolean exceeds,
      JsonOptions options, String sqlOptions) throws Exception {
    Column column = Column.of("c", ColumnType.json());
    JsonNode[] v = {mapper.readTree(b), mapper.readTree(o), mapper.readTree(t)};
    String sql = "select value::text, conflict from gnomon.merge_json(?::jsonb, ?::jsonb, ?::jsonb" + sqlOptions + ")";
    try (Connection c = db.connect(); PreparedStatement st = c.prepareStatement(sql)) {
      st.setString(1, b);
      st.setString(2, o);
      st.setString(3, t);
      if (exceeds) {
        assertThrows(MergeLimitExceededException.class,
            () -> Merge.column(column, Strategies.json(options), v[0], v[1], v[2]));
        SQLException e = assertThrows(SQLException.class, st::executeQuery);
        assertEquals("GN040", e.getSQLState(), e.getMessage());
        assertInstanceOf(MergeLimitExceededException.class, Errors.translate("merging", e)); // one exception, both
      } else {
        Resolution java = Merge.column(column, Strategies.json(options), v[0], v[1], v[2]);
        try (ResultSet rs = st.executeQuery()) {
          assertTrue(rs.next());
          FuzzCase fc = new FuzzCase("json", ColumnType.json(), v[0], v[1], v[2]);
          assertNull(SqlStrategies.compare(fc, java, new SqlStrategies.Answer(rs.getString(1), rs.getString(2))),
              o + " / " + t);
        }
      }
    }
  }

  @Test
  void unionOnMultiDimensionalArraysConflictsOnBothSides() throws SQLException {
    // the fuzzer's arrays are one-dimensional (its SQL input is built from a jsonb list): these are hand-written
    Column col = Column.of("c", ColumnType.arrayOf(ColumnType.int4()));
    Object[][] cases = {
        {"{{1,2}}", "{{1,2},{3,4}}", "{{1,2},{5,6}}", List.of(List.of(1L, 2L)), List.of(List.of(1L, 2L), List.of(3L, 4L)),
            List.of(List.of(1L, 2L), List.of(5L, 6L))},
        {"{1}", "{1,2}", "{{1,3}}", List.of(1L), List.of(1L, 2L), List.of(List.of(1L, 3L))},
        {"{{{1}}}", "{1,2}", "{1,3}", List.of(List.of(List.of(1L))), List.of(1L, 2L), List.of(1L, 3L)}};
    try (Connection c = db.connect();
        PreparedStatement ps = c.prepareStatement(
            "select m.value::text, m.conflict from gnomon.merge_union(?::int[], ?::int[], ?::int[]) m")) {
      for (Object[] k : cases) {
        for (boolean mirrored : new boolean[] {false, true}) {
          ps.setString(1, (String) k[0]);
          ps.setString(2, (String) k[mirrored ? 2 : 1]);
          ps.setString(3, (String) k[mirrored ? 1 : 2]);
          Resolution java = Merge.column(col, Strategies.union(), k[3], k[mirrored ? 5 : 4], k[mirrored ? 4 : 5]);
          io.gnomon.merge.Conflict conflict = assertInstanceOf(io.gnomon.merge.Conflict.class, java);
          try (ResultSet rs = ps.executeQuery()) {
            assertTrue(rs.next());
            assertEquals(k[mirrored ? 2 : 1], rs.getString(1), "a conflict's value is ours");
            assertEquals(conflict.reason(), rs.getString(2), "the same reason in SQL and Java for " + List.of(k));
          }
        }
      }
    }
  }

  @Test
  void sqlOnlyInputs() throws SQLException {
    // what the Java reference cannot hold: NaN and infinities in a counter, ordered types beyond numbers and text,
    // varchar; and three untyped literals, which resolve to text
    try (Connection c = db.connect(); Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select a.conflict, b.conflict, m.value::text, v.value, u.value::text"
            + " from gnomon.merge_counter(1::numeric, 'NaN', 2) a,"
            + " gnomon.merge_counter(0::numeric, 'Infinity', '-Infinity', 10, 2) b,"
            + " gnomon.merge_max(date '2026-01-01', date '2026-03-01', date '2026-02-01') m,"
            + " gnomon.merge_min('b'::varchar, '\u00e9'::varchar, 'z'::varchar) v,"
            + " gnomon.merge_fail('a', 'b', 'b') u")) {
      assertTrue(rs.next());
      assertEquals("counter: the result NaN is not a finite number", rs.getString(1));
      assertEquals("counter: the result NaN is not a finite number", rs.getString(2));
      assertEquals("2026-03-01", rs.getString(3));
      assertEquals("z", rs.getString(4)); // code point order: z (U+007A) before é (U+00E9)
      assertEquals("b", rs.getString(5));
    }
  }

  @Test
  void customStrategyContract() throws SQLException {
    try (Connection c = db.connect(); Statement st = c.createStatement()) {
      // called only when both sides changed; a conflict's value is ours whatever the function returned
      st.execute("create function public.merge_test_refuse(base integer, ours integer, theirs integer,"
          + " out value integer, out conflict text) language sql immutable as"
          + " $$ select 42, 'refused: ' || base || '/' || ours || '/' || theirs $$");
      try (ResultSet rs = st.executeQuery("select m.value, m.conflict from (values (1, 1, 2), (1, 2, 1), (1, 3, 3),"
          + " (1, 2, 3)) v(b, o, t) cross join lateral gnomon.merge_custom(v.b, v.o, v.t,"
          + " 'public.merge_test_refuse(integer,integer,integer)') m")) {
        List<String> rows = new ArrayList<>();
        while (rs.next()) {
          rows.add(rs.getInt(1) + " " + rs.getString(2));
        }
        assertEquals(List.of("2 null", "2 null", "3 null", "2 refused: 1/2/3"), rows);
      }
      // a function of another shape is refused with GN021
      SQLException e = assertThrows(SQLException.class, () -> st.executeQuery(
          "select * from gnomon.merge_custom(1, 2, 3, 'int4pl(integer,integer)')"));
      assertEquals("GN021", e.getSQLState(), e.getMessage());
    }
  }
}
