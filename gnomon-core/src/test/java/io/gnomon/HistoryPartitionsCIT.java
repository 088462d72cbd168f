package io.gnomon;

/** HistoryPartitionsIT, with history written by the optional C module's trigger (history partitions, both write paths). */
class HistoryPartitionsCIT extends HistoryPartitionsIT {
  @Override
  boolean cWritePath() {
    return true;
  }
}
