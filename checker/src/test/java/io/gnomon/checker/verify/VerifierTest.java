package io.gnomon.checker.verify;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.checker.history.History;
import io.gnomon.checker.history.Op;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * The verifier against hand-built histories: one that is valid, and variants with one known violation each, which
 * must be found, named and explained.
 */
class VerifierTest {

  /** A small world: table 1 starts with key 0 = -1 and key 1 = -2. */
  private static final class World {
    final List<Op> ops = new ArrayList<>();
    final Map<Long, Long> markers = new HashMap<>();
    final Map<Long, String> status = new HashMap<>();
    final List<Version> versions = new ArrayList<>();
    final Map<Long, Long> live = new TreeMap<>(Map.of(0L, -1L, 1L, -2L));
    final Map<Long, Long> shadow = new TreeMap<>(Map.of(0L, -1L, 1L, -2L));
    final List<Delivered> delivered = new ArrayList<>();
    final Map<Long, List<long[]>> replays = new HashMap<>();
    final Map<Long, List<long[]>> replaysWithoutOwn = new HashMap<>();
    final Map<String, Map<Integer, Map<Long, Long>>> branchNow = new HashMap<>();
    final Map<String, Map<Integer, Map<Long, Long>>> parentAtCutoff = new HashMap<>();
    final List<Map<String, Map<Integer, Map<Long, Long>>>> together = new ArrayList<>();
    final Map<Long, String> replayErrors = new HashMap<>();
    final Map<String, String> branchStatus = new HashMap<>();
    final Map<String, Map<Integer, Map<Long, Long>>> branchShadow = new HashMap<>();
    final List<BranchVersion> branchVersions = new ArrayList<>();
    final Map<Long, Object> scratchReplays = new HashMap<>();
    boolean async;
    long id;

    Op op(long txn, Op.Builder b) {
      Op op = b.session((int) txn, txn, "rc").build(++id, id * 10);
      ops.add(op);
      return op;
    }

    void begin(long txn, Long xid) {
      op(txn, Op.of("begin").xid(xid == null ? null : xid.toString()).outcome("ok"));
    }

    Op update(long txn, long key, long v) {
      return op(txn, Op.of("update").table(1).rows(List.of(new long[] {key, v})).shadow(1).outcome("ok"));
    }

    Op read(long txn, String coord, long lo, long hi, long[]... rows) {
      return op(txn, Op.of("read").table(1).read(coord, (int) lo, (int) hi).rows(List.of(rows)).outcome("ok"));
    }

    void commit(long txn, String outcome) {
      op(txn, Op.of("commit").outcome(outcome).micros(100));
    }

    /** T1 (xid 100) updates key 0 from -1 to 1000 and commits; it has its version and its feed event. */
    World t1Updates() {
      begin(1, 100L);
      update(1, 0, 1000);
      commit(1, "ok");
      markers.put(1L, 100L);
      versions.add(new Version(1, 1024, 100, 'U', 0, -1L));
      delivered.add(new Delivered(1, 1, 0, 100, 1024, 'U', 1));
      live.put(0L, 1000L);
      shadow.put(0L, 1000L);
      return this;
    }

    /** T2 (read only) read keys 0..1 while T1 was in progress: the old values. */
    Op t2ReadsDuringT1() {
      begin(2, null);
      Op r = read(2, "v1:100:101:100", 0, 1, new long[] {0, -1}, new long[] {1, -2});
      commit(2, "ok");
      replays.put(r.id(), List.of(new long[] {0, -1}, new long[] {1, -2}));
      return r;
    }

    Verification verify() {
      Map<Integer, Map<Long, Long>> initial = Map.of(1, Map.of(0L, -1L, 1L, -2L));
      return Verifier.verify(new Observations(History.of(ops), markers, status, initial, versions, Map.of(1, live),
          Map.of(1, shadow), delivered, null, replays, replaysWithoutOwn,
          List.of(new AmcheckRun("at the end", "clean", "")), branchNow, parentAtCutoff, together, replayErrors, async,
          branchStatus, branchShadow, branchVersions, scratchReplays));
    }
  }

  private static void assertOnly(Verification v, String kind) {
    assertTrue(v.violations().containsKey(kind), "expected " + kind + ", found " + v.byKind() + " " + v.witnesses());
  }

  @Test
  void aValidHistoryIsValid() {
    World w = new World().t1Updates();
    w.t2ReadsDuringT1();
    Verification v = w.verify();
    assertTrue(v.valid(), v.witnesses().toString());
    assertEquals(1, v.checked().get("reads replayed"));
    assertEquals(1, v.checked().get("feed events checked"));
  }

