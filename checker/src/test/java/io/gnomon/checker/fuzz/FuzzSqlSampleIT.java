package io.gnomon.checker.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.cli.Main;
import io.gnomon.sql.Catalog;
import io.gnomon.testkit.GnomonDatabase;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The fuzzer's SQL sample ({@code ./gnomon fuzz --sql-sample N}): the real SQL strategies agree with the Java reference
 * on a seeded sample, a deliberately broken SQL strategy is caught with a minimised case and a replay command, and the
 * command line runs the sample on a throwaway cluster by default.
 */
class FuzzSqlSampleIT {
  @RegisterExtension
  static final GnomonDatabase db = GnomonDatabase.fromTemplate("gnomon_catalog_v" + Catalog.VERSION, Catalog::install);

  private static final long SEED = Long.getLong("gnomon.merge.seed", 20_261_130L);

  @Test
  void theSampleAgreesAndABrokenSqlStrategyIsCaught() throws SQLException {
    System.out.println("FuzzSqlSampleIT: seed " + SEED + " (replay with -Dgnomon.merge.seed=" + SEED + ")");
    try (Connection c = db.connect()) {
      MergeFuzzer.prepareDatabase(c);
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      MergeFuzzer fuzzer = new MergeFuzzer(20_000, SEED, 0, MergeFuzzer.STRATEGIES, null, 60_000);
      MergeFuzzer.SqlReport ok = fuzzer.checkSqlSample(c, 3_000, print(bytes));
      String text = bytes.toString(StandardCharsets.UTF_8);
      assertTrue(ok.agreed(), text);
      assertEquals(3_000, ok.cases(), text);
      for (String s : MergeFuzzer.STRATEGIES) {
        assertTrue(ok.compared().get(s) > 0, "no sampled case for " + s + ": " + text);
      }
      assertTrue(text.contains("SQL and Java agree on every sampled case (seed " + SEED + ")"), text);

      // a deliberately broken SQL strategy: max that takes the smaller side when both changed
      try (Statement st = c.createStatement()) {
        st.execute("""
            create or replace function gnomon.merge_max(base anycompatible, ours anycompatible, theirs anycompatible)
            returns table (value anycompatible, conflict text) language sql immutable as $$
              select m.value, m.conflict from gnomon.merge_min(base, ours, theirs) m
            $$""");
      }
      bytes.reset();
      MergeFuzzer maxOnly = new MergeFuzzer(20_000, SEED, 0, List.of("max", "counter"), null, 60_000);
      MergeFuzzer.SqlReport caught = maxOnly.checkSqlSample(c, 2_000, print(bytes));
      text = bytes.toString(StandardCharsets.UTF_8);
      assertTrue(caught.mismatched().get("max") > 0, text);
      assertEquals(0L, caught.mismatched().get("counter"), "only the broken strategy disagrees: " + text);
      assertTrue(text.contains("SQL and Java DISAGREE on strategy max, case "), text);
      assertTrue(text.contains("minimised case: strategy max"), text);
      assertTrue(text.contains("replay: ./gnomon fuzz --seed " + SEED + " --first-case "), text);
      assertTrue(text.contains("fuzz: SQL FAILED"), text);
    }
  }

  @Test
  void theCommandLineSendsASampleThroughAThrowawayCluster() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Main.run(new String[] {"fuzz", "--cases", "5000", "--seed", "5", "--sql-sample", "500"}, print(out),
        print(err));
    String text = out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
    assertEquals(0, status, text);
    assertTrue(text.contains("fuzz: no law failed (seed 5)"), text);
    assertTrue(text.contains("fuzz: SQL sample: 500 cases through PostgreSQL"), text);
    assertTrue(text.contains("SQL and Java agree on every sampled case (seed 5)"), text);
  }

  private static PrintStream print(ByteArrayOutputStream bytes) {
    return new PrintStream(bytes, true, StandardCharsets.UTF_8);
  }
}
