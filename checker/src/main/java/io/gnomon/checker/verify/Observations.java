package io.gnomon.checker.verify;

import io.gnomon.checker.history.History;
import java.util.List;
import java.util.Map;

/**
 * Everything the verifier checks: the history the sessions logged, and what the database holds after the run. The
 * collector fills it from the final primary; unit tests build it by hand.
 *
 * @param history the logged operations
 * @param markers the writing transactions that committed, by number, with their 64-bit ids: the rows of the marker
 *     table that each writing transaction inserted first (the authority on what committed)
 * @param xactStatus for transactions whose commit outcome was unknown: what {@code pg_xact_status} said of their id
 * @param initial each table's rows before the run (table to key to value), written before tracking
 * @param versions every version in the history tables
 * @param live each tracked table's rows after the run
 * @param shadow each untracked shadow table's rows after the run
 * @param delivered the events the feed consumer stored, in delivery order
 * @param feedProblem why the feed could not be drained to the end, or null when it was
 * @param replays the rows each replayed read (by op number) returns when read again as of its coordinate, in its key
 *     range
 * @param replaysWithoutOwn for reads of transactions that had an xid: the rows as of the coordinate with that xid
 *     added to its in-progress list (what the coordinate should mean: without any of its own transaction's writes)
 * @param amchecks the pg_amcheck runs
 * @param branchNow each branch's rows after the run, by branch and table
 * @param parentAtCutoff the rows of each branch's parent at the branch's cutoff, by branch and table
 * @param branchNowTogether each branch's rows after the run read in one statement with the other branches (once in
 *     creation order, once reversed), by order, branch and table: they must be {@code branchNow}
 * @param replayErrors the reads (by op number) that could not be read again as of their coordinate, with the error
 * @param asyncStandby whether failover was to an asynchronous standby (it may lose acknowledged commits)
 * @param branchStatus each branch of the history after the run: {@code intact}, {@code lost} (reading it raises
 *     GN053: a crash emptied the scratch branch), {@code missing} (GN050: no such branch), {@code lost-but-readable}
 *     (gnomon.branches() says it is not intact, yet it reads) or {@code error: ...}
 * @param branchShadow the branch shadow tables after the run: branch → table → key → value, null for a key deleted
 *     on the branch
 * @param branchVersions every version in the branch histories
 * @param scratchReplays reads on scratch branches replayed before a fault emptied them, by op number: the rows
 *     ({@code List<long[]>}) or the error (a {@code String})
 */
public record Observations(
    History history,
    Map<Long, Long> markers,
    Map<Long, String> xactStatus,
    Map<Integer, Map<Long, Long>> initial,
    List<Version> versions,
    Map<Integer, Map<Long, Long>> live,
    Map<Integer, Map<Long, Long>> shadow,
    List<Delivered> delivered,
    String feedProblem,
    Map<Long, List<long[]>> replays,
    Map<Long, List<long[]>> replaysWithoutOwn,
    List<AmcheckRun> amchecks,
    Map<String, Map<Integer, Map<Long, Long>>> branchNow,
    Map<String, Map<Integer, Map<Long, Long>>> parentAtCutoff,
    List<Map<String, Map<Integer, Map<Long, Long>>>> branchNowTogether,
    Map<Long, String> replayErrors,
    boolean asyncStandby,
    Map<String, String> branchStatus,
    Map<String, Map<Integer, Map<Long, Long>>> branchShadow,
    List<BranchVersion> branchVersions,
    Map<Long, Object> scratchReplays) {

  /** The same observations with these replays without the reader's own xid. */
  public Observations withReplaysWithoutOwn(Map<Long, List<long[]>> replays) {
    return new Observations(history, markers, xactStatus, initial, versions, live, shadow, delivered, feedProblem,
        this.replays, replays, amchecks, branchNow, parentAtCutoff, branchNowTogether, replayErrors, asyncStandby,
        branchStatus, branchShadow, branchVersions, scratchReplays);
  }
}
