package io.gnomon.checker.run;

import io.gnomon.checker.history.HistoryLog;
import io.gnomon.checker.history.Op;
import io.gnomon.testkit.PgCluster;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

/**
 * Injects the faults of a run at times and on targets chosen by the seed, logging each as a {@code fault} op when it
 * starts and when the server accepts connections again: {@code kill} (SIGKILL of one session's backend, half the time
 * while it commits; the postmaster then restarts every backend), {@code restart} (SIGKILL of the postmaster, then
 * crash recovery) and {@code failover} (SIGKILL of the primary, promotion of its synchronous standby, clients move to
 * it, then a new synchronous standby of the new primary). pg_amcheck runs after each. On a server the testkit does
 * not control, {@code kill} terminates the backend with pg_terminate_backend instead.
 */
public final class Faults implements Runnable {
  /** A fault the seed scheduled: when (ms after the start), what, and its random choices. */
  public record Planned(long at, String kind, boolean midCommit, int target) {}

  private final Servers servers;
  private final HistoryLog log;
  private final List<Session> sessions;
  private final List<Planned> plan;
  private final Amcheck amcheck;
  private final Workload workload;
  private final Map<String, Integer> done = Collections.synchronizedMap(new TreeMap<>());
  volatile Throwable failure;
  private volatile boolean stop;
  /** Reads on scratch branches replayed before the faults. */
  volatile int scratchReplayed;

  Faults(Servers servers, HistoryLog log, List<Session> sessions, List<Planned> plan, Amcheck amcheck,
      Workload workload) {
    this.servers = servers;
    this.log = log;
    this.sessions = sessions;
    this.plan = plan;
    this.amcheck = amcheck;
    this.workload = workload;
  }

  /**
   * The schedule: one fault per ten seconds (at least one of each kind), in slots spread over 10-80% of the run, the
   * kinds in a seeded order, repeated.
   */
  public static List<Planned> plan(long seed, Duration duration, List<String> kinds) {
    List<Planned> out = new ArrayList<>();
    if (kinds.isEmpty()) {
      return out;
    }
    Random rnd = new Random(seed ^ 0x5DEECE66DL);
    List<String> order = new ArrayList<>(kinds);
    Collections.shuffle(order, rnd);
    long total = duration.toMillis();
    int n = (int) Math.max(kinds.size(), total / 10_000);
    long from = total / 10;
    long slot = (total * 8 / 10 - from) / n;
    for (int i = 0; i < n; i++) {
      long at = from + i * slot + (slot > 4 ? rnd.nextLong(slot / 2) : 0);
      out.add(new Planned(at, order.get(i % order.size()), rnd.nextBoolean(), rnd.nextInt(1 << 16)));
    }
    return out;
  }

  /** Faults injected so far, by kind. */
  public Map<String, Integer> done() {
    return Map.copyOf(done);
  }

  void stop() {
    stop = true;
  }

