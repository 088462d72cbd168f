package io.gnomon.checker.run;

import io.gnomon.checker.CheckConfig;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs the sessions and the fault injector for the configured duration, printing progress, then stops them: the
 * sessions after their transaction under way, the injector after its fault under way (the server serves again).
 *
 * @param counts what ran: transactions by outcome, reads, faults by kind
 * @param problem why the run could not be carried out, or null
 */
public record WorkloadRun(Map<String, Object> counts, String problem) {

  public static WorkloadRun run(CheckConfig config, Servers servers, Workload workload, List<String> faultKinds,
      Amcheck amcheck, FeedSink sink, PrintStream out) throws InterruptedException {
    List<Session> sessions = new ArrayList<>();
    List<Thread> threads = new ArrayList<>();
    for (int i = 1; i <= config.sessions(); i++) {
      Session s = new Session(i, workload);
      sessions.add(s);
      Thread t = new Thread(s, "checker-session-" + i);
      t.setDaemon(true);
      threads.add(t);
    }
    List<Faults.Planned> plan = Faults.plan(config.seed(), config.duration(), faultKinds);
    Faults faults = new Faults(servers, workload.log, sessions, plan, amcheck, workload);
    Thread faultThread = new Thread(faults, "checker-faults");
    faultThread.setDaemon(true);
    long ms = config.duration().toMillis();
    Merger merger = new Merger(workload, ms / 2, Math.max(200, ms / 16));
    Thread mergeThread = new Thread(merger, "checker-merges");
    mergeThread.setDaemon(true);
    long t0 = System.nanoTime();
    threads.forEach(Thread::start);
    faultThread.start();
    if (config.branches() > 0) {
      mergeThread.start();
    }
    long end = t0 + config.duration().toNanos();
    long every = config.duration().toSeconds() >= 30 ? 5_000_000_000L : 2_000_000_000L;
    long nextPrint = t0 + every;
    String problem = null;
    Forks forks = new Forks();
    // the workload runs its duration, and on until every planned fault has struck (bounded), so that a loaded
    // machine that delays the faults still gets every kind
    long hardEnd = end + 120_000_000_000L;
    while ((System.nanoTime() < end || faultThread.isAlive() && System.nanoTime() < hardEnd) && problem == null) {
      Thread.sleep(50);
      if (workload.branchLock.tryLock()) { // not while a fault is under way (see Faults)
        try {
          forks.step(config, servers, workload, System.nanoTime() - t0);
        } finally {
          workload.branchLock.unlock();
        }
      }
      if (merger.failure != null && problem == null) {
        problem = "the merges stopped: " + merger.failure;
      }
      if (System.nanoTime() >= nextPrint) {
        nextPrint += every;
        out.println(progress(t0, workload, faults, sink));
      }
      problem = problem(sessions, faults);
    }
    faults.stop();
    faultThread.join(180_000);
    workload.stop();
    mergeThread.join(120_000);
    for (Thread t : threads) {
      t.join(120_000);
    }
    if (problem == null) {
      problem = problem(sessions, faults);
    }
    out.println(progress(t0, workload, faults, sink));
    Map<String, Object> counts = new LinkedHashMap<>();
    counts.put("transactions committed", workload.committed.get());
    counts.put("transactions failed or rolled back", workload.failed.get());
    counts.put("transactions with unknown outcome", workload.unknown.get());
    counts.put("reads", workload.reads.get());
    counts.put("ops logged", workload.log.count());
    counts.put("workload seconds", Math.round((System.nanoTime() - t0) / 1e8) / 10.0);
    counts.put("branches created", forks.created);
    counts.put("scratch branches created", forks.scratch - forks.skipped);
    counts.put("scratch branches not created (parent lost)", forks.skipped);
    counts.put("merges", new java.util.TreeMap<>(workload.merges));
    counts.put("faults planned", plan.size());
    counts.put("faults", faults.done());
    counts.put("scratch branch reads replayed before a fault", faults.scratchReplayed);
    return new WorkloadRun(counts, problem);
  }

  /** The branches forked so far, logged and scratch, and the scratch ones skipped because their parent was lost. */
  private static final class Forks {
    int created;
    int scratch;
    int skipped;

