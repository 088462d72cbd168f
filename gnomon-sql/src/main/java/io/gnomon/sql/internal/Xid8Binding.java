package io.gnomon.sql.internal;

/**
 * Binds PostgreSQL's {@code xid8} (a 64-bit transaction id that never wraps) as a {@code Long}, read and written as
 * unsigned. Used by the generated jOOQ classes.
 */
public final class Xid8Binding extends TextCastBinding<Long> {
  /** Creates the binding; jOOQ's generated classes call this. */
  public Xid8Binding() {
    super("pg_catalog.xid8");
  }

  @Override
  String toText(Long value) {
    return Long.toUnsignedString(value);
  }

  @Override
  Long fromText(String text) {
    return Long.parseUnsignedLong(text);
  }

  @Override
  Class<Long> userType() {
    return Long.class;
  }
}