  @Test
  void aReadThatDoesNotReplayIsAMismatchExplainedWithTheWriter() {
    World w = new World().t1Updates();
    Op read = w.t2ReadsDuringT1();
    w.replays.put(read.id(), List.of(new long[] {0, 1000}, new long[] {1, -2}));
    Verification v = w.verify();
    assertEquals(Map.of("replay-mismatch", 1L), v.violations());
    String witness = v.first("replay-mismatch").witness();
    assertTrue(witness.contains("saw k=0 as v=-1, written by the initial load"), witness);
    assertTrue(witness.contains("as v=1000, written by T1") && witness.contains("still in progress"), witness);
  }

  @Test
  void anAcknowledgedCommitWithoutItsMarkerWasLost() {
    World w = new World().t1Updates();
    w.markers.clear();
    Verification v = w.verify();
    assertOnly(v, "lost-commit");
    assertTrue(v.first("lost-commit").witness().contains("acknowledged"));
  }

  @Test
  void anEventsRowImagesMustBeTheVersionsStates() {
    World ok = new World().t1Updates();
    ok.delivered.set(0, new Delivered(1, 1, 0, 100, 1024, 'U', 1, true, -1L, 1000L));
    Verification v = ok.verify();
    assertTrue(v.valid(), v.witnesses().toString());
    assertEquals(1, v.checked().get("feed events' row images checked"));
    // the after image must be the row after T1 (1000, the live row: no later version), not the one before it
    World bad = new World().t1Updates();
    bad.delivered.set(0, new Delivered(1, 1, 0, 100, 1024, 'U', 1, true, -1L, -1L));
    assertEquals(Map.of("feed-wrong-image", 1L), bad.verify().violations());
    String witness = bad.verify().first("feed-wrong-image").witness();
    assertTrue(witness.contains("v=-1 after") && witness.contains("says -1 and 1000"), witness);
  }

  @Test
  void aVersionDeliveredTwiceIsADuplicate() {
    World w = new World().t1Updates();
    w.delivered.add(new Delivered(2, 1, 0, 100, 1024, 'U', 2));
    assertEquals(Map.of("feed-duplicate", 1L), w.verify().violations());
  }

  @Test
  void aCommittedVersionNeverDeliveredIsMissing() {
    World w = new World().t1Updates();
    w.delivered.clear();
    Verification v = w.verify();
    assertEquals(Map.of("feed-missing", 1L), v.violations());
    assertTrue(v.first("feed-missing").witness().contains("vid=1024"));
  }

  @Test
  void aRolledBackTransactionMustNotBeDelivered() {
    World w = new World().t1Updates();
    w.delivered.add(new Delivered(2, 1, 1, 999, 5000, 'U', 1));
    assertOnly(w.verify(), "feed-rolled-back");
  }

  @Test
  void aChangeWithoutAVersionIsMissingFromTheHistory() {
    World w = new World().t1Updates();
    w.versions.clear();
    w.delivered.clear();
    Verification v = w.verify();
    assertOnly(v, "history-missing-version");
    assertTrue(v.first("history-missing-version").witness().contains("T1"));
  }

  @Test
  void versionKeysGoingBackwardsAlongARowAreFound() {
    World w = new World().t1Updates();
    w.begin(3, 101L);
    w.update(3, 0, 2000);
    w.commit(3, "ok");
    w.markers.put(3L, 101L);
    w.versions.clear();
    w.versions.add(new Version(1, 2048, 100, 'U', 0, -1L)); // T1 came first along the row ...
    w.versions.add(new Version(1, 1024, 101, 'U', 0, 1000L)); // ... yet T3's version key is smaller
    w.delivered.clear();
    w.delivered.add(new Delivered(1, 1, 0, 100, 2048, 'U', 1));
    w.delivered.add(new Delivered(2, 1, 0, 101, 1024, 'U', 1));
    w.live.put(0L, 2000L);
    w.shadow.put(0L, 2000L);
    Verification v = w.verify();
    assertOnly(v, "vid-backwards");
    assertTrue(v.first("vid-backwards").witness().contains("went backwards"));
  }

  @Test
  void theFeedMustDeliverTheWritersOfARowInTheRowsOrder() {
    World w = new World().t1Updates();
    w.begin(3, 101L);
    w.update(3, 0, 2000);
    w.commit(3, "ok");
    w.markers.put(3L, 101L);
    w.versions.add(new Version(1, 2048, 101, 'U', 0, 1000L));
    w.delivered.clear();
    w.delivered.add(new Delivered(1, 1, 0, 101, 2048, 'U', 1));
    w.delivered.add(new Delivered(2, 1, 0, 100, 1024, 'U', 1));
    w.live.put(0L, 2000L);
    w.shadow.put(0L, 2000L);
    assertEquals(Map.of("feed-order", 1L), w.verify().violations());
  }

