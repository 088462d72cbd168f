package io.gnomon;

/** {@link CatalogWritesIT} with the C module enabled: its branch_create and branch reads under a granted role. */
class CatalogWritesCIT extends CatalogWritesIT {
  @Override
  boolean cWritePath() {
    return true;
  }
}
