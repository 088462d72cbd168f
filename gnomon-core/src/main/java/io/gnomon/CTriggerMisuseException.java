package io.gnomon;

/** The C write trigger fired where Gnomon did not install it, or the table's generated objects are missing (SQLSTATE GN071). */
public final class CTriggerMisuseException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public CTriggerMisuseException(String message, Throwable cause) {
    super(message, "GN071", cause);
  }
}
