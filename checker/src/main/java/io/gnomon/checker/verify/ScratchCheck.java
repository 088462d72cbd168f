package io.gnomon.checker.verify;

import io.gnomon.checker.history.Op;
import io.gnomon.checker.history.Txn;

/**
 * Branches after faults. A scratch branch is unlogged: a crash (any SIGKILL: of a backend, of the postmaster, of the
 * primary at a failover) empties it, and Gnomon then marks it lost: reads, writes and forks raise GN053. That is by
 * design, and counted, not a violation; a scratch branch lost without a crash since its creation, a lost one that
 * still reads, or a logged branch that is gone is one. Transactions refused with GN053 must have a crash between the
 * branch's creation and them.
 */
final class ScratchCheck {
  private ScratchCheck() {}

  static void run(Context c, Findings f) {
    for (Op b : c.o.history().branches()) {
      String status = c.o.branchStatus().getOrDefault(b.br(), "intact");
      String what = (b.scratch() ? "scratch" : "logged") + " branch " + b.br() + " (forked from " + b.kind() + " at "
          + b.coord() + ", op #" + b.id() + ")";
      switch (status) {
        case "intact" -> {
          // checked like every branch (BranchCheck, BranchHistoryCheck)
        }
        case "lost" -> {
          if (!b.scratch()) {
            f.violation("branch-lost", () -> what + " raises GN053 (lost in a crash) after the run: only scratch "
                + "branches may be lost");
          } else if (!c.crashBetween(b.id(), Long.MAX_VALUE)) {
            f.violation("scratch-lost-without-crash", () -> what + " raises GN053 (lost in a crash) after the run, "
                + "but no crash or failover happened after it was created");
          } else {
            f.lost("scratch branches emptied by a crash (GN053)", () -> what + " was emptied by a crash or failover "
                + "after it was created; reading it raises GN053, as designed");
          }
        }
        case "missing" -> {
          if (c.o.asyncStandby() && c.failovers.stream().anyMatch(x -> x > b.id())) {
            f.lost("branches lost by async failover", () -> what + " is gone (GN050) after the run: its creation was "
                + "acknowledged before a failover to the asynchronous standby, which did not have it yet");
          } else {
            f.violation("branch-lost", () -> what + " was created (its creation committed), but after the run "
                + "gnomon.branches() does not know it (GN050)");
          }
        }
        default -> f.violation("branch-lost", () -> what + " cannot be read after the run: " + status);
      }
    }
    long refused = 0;
    for (Txn t : c.o.history().txns()) {
      Op end = t.end();
      if (t.branch() == null || end == null || end.err() == null || !end.err().startsWith("GN053")) {
        continue;
      }
      Op created = c.o.history().branches().stream().filter(b -> b.br().equals(t.branch())).findFirst().orElse(null);
      if (created != null && created.scratch() && c.crashBetween(created.id(), end.id())) {
        refused++;
      } else {
        f.violation("scratch-lost-without-crash", () -> c.name(t) + " was refused with " + end.err() + " (op #"
            + end.id() + "), but " + (created == null || !created.scratch() ? "its branch is not a scratch branch"
                : "no crash or failover happened between the branch's creation (op #" + created.id() + ") and it"));
      }
    }
    f.checked("transactions refused with GN053 on a scratch branch a crash emptied", refused);
    f.checked("scratch branches checked", c.o.history().branches().stream().filter(Op::scratch).count());
  }
}
