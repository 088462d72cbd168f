package io.gnomon.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** What the numbers were measured on: cores, memory, CPU model and load, for the report's header. */
final class Machine {
  private Machine() {}

  static List<String> describe() {
    List<String> lines = new ArrayList<>();
    lines.add("cores: " + Runtime.getRuntime().availableProcessors());
    lines.add("cpu: " + firstMatch(Path.of("/proc/cpuinfo"), "model name"));
    lines.add("memory: " + firstMatch(Path.of("/proc/meminfo"), "MemTotal"));
    lines.add("load average: " + read(Path.of("/proc/loadavg")));
    lines.add("java: " + System.getProperty("java.version"));
    String revision = System.getenv("GNOMON_BENCH_REVISION");
    lines.add("gnomon: " + (revision == null ? "revision unknown (not started by bench/run.sh)" : revision));
    return lines;
  }

  /** The 1-minute load average, or NaN when unknown. */
  static double load() {
    String s = read(Path.of("/proc/loadavg"));
    try {
      return Double.parseDouble(s.split(" ")[0]);
    } catch (RuntimeException e) {
      return Double.NaN;
    }
  }

  private static String firstMatch(Path file, String key) {
    try {
      for (String line : Files.readAllLines(file)) {
        if (line.startsWith(key)) {
          return line.substring(line.indexOf(':') + 1).trim();
        }
      }
    } catch (IOException e) {
      return "unknown";
    }
    return "unknown";
  }

  private static String read(Path file) {
    try {
      return Files.readString(file).trim();
    } catch (IOException e) {
      return "unknown";
    }
  }
}
