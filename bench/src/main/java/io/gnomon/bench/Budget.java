package io.gnomon.bench;

/**
 * How long and how often each measurement runs: the full run, or a short smoke run ({@code --quick}).
 *
 * @param quick whether this is the smoke run
 * @param repeats repeats of each side-by-side pair, alternating which side goes first
 * @param pgbenchSeconds duration of one pgbench run for throughput metrics
 * @param latencySeconds duration of one single-client pgbench run for latency metrics
 * @param serverLoop iterations of a server-side loop (single-row updates or reads)
 * @param walWrites single-row updates per WAL measurement
 * @param scanRepeats repeats of a full-scan timing
 */
record Budget(boolean quick, int repeats, int pgbenchSeconds, int latencySeconds, int serverLoop, int walWrites,
    int scanRepeats) {

  static Budget full() {
    return new Budget(false, 5, 12, 8, 50_000, 10_000, 5);
  }

  static Budget quickRun() {
    return new Budget(true, 2, 3, 2, 3_000, 1_000, 2);
  }

  /** Which side goes first in repeat {@code r}: tracked first in even repeats. */
  static boolean trackedFirst(int r) {
    return r % 2 == 0;
  }
}