  @Test
  void aTransactionThatSawAnotherCommittedAndThenWroteIsDeliveredAfterIt() {
    World w = new World().t1Updates();
    w.begin(3, 102L);
    w.read(3, "v1:101:103:", 0, 0, new long[] {0, 1000}); // T1 (xid 100) had committed
    w.update(3, 1, 3000);
    w.commit(3, "ok");
    w.markers.put(3L, 102L);
    w.replays.put(w.id - 2, List.of(new long[] {0, 1000}));
    w.versions.add(new Version(1, 4096, 102, 'U', 1, -2L));
    w.delivered.add(0, new Delivered(0, 1, 1, 102, 4096, 'U', 1)); // delivered before T1
    w.live.put(1L, 3000L);
    w.shadow.put(1L, 3000L);
    Verification v = w.verify();
    assertEquals(Map.of("feed-order", 1L), v.violations());
    assertTrue(v.first("feed-order").witness().contains("may depend on T1"), v.first("feed-order").witness());
  }

  @Test
  void aShadowThatDiffersFromTheTrackedTableIsReported() {
    World w = new World().t1Updates();
    w.shadow.put(0L, -1L);
    assertEquals(Map.of("shadow-mismatch", 1L), w.verify().violations());
  }

  @Test
  void writesUndoneByARollbackToASavepointLeaveNoVersionAndReadsSeeThemUndone() {
    World w = new World();
    w.begin(1, 100L);
    w.op(1, Op.of("savepoint").savepoint("s1").outcome("ok"));
    w.update(1, 0, 1000);
    Op during = w.read(1, "v1:100:101:", 0, 0, new long[] {0, 1000});
    w.op(1, Op.of("rollback_to").savepoint("s1").outcome("ok"));
    Op after = w.read(1, "v1:100:101:", 0, 0, new long[] {0, -1});
    w.commit(1, "ok");
    w.markers.put(1L, 100L);
    w.replays.put(during.id(), List.of(new long[] {0, -1}));
    w.replays.put(after.id(), List.of(new long[] {0, -1}));
    Verification v = w.verify();
    assertTrue(v.valid(), v.witnesses().toString());
  }

  @Test
  void anUnknownOutcomeIsResolvedByTheMarker() {
    World w = new World();
    w.begin(1, 100L);
    w.update(1, 0, 1000);
    w.commit(1, "unknown");
    w.markers.put(1L, 100L);
    w.status.put(1L, "committed");
    w.versions.add(new Version(1, 1024, 100, 'U', 0, -1L));
    w.delivered.add(new Delivered(1, 1, 0, 100, 1024, 'U', 1));
    w.live.put(0L, 1000L);
    w.shadow.put(0L, 1000L);
    Verification v = w.verify();
    assertTrue(v.valid(), v.witnesses().toString());
    assertEquals(1, v.checked().get("unknown outcomes resolved as committed"));
    w.status.put(1L, "aborted");
    assertEquals(Map.of("xact-status-contradiction", 1L), w.verify().violations());
  }

  @Test
  void aReplayThatOnlyShowsTheReadersOwnLaterWritesIsTheCoordinateBug() {
    World w = new World();
    w.begin(1, 100L);
    Op read = w.read(1, "v1:99:101:99", 0, 0, new long[] {0, -1});
    w.update(1, 0, 1000);
    w.commit(1, "ok");
    w.markers.put(1L, 100L);
    w.versions.add(new Version(1, 1024, 100, 'U', 0, -1L));
    w.delivered.add(new Delivered(1, 1, 0, 100, 1024, 'U', 1));
    w.live.put(0L, 1000L);
    w.shadow.put(0L, 1000L);
    w.replays.put(read.id(), List.of(new long[] {0, 1000}));
    w.replaysWithoutOwn.put(read.id(), List.of(new long[] {0, -1}));
    assertEquals(Map.of("coordinate-sees-own-writes", 1L), w.verify().violations());
  }

