package io.gnomon.checker.verify;

/**
 * Checks a run's observations against the invariants of DESIGN.md that phase 1 exercises (main tables): outcomes
 * (no acknowledged commit lost), exact replay of reads, history completeness and version-key order, the change feed
 * (exactly once, commit order), the shadow tables, and pg_amcheck. Pure: it reads no database.
 */
public final class Verifier {
  private Verifier() {}

  /**
   * The reads whose replay differs from what they saw, in transactions that had an xid: the collector replays them a
   * second time with that xid in the coordinate's in-progress list, to tell Gnomon's known coordinate bug apart.
   */
  public static java.util.Set<Long> replaySuspects(Observations o) {
    return ReplayCheck.suspects(o);
  }

  /** Runs every check. */
  public static Verification verify(Observations o) {
    Findings f = new Findings();
    Context c = new Context(o);
    OutcomeCheck.run(c, f);
    ReplayCheck.run(c, f);
    HistoryCheck.run(c, f);
    FeedCheck.run(c, f);
    ShadowCheck.run(c, f);
    BranchCheck.run(c, f);
    ScratchCheck.run(c, f);
    BranchHistoryCheck.run(c, f);
    MergeCheck.run(c, f);
    for (AmcheckRun run : o.amchecks()) {
      f.checked("pg_amcheck runs", 1);
      if ("corrupt".equals(run.status())) {
        f.violation("amcheck", () -> "pg_amcheck " + run.when() + " reported corruption: " + first(run.output()));
      }
    }
    return f.result();
  }

  private static String first(String text) {
    String t = text.strip();
    return t.isEmpty() ? "(no output)" : t.length() > 500 ? t.substring(0, 500) + "..." : t;
  }
}
