package io.gnomon.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * {@code ./gnomon demo} end to end on real PostgreSQL: it starts its own throwaway cluster (or uses GNOMON_JDBC_URL),
 * and every step must print what a newcomer is told it prints.
 */
class DemoIT {
  private static Cli.Run demo;
  private static List<String> lines;

  @BeforeAll
  static void runDemo() {
    long started = System.nanoTime();
    demo = Cli.run("demo");
    long seconds = (System.nanoTime() - started) / 1_000_000_000L;
    lines = demo.out().lines().toList();
    assertEquals(0, demo.status(), demo.all());
    assertTrue(seconds < 60, "the demo took " + seconds + " s; it must finish well under a minute");
  }

  @Test
  void finishesAndSaysSo() {
    assertTrue(demo.out().contains("Demo finished in"), demo.all());
    assertTrue(demo.out().contains("every step returned what it should"), demo.all());
    assertEquals("", demo.err(), demo.all());
  }

  @Test
  void readAsOfTheCoordinateShowsTheOldRows() {
    List<String> rows = resultOf("select * from gnomon_t.account_as_of('v2:");
    assertEquals(List.of(
        " id | owner | balance",
        "----+-------+---------",
        "  1 | alice |  100.00",
        "  2 | bob   |   50.00",
        "  3 | carol |   75.00",
        "(3 rows)"), rows, demo.all());
  }

  @Test
  void liveTableShowsTheNewRows() {
    assertEquals(List.of(
        " id | owner | balance",
        "----+-------+---------",
        "  1 | alice |   70.00",
        "  3 | carol |   75.00",
        "  4 | dave  |   20.00",
        "(3 rows)"), resultOf("select * from account order by id;"), demo.all());
  }

  @Test
  void readAsOfATimeShowsTheValueThen() {
    List<String> rows = resultOf("select * from gnomon_t.account_as_of(timestamptz '");
    assertEquals("  1 | alice |   70.00", rows.get(2), demo.all());
    assertTrue(demo.out().contains("jshell> gnomon.startTicker();"), demo.all());
  }

  @Test
  void javaReadsShowTheOldRows() {
    assertTrue(demo.out().contains("jshell> try (PreparedStatement ps = gnomon.asOf(before).prepare("), demo.all());
    assertTrue(demo.out().contains("|   1|alice| 100.00|"), "jOOQ's result: " + demo.all());
    assertTrue(demo.out().contains("|   2|bob  |  50.00|"), "jOOQ's result: " + demo.all());
  }

  @Test
  void showsACheckpoint() {
    assertTrue(demo.out().contains("gnomon_demo=# select gnomon.checkpoint('public.account');"), demo.all());
    assertEquals(" checkpoint", resultOf("select gnomon.checkpoint('public.account');").get(0), demo.all());
  }

  @Test
  void showsTheChangeFeedInSqlAndAsJson() {
    List<String> page = resultOf("select event_position, op, key, before, after from gnomon.feed_read('demo', 10);");
    assertEquals(6, page.size(), demo.all());
    assertTrue(page.get(2).matches(" v1:\\d+:\\d+:\\d+ +\\| u +\\| \\{\"id\":3\\}.*\"balance\":999.00.*\"balance\":1004.00.*"),
        page.get(2) + "\n" + demo.all());
    assertTrue(page.get(3).contains("| c  | {\"id\":5}"), demo.all());
    assertTrue(page.get(4).contains("| d  | {\"id\":4}"), demo.all());
    assertTrue(demo.out().contains("jshell> Feed feed = Feed.open(dataSource);"), demo.all());
    List<String> json = lines.stream().filter(l -> l.startsWith("  {\"id\":\"v1:")).toList();
    assertEquals(3, json.size(), demo.all());
    assertTrue(json.get(0).contains("\"op\":\"u\""), json.get(0));
    assertTrue(json.get(0).contains("\"source\":{\"version\":\"1\",\"connector\":\"gnomon\""), json.get(0));
    assertTrue(json.get(0).contains("\"table\":\"account\""), json.get(0));
    assertTrue(json.get(0).contains("\"key\":{\"id\":3}"), json.get(0));
    assertTrue(json.get(1).contains("\"before\":null,\"after\":{"), json.get(1));
    assertTrue(json.get(2).contains("\"after\":null"), json.get(2));
    assertEquals(List.of(" count", "-------", "     0", "(1 row)"),
        resultOf("select count(*) from gnomon.feed_read('demo', 10);"), demo.all());
  }

