package io.gnomon;

/** ExactReplayIT, with history written by the optional C module's trigger (the exactness property, both write paths). */
class ExactReplayCIT extends ExactReplayIT {
  @Override
  boolean cWritePath() {
    return true;
  }
}
