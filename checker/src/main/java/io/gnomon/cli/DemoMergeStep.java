package io.gnomon.cli;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;

/**
 * The demo's merge step: main and the nested branch of the branch step both change one balance, the merge stops on
 * that conflict without changing main, a resolution is declared, and the merge runs again and applies everything.
 * Expects the state {@link DemoBranchStep} leaves, and checks every result.
 */
final class DemoMergeStep {
  private final Transcript t;

  DemoMergeStep(Transcript transcript) {
    this.t = transcript;
  }

  void run(Connection c) throws SQLException {
    t.step("Merges: take a branch's changes into main, conflicts included");
    t.say("A merge is three-way: the base is where the branch started, ours is main now, theirs is the branch now. "
        + "A change on one side wins; a column both sides changed goes to its strategy, and the default strategy, "
        + "fail, reports a conflict. Main changes alice's balance too:");
    t.sql(c, "update account set balance = balance + 5 where id = 1;");
    ResultTable first = t.sql(c, "select merge_id, status, adds, deletes, conflicts from gnomon.merge('experiment', 'main');");
    expect("the first merge", first, List.of("|conflicts|1|1|1"));
    String mergeId = first.rows().get(0).get(0);
    t.say("With a conflict the merge writes nothing to main; the conflict is a row to look at and resolve:");
    t.sql(c, "select key, column_name, base, ours, theirs, strategy from gnomon.merge_conflicts(" + mergeId + ");");
    expect("main after the stopped merge", t.sql(c, "select * from account order by id;"),
        List.of("1|alice|5.00", "3|carol|1004.00", "5|erin|10.00"));
    t.say("Declare a resolution (here a value that keeps both changes: 0 + 5 + 100) and merge again:");
    t.sql(c, "select gnomon.merge_resolve(" + mergeId + ", 'account', '{\"id\": 1}', 'balance', 'value', '105.00');");
    expect("the second merge", t.sql(c, "select status, adds, modifications, deletes, conflicts from gnomon.merge('experiment', 'main');"),
        List.of("applied|1|1|1|0"));
    expect("main after the merge", t.sql(c, "select * from account order by id;"),
        List.of("1|alice|105.00", "5|erin|10.00", "6|frank|60.00"));
    t.note("the merge wrote through main's trigger, so it is history and the change feed sees it; declaring "
        + "gnomon.set_merge_strategy('account', 'balance', 'counter') would have merged 0 + 5 + 100 by itself.");
  }

  private static void expect(String what, ResultTable actual, List<String> rows) {
    List<String> got = DemoBranchStep.lines(actual);
    boolean ok = got.size() == rows.size();
    for (int i = 0; ok && i < rows.size(); i++) {
      // a leading empty field stands for a value that differs from run to run (an id)
      ok = rows.get(i).startsWith("|") ? got.get(i).endsWith(rows.get(i)) : got.get(i).equals(rows.get(i));
    }
    if (!ok) {
      throw new Demo.DemoCheckFailed(what + " returned " + got + ", expected " + rows);
    }
  }
}
