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
    long t0 = System.nanoTime();
    threads.forEach(Thread::start);
    faultThread.start();
    long end = t0 + config.duration().toNanos();
    long every = config.duration().toSeconds() >= 30 ? 5_000_000_000L : 2_000_000_000L;
    long nextPrint = t0 + every;
    String problem = null;
    int merges = 0;
    int created = 0;
    List<String[]> mergeable = new ArrayList<>(); // branches forked from main: [name, cutoff]
    int merged = 0;
    // the workload runs its duration, and on until every planned fault has struck (bounded), so that a loaded
    // machine that delays the faults still gets every kind
    long hardEnd = end + 120_000_000_000L;
    while ((System.nanoTime() < end || faultThread.isAlive() && System.nanoTime() < hardEnd) && problem == null) {
      Thread.sleep(50);
      if (created < config.branches() && System.nanoTime() - t0 >= branchAt(config, created + 1)) {
        String cutoff = createBranch(servers, workload, created + 1);
        if (cutoff != null) {
          created++;
          if ("main".equals(Schema.parent(created))) {
            mergeable.add(new String[] {Schema.branch(created), cutoff});
          }
        }
      }
      if (merged < mergeable.size() && System.nanoTime() - t0 >= mergeAt(config, merged + 1)) {
        String[] b = mergeable.get(merged);
        merged++;
        if (Merger.merge(workload, b[0], b[1])) {
          merges++;
        }
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
    counts.put("branches created", created);
    counts.put("branches merged into main", merges);
    counts.put("faults planned", plan.size());
    counts.put("faults", faults.done());
    return new WorkloadRun(counts, problem);
  }

  /** When branch {@code i} of N is forked: from 10% to 50% of the run, evenly. */
  private static long branchAt(CheckConfig config, int i) {
    int n = config.branches();
    double at = n == 1 ? 0.1 : 0.1 + 0.4 * (i - 1) / (n - 1);
    return (long) (config.duration().toNanos() * at);
  }

  /** When the j-th branch forked from main is merged back into main: from 60% to 80% of the run. */
  private static long mergeAt(CheckConfig config, int j) {
    return (long) (config.duration().toNanos() * Math.min(0.8, 0.6 + 0.1 * (j - 1)));
  }

  /**
   * Forks branch {@code i}, logged with its cutoff, which it returns; null (try again later) while the server is
   * unavailable.
   */
  private static String createBranch(Servers servers, Workload workload, int i) {
    try (java.sql.Connection c = servers.connect()) {
      String cutoff = Schema.createBranch(c, i);
      workload.log.log(io.gnomon.checker.history.Op.of("branch").branch(Schema.branch(i))
          .forked(Schema.parent(i), cutoff).outcome("ok"));
      workload.branches.add(Schema.branch(i));
      return cutoff;
    } catch (java.sql.SQLException e) {
      if ("GN051".equals(e.getSQLState())) {
        // an earlier attempt committed although its connection broke (a fault): it exists, with the cutoff asked for
        return existingBranch(servers, workload, i);
      }
      return null;
    }
  }

  private static String existingBranch(Servers servers, Workload workload, int i) {
    try (java.sql.Connection c = servers.connect();
        java.sql.PreparedStatement ps = c.prepareStatement(
            "select 'v1:' || cutoff::text from gnomon.branch where branch_name = ?")) {
      ps.setString(1, Schema.branch(i));
      try (java.sql.ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          return null;
        }
        String cutoff = rs.getString(1);
        workload.log.log(io.gnomon.checker.history.Op.of("branch").branch(Schema.branch(i))
            .forked(Schema.parent(i), cutoff).outcome("ok"));
        workload.branches.add(Schema.branch(i));
        return cutoff;
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