  @Test
  void showsBranchesAtEveryLevelAndTheirDiff() {
    assertEquals(List.of(
        " branch_name | parent  |  kind  | depth",
        "-------------+---------+--------+-------",
        " experiment  | feature | logged |     2",
        " feature     | main    | logged |     1",
        "(2 rows)"), resultOf("select branch_name, parent, kind, depth from gnomon.branches();"), demo.all());
    assertEquals(List.of(
        " id | owner | balance",
        "----+-------+---------",
        "  1 | alice |  100.00",
        "  3 | carol | 1004.00",
        "  5 | erin  |   10.00",
        "  6 | frank |   60.00",
        "(4 rows)"), resultOf("select * from gnomon_t.account_at(gnomon.point('feature')) order by id;"), demo.all());
    assertEquals(List.of(
        " id | owner | balance",
        "----+-------+---------",
        "  1 | alice |  100.00",
        "  5 | erin  |   10.00",
        "  6 | frank |   60.00",
        "(3 rows)"), resultOf("select * from gnomon_t.account_at(gnomon.point('experiment')) order by id;"), demo.all());
    List<String> diff = resultOf("from gnomon.diff('account', gnomon.point('main'), gnomon.point('experiment'))");
    assertEquals(6, diff.size(), demo.all());
    assertTrue(diff.get(2).matches(" update +\\| \\{\"id\": 1\\} +\\| +0\\.00 +\\| +100\\.00"), diff.get(2));
    assertTrue(diff.get(3).matches(" delete +\\| \\{\"id\": 3\\} +\\| +1004\\.00 +\\| *"), diff.get(3));
    assertTrue(diff.get(4).matches(" insert +\\| \\{\"id\": 6\\} +\\| +\\| +60\\.00"), diff.get(4));
    assertTrue(demo.out().contains("jshell> for (DiffRow d : gnomon.diff(\"public.account\", Point.main(),"), demo.all());
    // the Java diff: the branch's new row for alice, and frank inserted
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("  update {\"id\":1} {\"id\":1,\"owner\":\"alice\",\"balance\":100")),
        demo.all());
    assertTrue(lines.stream().anyMatch(l -> l.startsWith("  insert {\"id\":6} {\"id\":6,\"owner\":\"frank\"")),
        demo.all());
  }

  @Test
  void showsAMergeThatStopsOnAConflictAndAppliesOnceResolved() {
    List<String> first = resultOf("from gnomon.merge('experiment', 'main');");
    assertTrue(first.get(2).matches(" +\\d+ \\| conflicts \\| +1 \\| +1 \\| +1"), first.get(2));
    List<String> conflicts = resultOf("from gnomon.merge_conflicts(");
    assertTrue(conflicts.get(2).contains("balance") && conflicts.get(2).contains("0.00") && conflicts.get(2).contains("5.00")
        && conflicts.get(2).contains("100.00"), conflicts.get(2));
    assertEquals(List.of(
        " status  | adds | modifications | deletes | conflicts",
        "---------+------+---------------+---------+-----------",
        " applied |    1 |             1 |       1 |         0",
        "(1 row)"), resultOf("select status, adds, modifications, deletes, conflicts from gnomon.merge('experiment', 'main');"),
        demo.all());
  }

  @Test
  void showsErrorsWithTheirSqlstate() {
    assertTrue(demo.out().contains("ERROR:  table audit_log has no primary key"), demo.all());
    assertTrue(demo.out().contains("-- SQLSTATE GN003 (NO_PRIMARY_KEY)"), demo.all());
    assertTrue(demo.out().contains("Exception io.gnomon.NoPrimaryKeyException"), demo.all());
    assertTrue(demo.out().contains("-- SQLSTATE GN006 (UNSUPPORTED_DDL)"), demo.all());
  }

  @Test
  void everyStepIsNumberedAndExplained() {
    List<String> headings = lines.stream().filter(l -> l.startsWith("== ")).toList();
    assertTrue(headings.size() >= 8, headings.toString());
    for (int i = 0; i < headings.size(); i++) {
      assertTrue(headings.get(i).startsWith("== " + (i + 1) + ". "), headings.toString());
    }
  }

  /** The result lines printed after the first prompt line that contains {@code sql}, up to the row count. */
  private static List<String> resultOf(String sql) {
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).startsWith("  gnomon_demo") && lines.get(i).contains(sql)) {
        int end = i + 1;
        while (end < lines.size() && !lines.get(end).matches(" *\\(\\d+ rows?\\)")) {
          end++;
        }
        return lines.subList(i + 1, Math.min(end + 1, lines.size())).stream().map(l -> l.substring(2)).toList();
      }
    }
    throw new AssertionError("the demo ran no statement containing " + sql + "\n" + demo.all());
  }
}
