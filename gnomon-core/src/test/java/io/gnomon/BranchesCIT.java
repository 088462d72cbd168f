package io.gnomon;

/** BranchesIT, with history written by the optional C module's trigger (both write paths). */
class BranchesCIT extends BranchesIT {
  @Override
  boolean cWritePath() {
    return true;
  }
}
