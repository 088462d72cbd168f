package io.gnomon;

/**
 * AsOfPointReadPropertyIT on the optional C module: its write trigger and its read path (gnomon.read_snapshot_c,
 * gnomon.row_visible_c), whose coordinate check must agree with gnomon.read_snapshot on every mutation.
 */
class AsOfPointReadPropertyCIT extends AsOfPointReadPropertyIT {
  @Override
  boolean cWritePath() {
    return true;
  }
}
