package io.gnomon.bench;

import java.sql.Connection;
import java.util.Map;
import java.util.OptionalLong;

/**
 * What the branches group's measurements share: the cluster's pgbench, the budget, the log, one connection to the
 * branch database ({@link #DB}: a tracked 200,000-row {@code pgbench_accounts} with the branches below), and the
 * branch ids.
 *
 * @param depth1 a branch of main with {@link #WRITTEN} keys written on it
 * @param depth4 the fourth level of a chain of branches (main, then four levels), each level with a quarter of the
 *     same keys written on it, so that it too sees {@link #WRITTEN} written keys
 * @param logged a logged branch of main for updates
 * @param scratch a scratch branch of main for updates
 */
record BranchBench(
    Budget budget, Pgbench pgbench, Details details, Connection c, int depth1, int depth4, int logged, int scratch) {

  static final String DB = "br";
  static final int ROWS = WriteRead.ROWS;
  /** Keys written on the read branches: aid % 100 = 0, 1% of the table. */
  static final int WRITTEN = ROWS / 100;

  /** pgbench's environment for a run on a branch: what {@code gnomon.branch_use(name)} sets, as startup options. */
  static Map<String, String> on(int branch) {
    return Map.of("PGOPTIONS", "-c gnomon.branch=" + branch + " -c search_path=gnomon_b_public,public");
  }

  /** A server-side loop's clock time per iteration (what the loop returns) and the backend's CPU per iteration. */
  static double[] serverLoop(Connection c, String sql, int n) {
    BackendCpu backend = new BackendCpu(c);
    OptionalLong cpu0 = backend.micros();
    double clock = Db.number(c, sql);
    OptionalLong cpu1 = backend.micros();
    // no tick at all: too short a loop for the 10 ms clock, so no figure rather than zero
    double cpu = cpu0.isPresent() && cpu1.isPresent() && cpu1.getAsLong() > cpu0.getAsLong()
        ? (cpu1.getAsLong() - cpu0.getAsLong()) / (double) n : Double.NaN;
    return new double[] {clock, cpu};
  }
}
