package io.gnomon.testkit.internal;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/** Reading the end of log files for error messages. */
final class LogFiles {

  private static final int MAX_BYTES = 64 * 1024;

  private LogFiles() {}

  /** Returns the last {@code lines} lines of {@code file}, or an empty string if unreadable. */
  static String tail(Path file, int lines) {
    return tailFrom(file, 0, lines);
  }

  /**
   * Returns the last {@code lines} lines of the part of {@code file} after byte {@code offset}, or
   * an empty string if unreadable.
   */
  static String tailFrom(Path file, long offset, int lines) {
    if (lines <= 0 || file == null || !Files.isReadable(file)) {
      return "";
    }
    try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "r")) {
      long length = raf.length();
      long start = Math.max(offset, length - MAX_BYTES);
      if (start >= length) {
        return "";
      }
      byte[] bytes = new byte[(int) (length - start)];
      raf.seek(start);
      raf.readFully(bytes);
      List<String> all = Arrays.asList(new String(bytes, StandardCharsets.UTF_8).split("\n"));
      return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size()));
    } catch (IOException e) {
      return "";
    }
  }

  /** Returns the size of {@code file}, or 0 when it does not exist. */
  static long size(Path file) {
    try {
      return Files.exists(file) ? Files.size(file) : 0;
    } catch (IOException e) {
      return 0;
    }
  }

  /** Formats a tail for the end of an exception message. */
  static String section(String title, String tail) {
    return tail.isBlank() ? "" : "\n--- " + title + " ---\n" + tail + "\n---";
  }
}
