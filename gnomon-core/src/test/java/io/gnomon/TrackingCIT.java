package io.gnomon;

/** TrackingIT, with history written by the optional C module's trigger (tracking, both write paths). */
class TrackingCIT extends TrackingIT {
  @Override
  boolean cWritePath() {
    return true;
  }
}