  /**
   * PostgreSQL at REPEATABLE READ: a transaction that writes a key whose old row another transaction removed after
   * the snapshot sees both its own row and the old one. The read is right when one of the key's values is the
   * expected one (as of the coordinate, with the reader's own write on top); a duplicate without it is a mismatch.
   */
  @Test
  void aReadThatSeesItsOwnRowBesideTheOldOneReplaysWhenOneValueIsExpected() {
    World ok = new World();
    ok.begin(1, 100L);
    ok.update(1, 0, 1000);
    Op read = ok.read(1, "v1:99:101:99", 0, 0, new long[] {0, 1000}, new long[] {0, -1});
    ok.commit(1, "ok");
    ok.markers.put(1L, 100L);
    ok.versions.add(new Version(1, 1024, 100, 'U', 0, -1L));
    ok.delivered.add(new Delivered(1, 1, 0, 100, 1024, 'U', 1));
    ok.live.put(0L, 1000L);
    ok.shadow.put(0L, 1000L);
    ok.replays.put(read.id(), List.of(new long[] {0, -1}));
    Verification v = ok.verify();
    assertTrue(v.valid(), v.witnesses().toString());

    World bad = new World();
    bad.begin(1, 100L);
    bad.update(1, 0, 1000);
    Op wrong = bad.read(1, "v1:99:101:99", 0, 0, new long[] {0, 7}, new long[] {0, -1});
    bad.commit(1, "ok");
    bad.markers.put(1L, 100L);
    bad.versions.add(new Version(1, 1024, 100, 'U', 0, -1L));
    bad.delivered.add(new Delivered(1, 1, 0, 100, 1024, 'U', 1));
    bad.live.put(0L, 1000L);
    bad.shadow.put(0L, 1000L);
    bad.replays.put(wrong.id(), List.of(new long[] {0, -1}));
    assertOnly(bad.verify(), "replay-mismatch");
  }

  @Test
  void anUntouchedBranchKeyReadsAsTheParentAtTheCutoff() {
    World w = new World();
    w.op(0, Op.of("branch").branch("b1").forked("main", "v1:90:90:").outcome("ok"));
    w.t1Updates(); // after the cutoff, on main
    w.op(5, Op.of("begin").branch("b1").xid("200").outcome("ok"));
    w.op(5, Op.of("update").branch("b1").table(1).rows(List.of(new long[] {1, 5000})).outcome("ok"));
    w.op(5, Op.of("commit").branch("b1").outcome("ok"));
    w.markers.put(5L, 200L);
    w.parentAtCutoff.put("b1", Map.of(1, Map.of(0L, -1L, 1L, -2L)));
    w.branchNow.put("b1", Map.of(1, Map.of(0L, -1L, 1L, 5000L)));
    Verification v = w.verify();
    assertTrue(v.valid(), v.witnesses().toString());
    assertEquals(1, v.checked().get("untouched branch keys compared with the parent at the cutoff"));
    // a branch that reads main now instead of at its cutoff
    w.branchNow.put("b1", Map.of(1, Map.of(0L, 1000L, 1L, 5000L)));
    v = w.verify();
    assertEquals(Map.of("branch-cutoff", 1L), v.violations());
    assertTrue(v.first("branch-cutoff").witness().contains("written by T1"), v.first("branch-cutoff").witness());
  }

  @Test
  void readsAtSeveralPointsInOneStatementMustEqualTheReadsAlone() {
    World w = new World();
    w.op(0, Op.of("branch").branch("b1").forked("main", "v1:90:90:").outcome("ok"));
    w.op(0, Op.of("branch").branch("b3").forked("main", "v1:95:95:").outcome("ok"));
    w.branchNow.put("b1", Map.of(1, Map.of(1L, -2L)));
    w.branchNow.put("b3", Map.of(1, Map.of(0L, -1L, 1L, -2L)));
    w.parentAtCutoff.putAll(Map.of("b1", Map.of(1, Map.of(1L, -2L)), "b3", Map.of(1, Map.of(0L, -1L, 1L, -2L))));
    w.together.add(Map.of("b1", Map.of(1, Map.of(1L, -2L)), "b3", Map.of(1, Map.of(1L, -2L)))); // b3 lost key 0
    w.together.add(Map.of("b3", Map.of(1, Map.of(0L, -1L, 1L, -2L)), "b1", Map.of(1, Map.of(1L, -2L))));
    Verification v = w.verify();
    assertEquals(Map.of("point-reads-leak", 1L), v.violations());
    assertTrue(v.first("point-reads-leak").witness().contains("[b1, b3]"), v.first("point-reads-leak").witness());
  }

  @Test
  void aBranchWriteThatReachesMainsHistoryIsAnExtraVersion() {
    World w = new World().t1Updates();
    w.op(5, Op.of("begin").branch("b1").xid("200").outcome("ok"));
    w.op(5, Op.of("update").branch("b1").table(1).rows(List.of(new long[] {1, 5000})).outcome("ok"));
    w.op(5, Op.of("commit").branch("b1").outcome("ok"));
    w.markers.put(5L, 200L);
    w.versions.add(new Version(1, 4096, 200, 'U', 1, -2L));
    w.delivered.add(new Delivered(2, 1, 1, 200, 4096, 'U', 2));
    Verification v = w.verify();
    assertTrue(v.violations().containsKey("history-extra-version"), v.byKind().toString());
  }

