package io.gnomon.cli;

/** The command line cannot be understood; the message says what is wrong in one line. */
final class UsageException extends Exception {
  UsageException(String message) {
    super(message);
  }
}