    /** Forks the branches whose time has come ({@code elapsed} nanoseconds into the run). */
    void step(CheckConfig config, Servers servers, Workload workload, long elapsed) {
      if (created < config.branches() && elapsed >= branchAt(config, created + 1)
          && createBranch(servers, workload, Schema.branch(created + 1), Schema.parent(created + 1), false) != null) {
        created++;
      }
      if (scratch < config.scratch() && elapsed >= scratchAt(config, scratch + 1)) {
        int i = scratch + 1;
        String parent = i % 2 == 0 ? Schema.scratch(i - 1) : i % 4 == 3 && !workload.logged.isEmpty()
            ? workload.logged.get(0) : "main";
        if (i % 2 == 0 && !workload.scratch.contains(parent)) {
          scratch++; // its parent is lost (a crash emptied it) or was never made: no nested scratch branch this time
          skipped++;
          return;
        }
        try {
          if (createBranch(servers, workload, Schema.scratch(i), parent, true) != null) {
            scratch++;
          }
        } catch (ParentLost e) {
          scratch++;
          skipped++;
        }
      }
    }
  }

  /** When branch {@code i} of N is forked: from 10% to 50% of the run, evenly. */
  private static long branchAt(CheckConfig config, int i) {
    int n = config.branches();
    double at = n == 1 ? 0.1 : 0.1 + 0.4 * (i - 1) / (n - 1);
    return (long) (config.duration().toNanos() * at);
  }

  /**
   * When scratch branch {@code i} of N is forked: in pairs (a branch and its nested child, one after the other), the
   * pairs from 5% to 70% of the run, evenly, so that some are emptied by the faults and some live to the end.
   */
  private static long scratchAt(CheckConfig config, int i) {
    int pairs = (config.scratch() + 1) / 2;
    int j = (i + 1) / 2;
    double at = pairs == 1 ? 0.05 : 0.05 + 0.65 * (j - 1) / (pairs - 1);
    return (long) (config.duration().toNanos() * at);
  }

  /** The parent of a branch to create is lost (GN053: a crash emptied it; GN050: a failover lost it). */
  private static final class ParentLost extends RuntimeException {
    ParentLost() {
      super(null, null, false, false);
    }
  }

  /**
   * Forks a branch, logged with its cutoff, which it returns; null (try again later) while the server is
   * unavailable.
   */
  private static String createBranch(Servers servers, Workload workload, String name, String parent,
      boolean scratch) {
    try (java.sql.Connection c = servers.connect()) {
      return created(workload, name, parent, scratch, Schema.createBranch(c, name, parent, scratch));
    } catch (java.sql.SQLException e) {
      if ("GN051".equals(e.getSQLState())) {
        // an earlier attempt committed although its connection broke (a fault): it exists, with the cutoff asked for
        return existingBranch(servers, workload, name, parent, scratch);
      }
      if ("GN053".equals(e.getSQLState()) || "GN050".equals(e.getSQLState())) {
        throw new ParentLost();
      }
      return null;
    }
  }

  private static String created(Workload workload, String name, String parent, boolean scratch, String cutoff) {
    io.gnomon.checker.history.Op.Builder op = io.gnomon.checker.history.Op.of("branch").branch(name)
        .forked(parent, cutoff).outcome("ok");
    workload.log.log(scratch ? op.scratch() : op);
    if (scratch) {
      workload.scratch.add(name);
    } else {
      workload.logged.add(name);
    }
    workload.branches.add(name);
    return cutoff;
  }

  private static String existingBranch(Servers servers, Workload workload, String name, String parent,
      boolean scratch) {
    try (java.sql.Connection c = servers.connect();
        java.sql.PreparedStatement ps = c.prepareStatement(
            "select cutoff from gnomon.branches() where branch_name = ?")) {
      ps.setString(1, name);
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        return rs.next() ? created(workload, name, parent, scratch, rs.getString(1)) : null;
      }
    } catch (java.sql.SQLException e) {
      return null;
    }
  }

  private static String problem(List<Session> sessions, Faults faults) {
    if (faults.failure != null) {
      return "a fault could not be injected or recovered from: " + faults.failure;
    }
    for (Session s : sessions) {
      if (s.failure != null) {
        return "session " + s.no() + " stopped: " + s.failure;
      }
    }
    return null;
  }

  private static String progress(long t0, Workload w, Faults f, FeedSink sink) {
    return String.format(Locale.ROOT, "[%5.1f s] %,d committed, %,d failed, %,d unknown; %,d reads; feed %,d events; "
            + "faults %s", (System.nanoTime() - t0) / 1e9, w.committed.get(), w.failed.get(), w.unknown.get(),
        w.reads.get(), sink.events.get(), f.done().isEmpty() ? "none yet" : f.done().toString());
  }
}
