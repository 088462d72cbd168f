package io.gnomon.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** {@code ./gnomon check}'s command line: mutants, help, and bad flags; no database. */
class CheckCommandTest {

  @Test
  void listMutantsPrintsOneNamePerLine() {
    Cli.Run r = Cli.run("check", "--list-mutants");
    assertEquals(0, r.status());
    String[] lines = r.out().strip().split("\n");
    assertEquals("trigger-skips-version", lines[0]);
    assertEquals("feed-by-sequence", lines[1]);
    assertEquals("asof-ignores-in-progress", lines[2]);
    assertEquals("branch-ignores-cutoff", lines[3]);
    assertEquals("merge-drops-side", lines[4]);
  }

  @Test
  void helpListsEveryOptionWithItsDefault() {
    Cli.Run r = Cli.run("check", "--help");
    assertEquals(0, r.status());
    for (String option : new String[] {"--duration", "--sessions", "--tables", "--branches", "--isolation", "--faults",
        "--seed", "--report", "--mutant", "--c-module", "--list-mutants"}) {
      assertTrue(r.out().contains(option), option);
    }
    assertTrue(Cli.run("help").out().contains("  check "));
  }

  @Test
  void badFlagsNameTheFlagAndWhatToDo() {
    assertUsage(new String[] {"check", "--sessions", "0"}, "--sessions must be between 1 and 64, got 0");
    assertUsage(new String[] {"check", "--duration", "soon"}, "--duration must be a time such as 60s");
    assertUsage(new String[] {"check", "--isolation", "rc,snapshot"}, "--isolation: unknown level 'snapshot'");
    assertUsage(new String[] {"check", "--faults", "kill,meteor"}, "--faults: unknown fault 'meteor'");
    assertUsage(new String[] {"check", "--mutant", "nope"}, "--list-mutants lists them");
    assertUsage(new String[] {"check", "--mutant", "merge-drops-side", "--branches", "0"}, "needs branches");
    assertUsage(new String[] {"check", "--seed", "x"}, "--seed must be a whole number");
    assertUsage(new String[] {"check", "--mutant", "branch-ignores-cutoff", "--branches", "0"}, "needs branches");
    assertUsage(new String[] {"check", "--frobnicate"}, "unknown option --frobnicate");
    assertUsage(new String[] {"check", "--c-module", "gnomon.so"}, "--c-module: 'gnomon.so' is not an absolute path");
    assertUsage(new String[] {"check", "--c-module", "installed", "--mutant", "merge-drops-side"},
        "run mutants without --c-module");
    // every problem at once
    Cli.Run r = Cli.run("check", "--sessions", "0", "--tables", "99");
    assertTrue(r.err().contains("--sessions") && r.err().contains("--tables must be between 1 and 20"), r.err());
  }

  @Test
  void durationsTakeUnits() throws UsageException {
    assertEquals(Duration.ofSeconds(60), CheckCommand.duration("60s"));
    assertEquals(Duration.ofMinutes(2), CheckCommand.duration("2m"));
    assertEquals(Duration.ofMillis(500), CheckCommand.duration("500ms"));
    assertEquals(Duration.ofSeconds(90), CheckCommand.duration("90"));
  }

  /** The option table of docs/checker.md lists exactly CheckConfig's knobs, with their defaults and meanings. */
  @Test
  void theDocsOptionTableIsCheckConfigsKnobs() throws java.io.IOException {
    java.util.Map<String, String> documented = new java.util.LinkedHashMap<>();
    java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^\\| `--([a-z-]+)` \\| (.*?) \\| (.*?) \\|$")
        .matcher(java.nio.file.Files.readString(Docs.file("docs/checker.md")));
    while (m.find()) {
      documented.put(m.group(1), m.group(2).replace("&lt;", "<").replace("&gt;", ">") + " — " + m.group(3));
    }
    assertEquals(io.gnomon.checker.CheckConfig.KNOBS, documented);
  }

  private static void assertUsage(String[] args, String message) {
    Cli.Run r = Cli.run(args);
    assertEquals(2, r.status(), String.join(" ", args));
    assertTrue(r.err().contains(message), r.err());
    assertTrue(r.err().contains("usage: ./gnomon check"), r.err());
  }
}
