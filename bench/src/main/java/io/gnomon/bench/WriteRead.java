package io.gnomon.bench;

import io.gnomon.testkit.PgCluster;
import java.sql.Connection;

/**
 * What the write-read group's measurements share: the cluster, the two databases (an untracked copy
 * and a tracked copy of the same 200,000-row {@code pgbench_accounts}, both loaded by {@code pgbench
 * -i -s 2} and both with the Gnomon catalog installed) and one open connection to each.
 */
record WriteRead(
    PgCluster pg, Budget budget, Pgbench pgbench, Wal wal, Details details, Connection tracked,
    Connection untracked) {

  static final String TRACKED = "wr_tracked";
  static final String UNTRACKED = "wr_untracked";
  static final int SCALE = 2;
  static final int ROWS = 100_000 * SCALE;

  Connection connection(String db) {
    return TRACKED.equals(db) ? tracked : untracked;
  }

  /** A checkpoint, so that no side inherits the other's dirty buffers or pays for its full-page images. */
  void checkpoint() {
    Db.exec(tracked, "checkpoint");
  }
}