  @Override
  public void run() {
    int no = 0;
    try {
      for (Planned p : plan) {
        no++;
        while (!stop && log.elapsedMillis() < p.at()) {
          Thread.sleep(20);
        }
        if (stop) {
          return;
        }
        inject(no, p);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException | SQLException e) {
      failure = e;
    }
  }

  private void inject(int no, Planned p) throws InterruptedException, SQLException {
    if (servers.controlled()) {
      // every kind empties the scratch branches (a killed backend makes the postmaster reinitialise, with crash
      // recovery): replay their reads first, while they can be read (and once more just before the crash, for the
      // reads made meanwhile; a kill waits for a commit instead)
      scratchReplayed += ScratchReplay.run(workload);
    }
    // no branch is created while the fault is under way: a scratch branch created after the fault's start op must
    // not have been emptied by it
    workload.branchLock.lock();
    try {
      injectLocked(no, p);
    } finally {
      workload.branchLock.unlock();
    }
    amcheck.run("after fault #" + no + " (" + p.kind() + ")");
    if ("failover".equals(p.kind()) && !stop && !workload.stopping() && plan.subList(no, plan.size()).stream()
        .anyMatch(q -> "failover".equals(q.kind()))) {
      newStandby(); // for the next failover
    }
  }

  private void injectLocked(int no, Planned p) throws InterruptedException, SQLException {
    String detail;
    long t0 = System.nanoTime();
    switch (p.kind()) {
      case "kill" -> {
        Session s = sessions.get(p.target() % sessions.size());
        if (p.midCommit()) {
          long until = System.nanoTime() + 2_000_000_000L;
          while (!s.committing && System.nanoTime() < until) {
            Thread.onSpinWait();
          }
        }
        int pid = s.pid;
        detail = "SIGKILL of session " + s.no() + "'s backend (pid " + pid + ")"
            + (s.committing ? " while it was committing" : p.midCommit() ? " (it was not committing)" : "");
        logFault(no, p.kind(), "start", detail);
        if (servers.controlled()) {
          if (!p.midCommit()) {
            scratchReplayed += ScratchReplay.run(workload); // the reads made since, once more
          }
          try {
            servers.primary().killBackend(pid);
          } catch (IllegalArgumentException e) {
            detail += "; the backend had already gone";
          }
        } else {
          try (Connection c = servers.connect();
              PreparedStatement ps = c.prepareStatement("select pg_terminate_backend(?)")) {
            ps.setInt(1, pid);
            ps.execute();
          }
          detail = "pg_terminate_backend of session " + s.no() + "'s backend (pid " + pid
              + "): no process control on an existing server";
        }
      }
      case "restart" -> {
        detail = "SIGKILL of the postmaster on port " + servers.primary().port() + ", then crash recovery";
        logFault(no, p.kind(), "start", detail);
        scratchReplayed += ScratchReplay.run(workload);
        servers.primary().crash();
        servers.primary().start();
      }
      case "failover" -> {
        PgCluster standby = servers.standby();
        if (standby == null) {
          standby = newStandby();
        }
        PgCluster old = servers.primary();
        if (servers.synchronous()) {
          detail = "SIGKILL of the primary on port " + old.port() + ", promotion of the synchronous standby on port "
              + standby.port();
          logFault(no, p.kind(), "start", detail);
        } else {
          // an asynchronous standby that lags: cut off from the primary for a while before the primary dies, so that
          // the commits acknowledged meanwhile are lost by the failover (a standby that keeps up would lose none)
          long lag = 200 + p.target() % 600;
          detail = "the asynchronous standby on port " + standby.port() + " cut off from the primary on port "
              + old.port() + " for " + lag + " ms (commits acknowledged meanwhile are lost), then SIGKILL of the "
              + "primary and promotion of the standby";
          logFault(no, p.kind(), "start", detail);
          conninfo(standby, "''");
          Thread.sleep(lag);
        }
        scratchReplayed += ScratchReplay.run(workload);
        old.crash();
        standby.promote();
        if (!servers.synchronous()) {
          conninfo(standby, "default"); // its next standbys copy its configuration
        }
        servers.promoted(standby);
      }
      default -> throw new IllegalArgumentException("unknown fault " + p.kind());
    }
    long recovered = (System.nanoTime() - t0) / 1_000_000;
    done.merge(p.kind(), 1, Integer::sum);
    logFault(no, p.kind(), "end", detail + "; serving again after " + recovered + " ms");
  }

  /** Sets (a quoted value) or resets ({@code default}) a server's primary_conninfo, and reloads it. */
  private static void conninfo(PgCluster server, String value) throws SQLException {
    try (Connection c = server.connect("postgres"); java.sql.Statement st = c.createStatement()) {
      st.execute("alter system set primary_conninfo = " + value);
      st.execute("select pg_reload_conf()");
    }
  }

  private PgCluster newStandby() {
    return servers.startStandby();
  }

  private void logFault(int no, String kind, String phase, String detail) {
    log.log(Op.of("fault").fault(kind, phase, "#" + no + " " + detail).outcome("ok"));
  }
}
