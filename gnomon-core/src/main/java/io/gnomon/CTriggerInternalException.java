package io.gnomon;

/** The C write trigger found no history partition for the writing transaction's xid (a partition was detached by hand) (SQLSTATE GN073). */
public final class CTriggerInternalException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public CTriggerInternalException(String message, Throwable cause) {
    super(message, "GN073", cause);
  }
}
