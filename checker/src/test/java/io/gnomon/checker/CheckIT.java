package io.gnomon.checker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The checker on real PostgreSQL: a short run with every fault kind must come out valid (but for the known Gnomon bug
 * below), and every mutant must be caught with the violation it causes. Seeds are random and printed.
 */
class CheckIT {

  @Test
  @Timeout(240)
  void aShortRunWithEveryFaultKindIsValid() throws Exception {
    long seed = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    Path dir = Path.of("target", "check-it", "faults-" + seed); // kept, to look into a failure
    System.out.println("CheckIT every fault kind: seed " + seed);
    CheckConfig config = CheckConfig.builder().duration(Duration.ofSeconds(18)).sessions(6).tables(2).seed(seed)
        .reportDir(dir).build();
    CheckResult r = Checker.run(config, System.out);
    assertTrue(r.status() != CheckResult.COULD_NOT_RUN, r.verdict() + " (seed " + seed + ")");
    @SuppressWarnings("unchecked")
    Map<String, Integer> faults = (Map<String, Integer>) r.counts().get("faults");
    assertEquals(Set.of("kill", "restart", "failover"), faults.keySet(), "seed " + seed);
    // Gnomon bugs the checker found are fixed, none is tolerated: coordinate-sees-own-writes and point-reads-leak
    // (03e1c0b), replay-error and the replay-mismatch of a coordinate taken in its own snapshot, and xid-reused
    // (coordinates carry the server incarnation since catalog version 6; reads the fault made inexact are refused
    // with GN013 and counted as "reads not replayable: coordinate lost in a fault").
    assertEquals(Map.of(), r.verification().violations(), r.verification().witnesses() + " (seed " + seed + ")");
    assertTrue(r.verification().checked().get("reads replayed") > 0);
    assertEquals(3, r.counts().get("branches created"), "seed " + seed);
    assertTrue(r.verification().checked().get("untouched branch keys compared with the parent at the cutoff") > 0);
    assertTrue(r.verification().checked().get("merges checked") >= 1, "seed " + seed);
    assertTrue(r.verification().checked().get("keys of merges checked against the three-way rule") > 0);
    assertTrue((Integer) r.counts().get("scratch branches created") >= 1, "seed " + seed);
    assertTrue(r.verification().checked().get("scratch branches checked") >= 1, "seed " + seed);
    assertTrue(r.verification().checked().get("branch keys compared with the branch shadows") > 0, "seed " + seed);
    assertTrue(r.verification().checked().get("branch history versions checked along their rows") > 0);
    assertTrue(r.verification().checked().get("feed events checked") > 0);
    assertTrue(r.verification().checked().get("pg_amcheck runs") >= 4, "after each fault and at the end");
    assertTrue((Long) r.counts().get("transactions committed") > 0);
    for (String file : List.of("result.json", "index.html", "history.jsonl")) {
      assertTrue(Files.size(dir.resolve(file)) > 0, file);
    }
    String html = Files.readString(dir.resolve("index.html"));
    assertTrue(html.contains("<svg") && html.contains("failover") && !html.contains("<script"));
  }

  /**
   * The same kind of run with every tracked table writing through the optional C module (built by gnomon-c; a missing
   * library fails the test rather than skipping it): kills, a crash-restart and a failover to a standby that loads the
   * same library, and everything verifies.
   */
  @Test
  @Timeout(240)
  void aShortRunThroughTheCModuleIsValid() throws Exception {
    String library = System.getProperty("gnomon.c.library");
    assertTrue(library != null && Files.isReadable(Path.of(library)),
        "-Dgnomon.c.library must name the built library (mvn builds gnomon-c before the checker's tests): " + library);
    long seed = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    Path dir = Path.of("target", "check-it", "c-module-" + seed);
    System.out.println("CheckIT C module: seed " + seed);
    CheckConfig config = CheckConfig.builder().duration(Duration.ofSeconds(12)).sessions(6).tables(2).seed(seed)
        .cModule(Path.of(library).toAbsolutePath().normalize().toString()).reportDir(dir).build();
    CheckResult r = Checker.run(config, System.out);
    assertTrue(r.status() != CheckResult.COULD_NOT_RUN, r.verdict() + " (seed " + seed + ")");
    assertEquals(Map.of(), r.verification().violations(), r.verification().witnesses() + " (seed " + seed + ")");
    assertTrue(r.verification().checked().get("reads replayed") > 0, "seed " + seed);
    assertTrue(r.verification().checked().get("feed events checked") > 0, "seed " + seed);
    assertTrue(r.verification().checked().get("merges checked") >= 1, "seed " + seed);
    assertTrue(Files.readString(dir.resolve("result.json")).contains("through the C module"), "the run used the C path");
  }