  @Test
  void aMergeThatDropsOneSidesChangeLosesIt() {
    World w = new World();
    w.begin(7, null);
    w.op(7, Op.of("merge_ours").table(1).rows(List.of(new long[] {0, 10}, new long[] {1, -2})).outcome("ok"));
    w.op(7, Op.of("merge_theirs").table(1).rows(List.of(new long[] {0, 20}, new long[] {1, 30})).outcome("ok"));
    w.op(7, Op.of("merge").merge("b1", "main", "theirs/update_wins", 1L, "applied").outcome("ok"));
    w.op(7, Op.of("merge_base").table(1).rows(List.of(new long[] {0, -1}, new long[] {1, -2})).outcome("ok"));
    Op result = w.op(7, Op.of("merge_result").table(1).rows(List.of(new long[] {0, 20}, new long[] {1, 30}))
        .outcome("ok"));
    w.op(7, Op.of("rollback").outcome("ok"));
    assertTrue(w.verify().valid(), w.verify().witnesses().toString());
    // both sides changed key 0: strategy theirs takes 20; a result of 10 drops the branch's change
    w.ops.set(w.ops.indexOf(result), Op.of("merge_result").table(1).rows(List.of(new long[] {0, 10},
        new long[] {1, 30})).outcome("ok").session(7, 7, "rr").build(result.id(), result.t()));
    Verification v = w.verify();
    assertEquals(Map.of("merge-lost-change", 1L), v.violations());
    assertTrue(v.first("merge-lost-change").witness().contains("the source's change was lost"),
        v.first("merge-lost-change").witness());
  }

  @Test
  void theThreeWayRuleOfTheCheckersMerges() {
    assertEquals(5L, rule(1L, 5L, 1L, "theirs", "update_wins")); // ours changed
    assertEquals(7L, rule(1L, 1L, 7L, "theirs", "update_wins")); // theirs changed
    assertEquals(7L, rule(1L, 5L, 7L, "theirs", "update_wins")); // both: theirs
    assertEquals(5L, rule(1L, 5L, null, "theirs", "update_wins")); // theirs deleted, ours updated: the update
    assertEquals(7L, rule(1L, null, 7L, "theirs", "update_wins")); // ours deleted, theirs updated: the update
    assertEquals(null, rule(1L, null, null, "theirs", "update_wins")); // both deleted
    assertEquals(7L, rule(null, 5L, 7L, "theirs", "update_wins")); // both inserted: theirs
    // the other strategies and rules
    assertEquals(5L, rule(1L, 5L, 7L, "ours", "delete_wins"));
    assertEquals(7L, rule(1L, 5L, 7L, "max", "delete_wins"));
    assertEquals(11L, rule(1L, 5L, 7L, "counter", "delete_wins")); // 1 + 4 + 6
    assertEquals(12L, rule(null, 5L, 7L, "counter", "delete_wins")); // two inserts add up
    assertEquals(null, rule(1L, 5L, null, "ours", "delete_wins"));
    assertEquals(null, rule(1L, null, 7L, "ours", "delete_wins"));
    assertEquals(MergeCheck.Expected.COLUMN, MergeCheck.expected(1L, 5L, 7L, "fail", "conflict").conflict());
    assertEquals(MergeCheck.Expected.DELETE_VS_UPDATE, MergeCheck.expected(1L, 5L, null, "fail", "conflict")
        .conflict());
    assertEquals(MergeCheck.Expected.UPDATE_VS_DELETE, MergeCheck.expected(1L, null, 7L, "fail", "conflict")
        .conflict());
    assertEquals(5L, rule(1L, 5L, 1L, "fail", "conflict")); // the source did not change it: no conflict
  }

  private static Long rule(Long base, Long ours, Long theirs, String strategy, String rule) {
    MergeCheck.Expected e = MergeCheck.expected(base, ours, theirs, strategy, rule);
    assertEquals(MergeCheck.Expected.NONE, e.conflict());
    return e.value();
  }

  @Test
  void aTransactionThatReusedAnXidAfterAFailoverIsNamed() {
    World w = new World();
    w.begin(2, null);
    Op read = w.read(2, "v1:99:102:99", 0, 0, new long[] {0, -1}); // 100 and 101 had ended at the coordinate
    w.commit(2, "ok");
    w.op(0, Op.of("fault").fault("failover", "start", "#1").outcome("ok"));
    w.begin(3, 101L); // after the failover, the new primary hands out xid 101 again
    w.op(3, Op.of("delete").table(1).rows(List.of(new long[] {0, -1})).shadow(1).outcome("ok"));
    w.commit(3, "ok");
    w.markers.put(3L, 101L);
    w.versions.add(new Version(1, 1024, 101, 'D', 0, -1L));
    w.delivered.add(new Delivered(1, 1, 0, 101, 1024, 'D', 1));
    w.live.remove(0L);
    w.shadow.remove(0L);
    w.replays.put(read.id(), List.of()); // as of the coordinate, xid 101 counts as committed: key 0 is gone
    Verification v = w.verify();
    assertEquals(Map.of("xid-reused", 1L), v.violations());
    assertTrue(v.first("xid-reused").witness().contains("T3"), v.first("xid-reused").witness());
  }

