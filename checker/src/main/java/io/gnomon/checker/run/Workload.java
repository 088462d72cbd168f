package io.gnomon.checker.run;

import io.gnomon.checker.history.HistoryLog;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the sessions share: the servers, the log, the tables, the isolation levels to use, the counters that number
 * transactions and writes, and the live counts the console shows.
 */
public final class Workload {
  final Servers servers;
  final HistoryLog log;
  final int tables;
  final List<String> isolations;
  final long seed;
  final AtomicLong txnNumbers = new AtomicLong();
  final AtomicLong writeNumbers = new AtomicLong();
  /** The branches created so far and not lost: sessions pick among them. */
  final List<String> branches = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** The logged branches among them, in creation order: merges pick among them. */
  final List<String> logged = new java.util.concurrent.CopyOnWriteArrayList<>();
  /** The scratch branches among them. */
  final java.util.Set<String> scratch = java.util.concurrent.ConcurrentHashMap.newKeySet();
  /**
   * Reads on scratch branches replayed before a crash or failover emptied them, by op number: the rows, or the error
   * (a string) when the replay failed. The verifier checks them as it checks replays after the run.
   */
  final java.util.Map<Long, Object> scratchReplays = new java.util.concurrent.ConcurrentHashMap<>();
  /** The generated objects of each table (see {@link Schema#generated}), once Gnomon tracks them. */
  volatile java.util.Map<Integer, String[]> generated;
  /** Held while a fault is under way, and while a branch is created and logged: never both. */
  final java.util.concurrent.locks.ReentrantLock branchLock = new java.util.concurrent.locks.ReentrantLock();
  /** Merges by status, and their retries. */
  final java.util.Map<String, Integer> merges = java.util.Collections.synchronizedMap(new java.util.TreeMap<>());
  /** Transactions committed (acknowledged), failed, unknown; reads. */
  public final AtomicLong committed = new AtomicLong();
  public final AtomicLong failed = new AtomicLong();
  public final AtomicLong unknown = new AtomicLong();
  public final AtomicLong reads = new AtomicLong();
  volatile boolean stopping;
  /**
   * Sessions hold it shared for each transaction; a merge takes it exclusively, so that it runs alone and its
   * REPEATABLE READ snapshot is what it merges (a hot workload would fail it with serialization failures forever).
   */
  final java.util.concurrent.locks.ReentrantReadWriteLock gate = new java.util.concurrent.locks.ReentrantReadWriteLock(
      true);

  /**
   * @param isolations {@code rc}, {@code rr}, {@code ser}: each transaction picks one at random
   */
  public Workload(Servers servers, HistoryLog log, int tables, List<String> isolations, long seed) {
    this.servers = servers;
    this.log = log;
    this.tables = tables;
    this.isolations = List.copyOf(isolations);
    this.seed = seed;
  }

  /** Asks every session to stop after its transaction under way. */
  public void stop() {
    stopping = true;
  }

  public boolean stopping() {
    return stopping;
  }

  /** A branch that is lost (a scratch branch a crash emptied, or one an asynchronous failover lost): no more use. */
  void lost(String branch) {
    branches.remove(branch);
    logged.remove(branch);
    scratch.remove(branch);
  }

  /** Sets the generated objects of each table, once Gnomon tracks them. */
  public void generated(java.util.Map<Integer, String[]> objects) {
    this.generated = objects;
  }

  /** The reads on scratch branches replayed before a fault (rows or error, by op number). */
  public java.util.Map<Long, Object> scratchReplays() {
    return java.util.Map.copyOf(scratchReplays);
  }
}
