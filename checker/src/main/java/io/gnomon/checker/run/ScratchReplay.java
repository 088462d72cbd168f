package io.gnomon.checker.run;

import io.gnomon.checker.history.Op;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;

/**
 * Before a crash or a failover, which empty every scratch branch, replays the reads made on the scratch branches
 * since the last fault as of their coordinates, while the branches still hold their rows: after the fault they can no
 * longer be read ({@code GN053}), and the verifier checks these replays instead (see {@link Workload#scratchReplays}).
 */
final class ScratchReplay {
  /** Reads replayed at most before one fault, so that a fault is not held up for long. */
  static final int MAX_PER_FAULT = 600;

  private ScratchReplay() {}

  /** Replays the reads not yet replayed; returns how many. A failure (the server going away) stops it quietly. */
  static int run(Workload w) {
    if (w.scratch.isEmpty() || w.generated == null) {
      return 0;
    }
    int n = 0;
    try (Connection c = w.servers.connect()) {
      for (Op op : w.log.ops()) {
        if (n >= MAX_PER_FAULT) {
          break;
        }
        if ("read".equals(op.op()) && op.ok() && op.coord() != null && op.br() != null
            && w.scratch.contains(op.br()) && !w.scratchReplays.containsKey(op.id())) {
          try (PreparedStatement ps = c.prepareStatement(Collector.branchReplaySql(w.generated, op.tbl()))) {
            w.scratchReplays.put(op.id(), Collector.replayBranchRead(ps, op, op.coord()));
          } catch (SQLException e) {
            if (Servers.connectionLost(e)) {
              return n;
            }
            w.scratchReplays.put(op.id(), Session.error(e));
          }
          n++;
        }
      }
    } catch (SQLException e) {
      // the server is away (another fault, or a restart under way): the reads not replayed are counted as lost
    }
    return n;
  }
}
