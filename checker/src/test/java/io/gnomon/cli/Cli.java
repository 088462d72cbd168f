package io.gnomon.cli;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs {@code ./gnomon} in-process, as {@link Main#main} would, and keeps what it printed. */
final class Cli {
  private Cli() {}

  /** What one run printed, and its exit status. */
  record Run(int status, String out, String err) {
    /** Everything printed, for assertion messages. */
    String all() {
      return "exit status " + status + "\n--- stdout:\n" + out + "\n--- stderr:\n" + err;
    }
  }

  static Run run(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      status = Main.run(args, o, e);
    }
    return new Run(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }
}