  /**
   * Failover to an asynchronous standby, cut off from the primary for a while before the primary dies: commits
   * acknowledged meanwhile are lost, listed and counted, and everything that survived verifies.
   */
  @Test
  @Timeout(200)
  void anAsynchronousFailoverLosesCommitsThatAreListedAndTheRestIsValid() {
    long seed = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    Path dir = Path.of("target", "check-it", "async-" + seed);
    System.out.println("CheckIT asynchronous failover: seed " + seed);
    CheckConfig config = CheckConfig.builder().duration(Duration.ofSeconds(10)).sessions(6).tables(2).branches(2)
        .scratch(2).faults(List.of("failover")).standby("async").seed(seed).reportDir(dir).build();
    CheckResult r = Checker.run(config, System.out);
    assertTrue(r.status() != CheckResult.COULD_NOT_RUN, r.verdict() + " (seed " + seed + ")");
    // no xid-reused either: reads as of coordinates the failover made inexact are refused (GN013) and listed
    assertEquals(Map.of(), r.verification().violations(), r.verification().witnesses() + " (seed " + seed + ")");
    assertTrue(r.verification().checked().getOrDefault("acknowledged commits lost by async failover", 0L) >= 1,
        "the failover lost nothing: " + r.verification().checked() + " (seed " + seed + ")");
    assertTrue(r.verification().losses().stream().anyMatch(l -> l.kind().equals(
        "acknowledged commits lost by async failover")));
    assertTrue(r.verification().checked().get("reads replayed") > 0);
  }

  @ParameterizedTest(name = "{0} is caught")
  @CsvSource({
    "trigger-skips-version, history-missing-version",
    "feed-by-sequence, feed-missing",
    "asof-ignores-in-progress, replay-mismatch",
    "branch-ignores-cutoff, branch-cutoff",
    "merge-drops-side, merge-lost-change"
  })
  @Timeout(180)
  void everyMutantIsCaught(String mutant, String violation) {
    long seed = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
    Path dir = Path.of("target", "check-it", mutant + "-" + seed); // kept, to look into a failure
    System.out.println("CheckIT mutant " + mutant + ": seed " + seed);
    boolean branches = mutant.startsWith("branch") || mutant.startsWith("merge");
    // no scratch branches: in a 6-second run they would take the branch writes a merge needs to meet both sides'
    // changes (and main's writes the feed mutant needs)
    CheckConfig config = CheckConfig.builder().duration(Duration.ofSeconds(6)).sessions(6).tables(2)
        .branches(branches ? 3 : 0).scratch(0).faults(List.of()).seed(seed).mutant(mutant).reportDir(dir)
        .build();
    ByteArrayOutputStream console = new ByteArrayOutputStream();
    CheckResult r = Checker.run(config, new PrintStream(console, true, StandardCharsets.UTF_8));
    assertEquals(CheckResult.VIOLATION, r.status(), r.verdict() + " (seed " + seed + ")\n" + console);
    assertTrue(r.verification().violations().containsKey(violation),
        "expected " + violation + ", found " + r.verification().byKind() + " (seed " + seed + ")");
    assertTrue(console.toString(StandardCharsets.UTF_8).contains("VIOLATION " + violation));
  }

  @Test
  void everyMutantIsRunnableAndTested() {
    assertEquals(List.of("trigger-skips-version", "feed-by-sequence", "asof-ignores-in-progress",
        "branch-ignores-cutoff", "merge-drops-side"), SqlMutant.runnable().stream().map(SqlMutant::cliName).toList());
  }
}