  @Test
  void aCoordinateThatCannotBeReadAgainIsAViolation() {
    World w = new World();
    w.begin(1, 777L);
    Op read = w.read(1, "v1:776:776:777", 0, 0, new long[] {0, -1});
    w.commit(1, "ok");
    w.markers.put(1L, 777L);
    w.replayErrors.put(read.id(), "22P02 invalid input syntax for type pg_snapshot: \"776:776:777\"");
    Verification v = w.verify();
    assertEquals(Map.of("replay-error", 1L), v.violations());
    assertTrue(v.first("replay-error").witness().contains("own xid 777"), v.first("replay-error").witness());
  }

  @Test
  void pgAmcheckFindingsAreViolations() {
    World w = new World().t1Updates();
    Map<Integer, Map<Long, Long>> initial = Map.of(1, Map.of(0L, -1L, 1L, -2L));
    Verification v = Verifier.verify(new Observations(History.of(w.ops), w.markers, w.status, initial, w.versions,
        Map.of(1, w.live), Map.of(1, w.shadow), w.delivered, null, w.replays, w.replaysWithoutOwn,
        List.of(new AmcheckRun("after fault #1 (restart)", "corrupt", "heap table \"ck_t1\": line pointer")), Map.of(),
        Map.of(), List.of(), Map.of(), false, Map.of(), Map.of(), List.of(), Map.of()));
    assertEquals(Map.of("amcheck", 1L), v.violations());
  }

  private static void fault(World w, int no, String kind) {
    w.op(0, Op.of("fault").fault(kind, "start", "#" + no + " SIGKILL").outcome("ok"));
    w.op(0, Op.of("fault").fault(kind, "end", "#" + no + " SIGKILL; serving again").outcome("ok"));
  }

  /** T1 (xid 100) updates key 0 to 1000, its commit is acknowledged, then a failover loses it. */
  private static World lostCommit(boolean async) {
    World w = new World();
    w.async = async;
    w.begin(1, 100L);
    w.update(1, 0, 1000);
    w.commit(1, "ok");
    fault(w, 1, "failover");
    return w;
  }

  @Test
  void aCommitLostByAFailoverIsAViolationWithASynchronousStandby() {
    Verification v = lostCommit(false).verify();
    assertEquals(Map.of("lost-commit", 1L), v.violations());
    assertTrue(v.losses().isEmpty());
  }

  @Test
  void aCommitLostByAnAsynchronousFailoverIsListedAndCountedNotAViolation() {
    Verification v = lostCommit(true).verify();
    assertTrue(v.valid(), v.witnesses().toString());
    assertEquals(1, v.checked().get("acknowledged commits lost by async failover"));
    assertTrue(v.losses().get(0).witness().contains("T1"), v.losses().toString());
  }

  @Test
  void anAsynchronousLossBeforeNoFailoverIsStillAViolation() {
    World w = new World();
    w.async = true;
    fault(w, 1, "failover");
    w.begin(1, 100L);
    w.update(1, 0, 1000);
    w.commit(1, "ok"); // acknowledged after the failover: nothing excuses its loss
    assertEquals(Map.of("lost-commit", 1L), w.verify().violations());
  }

  @Test
  void aReadThatSawACommitAnAsynchronousFailoverLostIsListed() {
    for (boolean async : new boolean[] {false, true}) {
      World w = new World();
      w.async = async;
      w.begin(1, 100L);
      w.update(1, 0, 1000);
      w.commit(1, "ok");
      w.begin(2, null);
      Op read = w.read(2, "v1:101:101:", 0, 0, new long[] {0, 1000});
      w.commit(2, "ok");
      fault(w, 1, "failover");
      w.replays.put(read.id(), List.of(new long[] {0, -1})); // the final primary never had T1
      Verification v = w.verify();
      if (async) {
        assertTrue(v.valid(), v.witnesses().toString());
        assertEquals(1, v.checked().get("reads that saw commits lost by async failover"));
      } else {
        assertEquals(java.util.Set.of("lost-commit", "replay-mismatch"), v.violations().keySet());
      }
    }
  }

