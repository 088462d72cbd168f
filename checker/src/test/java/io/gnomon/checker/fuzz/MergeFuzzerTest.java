package io.gnomon.checker.fuzz;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.cli.Main;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The merge fuzzer passes on the real strategies, catches every mutant, and replays by seed. */
class MergeFuzzerTest {
  /** Fixed, so the suite is reproducible; printed by the fuzzer. Change it to explore. */
  private static final long SEED = 20_260_301L;

  private static String[] run(MergeFuzzer fuzzer, MergeFuzzer.Report[] report) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
      report[0] = fuzzer.run(out);
    }
    String text = bytes.toString(StandardCharsets.UTF_8);
    System.out.print(text);
    return new String[] {text};
  }

  @Test
  void twoHundredThousandCasesPass() {
    MergeFuzzer.Report[] report = new MergeFuzzer.Report[1];
    String out = run(new MergeFuzzer(200_000, SEED, 0, MergeFuzzer.STRATEGIES, null, 5_000), report)[0];
    assertTrue(out.startsWith("fuzz: seed " + SEED), out);
    assertTrue(report[0].passed(), out);
    assertEquals(200_000L, report[0].checked().get("identity"));
    assertTrue(report[0].checked().get("counter-arithmetic") > 10_000, report[0].toString());
    assertTrue(report[0].checked().get("mirroring") > 10_000, report[0].toString());
  }

  @Test
  void everyMutantIsCaught() {
    for (String mutant : MergeFuzzer.mutants()) {
      String strategy = Mutant.byName(mutant).orElseThrow().strategy();
      MergeFuzzer.Report[] report = new MergeFuzzer.Report[1];
      String out = run(new MergeFuzzer(5_000, SEED, 0, List.of(strategy), mutant, 5_000), report)[0];
      assertFalse(report[0].passed(), mutant + " was not caught:\n" + out);
      assertTrue(out.contains("minimised case: strategy " + strategy), out);
      assertTrue(out.contains("replay: ./gnomon fuzz --seed " + SEED + " --first-case "), out);
    }
  }

  @Test
  void counterDroppingTheirsFailsArithmeticAndSymmetryWithASmallCase() {
    MergeFuzzer.Report[] report = new MergeFuzzer.Report[1];
    String out = run(new MergeFuzzer(20_000, SEED, 0, MergeFuzzer.STRATEGIES, "counter-drops-theirs", 5_000),
        report)[0];
    assertTrue(report[0].failed().get("counter-arithmetic") > 0, out);
    assertTrue(report[0].failed().get("symmetry") > 0, out);
    assertEquals(0L, report[0].failed().get("identity"), out);
    // the shrinker brings the numbers down: the minimised base is a small number
    String minimised = out.substring(out.indexOf("minimised case"));
    assertTrue(minimised.lines().skip(1).findFirst().orElseThrow().matches("\\s+base\\s+= (NULL|\\w+ -?\\d{1,4}(\\.\\d+)?)"),
        minimised);
  }

  @Test
  void aSeedReplaysTheSameCases() {
    MergeFuzzer a = new MergeFuzzer(1, SEED, 0, MergeFuzzer.STRATEGIES, null, 5_000);
    MergeFuzzer b = new MergeFuzzer(1, SEED, 0, MergeFuzzer.STRATEGIES, null, 5_000);
    MergeFuzzer other = new MergeFuzzer(1, SEED + 1, 0, MergeFuzzer.STRATEGIES, null, 5_000);
    for (long i = 0; i < 200; i++) {
      assertEquals(a.generate(i).describe(), b.generate(i).describe());
    }
    assertNotEquals(a.generate(5).describe() + a.generate(6).describe(),
        other.generate(5).describe() + other.generate(6).describe());
    assertEquals(List.of(), a.failures(17));
  }

  private static Object[] cli(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      status = Main.run(args, o, e);
    }
    return new Object[] {status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8)};
  }

  @Test
  void commandLine() {
    Object[] ok = cli("fuzz", "--cases", "2000", "--seed", "5", "--sql-sample", "0");
    assertEquals(0, ok[0], ok[1] + "" + ok[2]);
    assertTrue(((String) ok[1]).startsWith("fuzz: seed 5,"), (String) ok[1]);
    assertTrue(((String) ok[1]).contains("no law failed"), (String) ok[1]);

    Object[] caught = cli("fuzz", "--cases", "2000", "--seed", "5", "--strategy", "counter", "--mutant",
        "counter-drops-theirs", "--sql-sample", "0");
    assertEquals(1, caught[0], (String) caught[1]);
    assertTrue(((String) caught[1]).contains("law counter-arithmetic FAILED"), (String) caught[1]);

    for (String[] bad : new String[][] {{"fuzz", "--cases", "many"}, {"fuzz", "--strategy", "sum"},
        {"fuzz", "--mutant", "nope"}, {"fuzz", "--cases", "-1"}, {"fuzz", "extra"},
        {"fuzz", "--sql-sample", "-5"}, {"fuzz", "--sql-sample", "some"}}) {
      Object[] r = cli(bad);
      assertEquals(2, r[0], String.join(" ", bad) + ": " + r[2]);
      assertTrue(((String) r[2]).contains("usage: ./gnomon fuzz"), (String) r[2]);
    }
    Object[] help = cli("help", "fuzz");
    assertEquals(0, help[0]);
    assertTrue(((String) help[1]).contains("through PostgreSQL"), (String) help[1]);
    assertFalse(((String) help[1]).contains("mutant"), "the mutants stay hidden from the help");
    assertTrue(((String) cli("help")[1]).contains("  fuzz "));
  }
}
