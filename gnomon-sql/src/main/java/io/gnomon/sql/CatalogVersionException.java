package io.gnomon.sql;

/** The {@code gnomon} catalog is missing or has another version than this library (SQLSTATE GN020). */
public final class CatalogVersionException extends RuntimeException {
  private final int installedVersion;

  /** Creates the exception with a message that says what to do. */
  public CatalogVersionException(String message, int installedVersion) {
    super(message);
    this.installedVersion = installedVersion;
  }

  /** The installed version, 0 when none is installed. */
  public int installedVersion() {
    return installedVersion;
  }

  /** Always {@link GnomonSqlState#CATALOG_VERSION_MISMATCH}. */
  public GnomonSqlState state() {
    return GnomonSqlState.CATALOG_VERSION_MISMATCH;
  }
}
