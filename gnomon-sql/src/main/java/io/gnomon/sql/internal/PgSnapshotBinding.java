package io.gnomon.sql.internal;

/**
 * Binds PostgreSQL's {@code pg_snapshot} as its text form, {@code xmin:xmax:xip,...} (for example {@code
 * 7420:7424:7421,7423}): a Gnomon coordinate without its {@code v1:} prefix. Used by the generated jOOQ classes.
 */
public final class PgSnapshotBinding extends TextCastBinding<String> {
  /** Creates the binding; jOOQ's generated classes call this. */
  public PgSnapshotBinding() {
    super("pg_catalog.pg_snapshot");
  }

  @Override
  String toText(String value) {
    return value;
  }

  @Override
  String fromText(String text) {
    return text;
  }

  @Override
  Class<String> userType() {
    return String.class;
  }
}