  /** Scratch branch s1 forked from main; T3 reads key 0 on it; then (maybe) a crash. */
  private static World scratchRead(boolean crash, boolean replayedBefore) {
    World w = new World();
    w.op(0, Op.of("branch").branch("s1").forked("main", "v1:1:1:").scratch().outcome("ok"));
    w.begin(3, null);
    Op read = w.op(3, Op.of("read").table(1).read("v1:1:1:", 0, 0).rows(List.of(new long[] {0, -1})).branch("s1")
        .outcome("ok"));
    w.commit(3, "ok");
    if (crash) {
      fault(w, 1, "restart");
    }
    w.branchStatus.put("s1", "lost");
    w.replayErrors.put(read.id(), "GN053 scratch branch 's1' lost its rows in a crash or failover of the server");
    if (replayedBefore) {
      w.scratchReplays.put(read.id(), List.of(new long[] {0, -1}));
    }
    return w;
  }

  @Test
  void aScratchBranchACrashEmptiedIsLostByDesignAndItsReadsWereReplayedBefore() {
    Verification v = scratchRead(true, true).verify();
    assertTrue(v.valid(), v.witnesses().toString());
    assertEquals(1, v.checked().get("scratch branches emptied by a crash (GN053)"));
    assertEquals(1, v.checked().get("scratch branch reads replayed before a fault emptied the branch"));
    // not replayed before the crash: counted as not replayable, not silent
    v = scratchRead(true, false).verify();
    assertTrue(v.valid(), v.witnesses().toString());
    assertEquals(1, v.checked().get("scratch branch reads not replayable (branch lost)"));
  }

  @Test
  void aScratchBranchLostWithoutACrashIsAViolation() {
    assertTrue(scratchRead(false, true).verify().violations().containsKey("scratch-lost-without-crash"));
  }

  @Test
  void aReadReplayedBeforeTheCrashMustMatchToo() {
    World w = scratchRead(true, true);
    w.scratchReplays.put(w.ops.get(2).id(), List.of(new long[] {0, 5}));
    assertEquals(Map.of("replay-mismatch", 1L), w.verify().violations());
  }

  /** A merge of b1 into main with strategy fail: both sides changed key 0, a conflict. */
  private static World conflictingMerge(long resultKey0, boolean reported) {
    World w = new World();
    w.begin(7, 700L);
    w.op(7, Op.of("merge_ours").table(1).rows(List.of(new long[] {0, 10}, new long[] {1, -2})).outcome("ok"));
    w.op(7, Op.of("merge_theirs").table(1).rows(List.of(new long[] {0, 20}, new long[] {1, 30})).outcome("ok"));
    w.op(7, Op.of("merge").merge("b1", "main", "fail/conflict", 1L, "conflicts (0 adds, 1 modifications, 0 deletes, "
        + "1 conflicts)").outcome("ok"));
    w.op(7, Op.of("merge_base").table(1).rows(List.of(new long[] {0, -1}, new long[] {1, -2})).outcome("ok"));
    if (reported) {
      w.op(7, Op.of("merge_conflicts").table(1).rows(List.of(new long[] {0, 0})).outcome("ok"));
    }
    w.op(7, Op.of("merge_result").table(1).rows(List.of(new long[] {0, resultKey0}, new long[] {1, -2}))
        .outcome("ok"));
    return w;
  }

  @Test
  void aMergeWithConflictsMustReportThemAndChangeNothing() {
    World w = conflictingMerge(10, true);
    w.op(7, Op.of("rollback").outcome("ok"));
    Verification v = w.verify();
    assertTrue(v.valid(), v.witnesses().toString());
    assertEquals(1, v.checked().get("merge conflicts reported"));
    assertEquals(Map.of("merge-changed-on-conflict", 1L), conflictingMerge(20, true).verify().violations());
    assertTrue(conflictingMerge(10, false).verify().violations().containsKey("merge-conflict-missed"));
  }

  @Test
  void aResolvedConflictIsMergedAsResolved() {
    for (long choice : new long[] {0, 1, 2, 3}) {
      World w = conflictingMerge(10, true);
      w.op(7, Op.of("merge_resolve").table(1).rows(List.of(new long[] {0, choice, 99})).outcome("ok"));
      w.op(7, Op.of("merge").merge("b1", "main", "fail/conflict", 2L, "applied").outcome("ok"));
      w.op(7, Op.of("merge_base").table(1).rows(List.of(new long[] {0, -1}, new long[] {1, -2})).outcome("ok"));
      long want = new long[] {10, 20, -1, 99}[(int) choice];
      Op result = w.op(7, Op.of("merge_result").table(1).rows(List.of(new long[] {0, want}, new long[] {1, 30}))
          .outcome("ok"));
      w.op(7, Op.of("rollback").outcome("ok"));
      Verification v = w.verify();
      assertTrue(v.valid(), choice + " " + v.witnesses());
      assertEquals(1, v.checked().get("merge conflicts resolved and merged again"));
      w.ops.set(w.ops.indexOf(result), Op.of("merge_result").table(1).rows(List.of(new long[] {0, want + 1},
          new long[] {1, 30})).outcome("ok").session(7, 7, "rr").build(result.id(), result.t()));
      assertEquals(Map.of("merge-lost-change", 1L), w.verify().violations(), "choice " + choice);
    }
  }

