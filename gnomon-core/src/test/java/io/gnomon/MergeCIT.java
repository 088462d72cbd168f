package io.gnomon;

/** MergeIT, with history written by the optional C module's trigger (both write paths). */
class MergeCIT extends MergeIT {
  @Override
  boolean cWritePath() {
    return true;
  }
}
