package io.gnomon.bench;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The evidence behind a group's rows (plans, WAL breakdowns, per-run figures, diagnostics), written
 * beside its JSON as {@code GROUP.txt} and echoed briefly to the console.
 */
final class Details {
  private final StringBuilder text = new StringBuilder();
  private final PrintStream console;
  private final long start = System.nanoTime();

  Details(PrintStream console) {
    this.console = console;
  }

  /** A progress line, stamped with the seconds since the group started: kept, and printed at once. */
  void log(String format, Object... args) {
    String line = String.format(Locale.ROOT, "[%5.0f s] ", (System.nanoTime() - start) / 1e9)
        + String.format(Locale.ROOT, format, args);
    console.println("  " + line);
    text.append(line).append('\n');
  }

  /** A block of evidence (a plan, a WAL breakdown): kept, not printed. */
  void section(String title, String body) {
    text.append("\n--- ").append(title).append(" ---\n").append(body.strip()).append("\n\n");
  }

  void writeTo(Path file) {
    try {
      Files.createDirectories(file.getParent());
      Files.writeString(file, text.toString(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write " + file + ": " + e.getMessage(), e);
    }
  }
}