  /** Branch b1 from main; T4, T5, T6 (xids 300..302) set key 0 on it to 500, 600, 700. */
  private static World branchWrites() {
    World w = new World();
    w.op(0, Op.of("branch").branch("b1").forked("main", "v1:1:1:").outcome("ok"));
    long v = 500;
    for (long t = 4; t <= 6; t++, v += 100) {
      w.op(t, Op.of("begin").xid(Long.toString(296 + t)).branch("b1").outcome("ok"));
      w.op(t, Op.of("update").table(1).rows(List.of(new long[] {0, v})).shadow(1).branch("b1").outcome("ok"));
      w.op(t, Op.of("commit").outcome("ok").micros(100).branch("b1"));
      w.markers.put(t, 296 + t);
    }
    w.branchStatus.put("b1", "intact");
    w.branchNow.put("b1", Map.of(1, Map.of(0L, 700L, 1L, -2L)));
    w.parentAtCutoff.put("b1", Map.of(1, Map.of(0L, -1L, 1L, -2L)));
    w.branchShadow.put("b1", Map.of(1, Map.of(0L, 700L)));
    w.branchVersions.add(new BranchVersion(1, "b1", 10, 300, 'I', false, 0, null));
    w.branchVersions.add(new BranchVersion(1, "b1", 20, 301, 'U', false, 0, 500L));
    w.branchVersions.add(new BranchVersion(1, "b1", 30, 302, 'U', false, 0, 600L));
    return w;
  }

  @Test
  void branchWritesMatchTheirShadowAndTheirHistoryIsAChain() {
    Verification v = branchWrites().verify();
    assertTrue(v.valid(), v.witnesses().toString());
    assertEquals(1, v.checked().get("branch keys compared with the branch shadows"));
    assertEquals(3, v.checked().get("branch history versions checked along their rows"));
  }

  @Test
  void aBranchThatDiffersFromItsShadowIsAViolation() {
    World w = branchWrites();
    w.branchNow.put("b1", Map.of(1, Map.of(0L, 600L, 1L, -2L)));
    assertTrue(w.verify().violations().containsKey("branch-shadow-mismatch"), w.verify().byKind().toString());
  }

  @Test
  void branchVersionKeysThatGoBackwardsAreFound() {
    World w = branchWrites();
    w.branchVersions.clear(); // T6's version got a smaller key than T5's
    w.branchVersions.add(new BranchVersion(1, "b1", 10, 300, 'I', false, 0, null));
    w.branchVersions.add(new BranchVersion(1, "b1", 20, 302, 'U', false, 0, 600L));
    w.branchVersions.add(new BranchVersion(1, "b1", 30, 301, 'U', false, 0, 500L));
    Verification v = w.verify();
    assertTrue(v.violations().containsKey("vid-backwards"), v.byKind().toString());
    assertTrue(v.first("vid-backwards").witness().contains("branch b1"), v.first("vid-backwards").witness());
  }

  @Test
  void aBranchWhoseCreationAnAsynchronousFailoverLostIsListedWithItsReads() {
    for (boolean async : new boolean[] {false, true}) {
      World w = new World();
      w.async = async;
      w.op(0, Op.of("branch").branch("b2").forked("main", "v1:1:1:").outcome("ok"));
      w.begin(3, null);
      Op read = w.op(3, Op.of("read").table(1).read("v1:1:1:", 0, 0).rows(List.of(new long[] {0, -1})).branch("b2")
          .outcome("ok"));
      w.commit(3, "ok");
      fault(w, 1, "failover");
      w.branchStatus.put("b2", "missing");
      w.replayErrors.put(read.id(), "GN050 branch 'b2' does not exist");
      Verification v = w.verify();
      if (async) {
        assertTrue(v.valid(), v.witnesses().toString());
        assertEquals(1, v.checked().get("branches lost by async failover"));
        assertEquals(1, v.checked().get("branch reads not replayable (branch lost by async failover)"));
      } else {
        assertEquals(java.util.Set.of("branch-lost", "replay-error"), v.violations().keySet());
      }
    }
  }
}
