package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Running short-lived commands (initdb, pg_basebackup, kill, tar) with a timeout, their combined
 * output captured to a file so that a hung command can never block the JVM on a pipe.
 */
final class Commands {

  /** The outcome of a command that finished in time. */
  record Result(int exitCode, String output) {}

  private Commands() {}

  /**
   * Builds a process with a scrubbed environment: no {@code PG*} variables (they would redirect
   * the tools to another server) and the C locale (messages the testkit reads are in English).
   */
  static ProcessBuilder builder(List<String> command, Path workDir) {
    ProcessBuilder pb = new ProcessBuilder(command);
    Map<String, String> env = pb.environment();
    env.keySet().removeIf(k -> k.startsWith("PG"));
    env.put("LC_ALL", "C");
    env.put("LANG", "C");
    if (workDir != null) {
      pb.directory(workDir.toFile());
      env.put("HOME", workDir.toString());
    } else {
      // The JVM's directory may be closed to the postgres user, and tools call getcwd().
      pb.directory(new File("/"));
    }
    pb.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    return pb;
  }

  /**
   * Runs a command to completion.
   *
   * @param command the command line
   * @param workDir the working directory and HOME, or null for the JVM's
   * @param outputFile where to write output, or null for a temporary file deleted afterwards
   * @param timeout how long the command may take; it is killed after that
   * @return exit code and output (at most the last 200 lines)
   * @throws PgClusterException if it cannot be started or times out
   */
  static Result run(List<String> command, Path workDir, Path outputFile, Duration timeout) {
    Path out = outputFile;
    boolean temporary = out == null;
    try {
      if (temporary) {
        out = Files.createTempFile("gnomon-cmd-", ".log");
      }
      ProcessBuilder pb = builder(command, workDir);
      pb.redirectErrorStream(true);
      pb.redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()));
      long offset = LogFiles.size(out);
      Process p = pb.start();
      if (!Poll.exited(p, timeout)) {
        p.destroyForcibly();
        Poll.exited(p, Duration.ofSeconds(5));
        throw new PgClusterException(
            "Command timed out after "
                + timeout.toSeconds()
                + " s and was killed: "
                + String.join(" ", command)
                + LogFiles.section("output", LogFiles.tailFrom(out, offset, 40)));
      }
      return new Result(p.exitValue(), LogFiles.tailFrom(out, offset, 200));
    } catch (IOException e) {
      throw new PgClusterException(
          "Could not run " + String.join(" ", command) + ": " + e.getMessage(), e);
    } finally {
      if (temporary && out != null) {
        try {
          Files.deleteIfExists(out);
        } catch (IOException ignored) {
          // a leftover temporary file is harmless
        }
      }
    }
  }

  /**
   * Runs a command and fails unless it exits with 0.
   *
   * @param what what the command does, for the message ("initdb for /tmp/gnomon-pg-1/data")
   * @return its output
   */
  static String runChecked(
      String what, List<String> command, Path workDir, Path outputFile, Duration timeout) {
    Result r = run(command, workDir, outputFile, timeout);
    if (r.exitCode() != 0) {
      throw new PgClusterException(
          what
              + " failed with exit code "
              + r.exitCode()
              + ": "
              + String.join(" ", command)
              + LogFiles.section("output", lastLines(r.output(), 40)));
    }
    return r.output();
  }

  private static String lastLines(String text, int n) {
    String[] lines = text.split("\n");
    int from = Math.max(0, lines.length - n);
    return String.join("\n", List.of(lines).subList(from, lines.length));
  }

  /** Reads a small text file written by a command; empty when missing. */
  static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
    } catch (IOException e) {
      return "";
    }
  }
}
