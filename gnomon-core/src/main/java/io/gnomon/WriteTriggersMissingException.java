package io.gnomon;

/** Tracked tables lack their write triggers (for example after a restore without the C module; re-create them with {@code select gnomon.use_c_module(false);}), or have them disabled (enable them with {@code alter table ... enable trigger ...}) (SQLSTATE GN072). */
public final class WriteTriggersMissingException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public WriteTriggersMissingException(String message, Throwable cause) {
    super(message, "GN072", cause);
  }
}
