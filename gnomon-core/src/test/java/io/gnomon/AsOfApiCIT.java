package io.gnomon;

/** AsOfApiIT, with history written by the optional C module's trigger (both write paths). */
class AsOfApiCIT extends AsOfApiIT {
  @Override
  boolean cWritePath() {
    return true;
  }
}
