package io.gnomon;

/** The optional C module cannot be used: the library is missing or of another interface version, or the caller is no superuser; the message says what to do (SQLSTATE GN070). */
public final class CModuleUnavailableException extends GnomonException {
  /** Creates the exception; used by Gnomon's error translator. */
  public CModuleUnavailableException(String message, Throwable cause) {
    super(message, "GN070", cause);
  }
}
