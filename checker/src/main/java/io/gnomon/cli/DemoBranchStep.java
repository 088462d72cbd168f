package io.gnomon.cli;

import io.gnomon.DiffRow;
import io.gnomon.Gnomon;
import io.gnomon.Point;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The demo's branch step: a branch of main and a branch of that branch, ordinary SQL writes on each, the table read
 * at every level, and the diff of main against the nested branch in SQL and Java. Checks every read and the diff.
 * Expects main to hold {@link #MAIN} when it starts, and leaves the session on main.
 */
final class DemoBranchStep {
  /** What main holds when the step starts (after the feed step): id|owner|balance. */
  static final List<String> MAIN = List.of("1|alice|0.00", "3|carol|1004.00", "5|erin|10.00");

  private final Transcript t;

  DemoBranchStep(Transcript transcript) {
    this.t = transcript;
  }

  void run(Connection c, Gnomon gnomon) throws SQLException {
    t.step("Branches: change a copy of the table, not the table");
    t.say("A branch is a named copy-on-write line of history: creating one writes one catalog row and copies nothing. "
        + "gnomon.branch_use() selects it for the session; ordinary SQL on the table's unqualified name then reads and "
        + "writes the branch (a view in schema gnomon_b_public), and main does not change.");
    t.sql(c, "select gnomon.branch_create('feature');");
    t.sql(c, "select gnomon.branch_use('feature');");
    t.sql(c, "update account set balance = balance + 100 where id = 1;");
    t.sql(c, "insert into account values (6, 'frank', 60.00);");
    t.say("A branch of a branch starts from its parent as it is now:");
    t.sql(c, "select gnomon.branch_create('experiment', 'feature');");
    t.sql(c, "select gnomon.branch_use('experiment');");
    t.sql(c, "delete from account where id = 3;");
    t.sql(c, "select gnomon.branch_use('main');");
    t.sql(c, "select branch_name, parent, kind, depth from gnomon.branches();");
    t.say("Read the table at each level: gnomon_t.account_at(gnomon.point(branch)) reads any level without selecting "
        + "it (gnomon.point(branch, coordinate) reads one as of a coordinate). Keys not written on a branch read as its "
        + "parent had them when the branch was created.");
    expect("main", t.sql(c, "select * from account order by id;"), MAIN);
    expect("branch feature", t.sql(c, "select * from gnomon_t.account_at(gnomon.point('feature')) order by id;"),
        List.of("1|alice|100.00", "3|carol|1004.00", "5|erin|10.00", "6|frank|60.00"));
    expect("branch experiment",
        t.sql(c, "select * from gnomon_t.account_at(gnomon.point('experiment')) order by id;"),
        List.of("1|alice|100.00", "5|erin|10.00", "6|frank|60.00"));
    t.say("The diff between two points lists the keys whose rows differ, with both images; its cost grows with the "
        + "changes, not with the table:");
    ResultTable diff = t.sql(c, "select op, key, old->>'balance' as old_balance, new->>'balance' as new_balance"
        + " from gnomon.diff('account', gnomon.point('main'), gnomon.point('experiment')) order by key;");
    expect("the diff of main and experiment", diff, List.of("update|{\"id\": 1}|0.00|100.00",
        "delete|{\"id\": 3}|1004.00|", "insert|{\"id\": 6}||60.00"));
    List<DiffRow> rows = gnomon.diff("public.account", Point.main(), Point.branch("feature"));
    List<String> printed = new ArrayList<>();
    for (DiffRow d : rows) {
      printed.add(d.op() + " " + d.key() + " " + d.after());
    }
    t.java("""
        for (DiffRow d : gnomon.diff("public.account", Point.main(), Point.branch("feature"))) {
          System.out.println(d.op() + " " + d.key() + " " + d.after());
        }""", printed);
    List<String> ops = rows.stream().map(d -> d.op() + " " + d.key()).sorted().toList();
    if (!ops.equals(List.of("insert {\"id\":6}", "update {\"id\":1}"))) {
      throw new Demo.DemoCheckFailed("the Java diff of main and feature returned " + ops
          + ", expected [insert {\"id\":6}, update {\"id\":1}]");
    }
    t.note("main is unchanged; from Java, gnomon.onBranch(\"feature\") runs jOOQ or JDBC work on the branch.");
  }

  /** A result's rows as {@code a|b|c} lines, NULL as empty: what the demo steps compare. */
  static List<String> lines(ResultTable actual) {
    return actual.rows().stream()
        .map(r -> r.stream().map(v -> v == null ? "" : v).collect(Collectors.joining("|")))
        .toList();
  }

  private static void expect(String what, ResultTable actual, List<String> rows) {
    List<String> got = lines(actual);
    if (!got.equals(rows)) {
      throw new Demo.DemoCheckFailed("the read of " + what + " returned " + got + ", expected " + rows);
    }
  }
}
