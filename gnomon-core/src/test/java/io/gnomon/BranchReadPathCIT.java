package io.gnomon;

/**
 * BranchReadPathIT with the optional C module enabled: the branch views read through {@code gnomon.branch_pick_c}
 * (gnomon-c/src/branch.c), and every read through a view is compared with the same model.
 */
class BranchReadPathCIT extends BranchReadPathIT {
  @Override
  boolean cWritePath() {
    return true;
  }
}
