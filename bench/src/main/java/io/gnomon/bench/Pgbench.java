package io.gnomon.bench;

import io.gnomon.testkit.PgCluster;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs PostgreSQL's {@code pgbench} as a subprocess against a cluster, over TCP, with prepared
 * statements, and reads its throughput.
 */
final class Pgbench {
  private static final Pattern TPS = Pattern.compile("(?m)^tps = ([0-9.]+) \\(without initial connection time\\)");
  private static final Pattern LATENCY = Pattern.compile("(?m)^latency average = ([0-9.]+) ms");
  private static final Pattern COUNT = Pattern.compile("(?m)^number of transactions actually processed: ([0-9]+)");

  /** What one run measured. */
  record Result(double tps, double latencyMs, long transactions, int clients) {
    /** Microseconds per transaction per client: {@code clients * 1e6 / tps}. */
    double microsPerTransaction() {
      return clients * 1e6 / tps;
    }
  }

  private final PgCluster pg;
  private final Path bin;
  private final Path scripts;

  Pgbench(PgCluster pg, Path bin, Path scripts) {
    this.pg = pg;
    this.bin = bin;
    this.scripts = scripts;
  }

  /** {@code pgbench -i -s scale -q} on {@code db}: the standard tables, vacuumed, with primary keys. */
  void initialize(String db, int scale) {
    List<String> cmd = base();
    cmd.addAll(List.of("-i", "-s", Integer.toString(scale), "-q", db));
    exec(cmd, Map.of());
  }

  /** The built-in select-only script ({@code -S}). */
  Result selectOnly(String db, int clients, int seconds, Map<String, String> env) {
    List<String> args = new ArrayList<>(List.of("-S"));
    return run(db, clients, seconds, args, env);
  }

  /**
   * A custom script, written to a file named after {@code name}; {@code defines} become {@code -D}
   * variables.
   */
  Result script(String db, String name, String script, int clients, int seconds, Map<String, String> defines,
      Map<String, String> env) {
    Path file = scripts.resolve(name + ".sql");
    try {
      Files.createDirectories(scripts);
      Files.writeString(file, script, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write pgbench script " + file + ": " + e.getMessage(), e);
    }
    List<String> args = new ArrayList<>(List.of("-f", file.toString()));
    defines.forEach((k, v) -> args.addAll(List.of("-D", k + "=" + v)));
    return run(db, clients, seconds, args, env);
  }

  /**
   * What a run of several scripts measured per script, from pgbench's transaction log ({@code -l}): each script's
   * transactions' latencies in microseconds, as the client saw them.
   */
  record Mixed(List<double[]> latencies) {
    /** The mean latency of script {@code i}'s transactions, in microseconds. */
    double meanMicros(int i) {
      return java.util.Arrays.stream(latencies.get(i)).average().orElse(Double.NaN);
    }

    /**
     * The mean latency of the fastest {@code keep} share of script {@code i}'s transactions (a trimmed mean), in
     * microseconds: on a shared machine the slowest few are stalls, a wait for a core that lands on whichever
     * transaction is running, and they move a short run's plain mean by more than the difference measured.
     */
    double trimmedMeanMicros(int i, double keep) {
      double[] sorted = latencies.get(i).clone();
      java.util.Arrays.sort(sorted);
      int n = (int) Math.max(1, Math.floor(sorted.length * keep));
      return sorted.length == 0 ? Double.NaN : java.util.Arrays.stream(sorted, 0, n).average().orElse(Double.NaN);
    }

    /** The median latency of script {@code i}'s transactions, in microseconds. */
    double medianMicros(int i) {
      return latencies.get(i).length == 0 ? Double.NaN : Stats.median(latencies.get(i));
    }
  }

  /**
   * Several custom scripts in one run of one client: pgbench picks one of them at random for each transaction (equal
   * weights), so every script runs through the same moments of the machine's load, interleaved transaction by
   * transaction on one connection. The scripts are written to files named {@code name_0.sql}, {@code name_1.sql}, ...
   * and passed in that order.
   */
  Mixed mixed(String db, String name, List<String> scriptTexts, int seconds) {
    List<String> args = new ArrayList<>();
    Path prefix = scripts.resolve(name + "_log");
    try {
      Files.createDirectories(scripts);
      for (int i = 0; i < scriptTexts.size(); i++) {
        Path file = scripts.resolve(name + "_" + i + ".sql");
        Files.writeString(file, scriptTexts.get(i), StandardCharsets.UTF_8);
        args.addAll(List.of("-f", file.toString() + "@1"));
      }
      try (var old = Files.list(scripts)) {
        for (Path f : old.filter(f -> f.getFileName().toString().startsWith(prefix.getFileName() + ".")).toList()) {
          Files.delete(f);
        }
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot write pgbench scripts under " + scripts + ": " + e.getMessage(), e);
    }
    args.addAll(List.of("-l", "--log-prefix=" + prefix));
    run(db, 1, seconds, args, Map.of());
    List<List<Double>> per = new ArrayList<>();
    for (int i = 0; i < scriptTexts.size(); i++) {
      per.add(new ArrayList<>());
    }
    try (var logs = Files.list(scripts)) {
      for (Path f : logs.filter(f -> f.getFileName().toString().startsWith(prefix.getFileName() + ".")).toList()) {
        // client_id transaction_no time script_no time_epoch time_us: time is the latency in microseconds
        for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
          String[] fields = line.trim().split("\\s+");
          if (fields.length >= 4) {
            per.get(Integer.parseInt(fields[3])).add(Double.parseDouble(fields[2]));
          }
        }
        Files.delete(f);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot read pgbench's transaction log " + prefix + ".*: " + e.getMessage(), e);
    }
    return new Mixed(per.stream().map(l -> l.stream().mapToDouble(Double::doubleValue).toArray()).toList());
  }

  private Result run(String db, int clients, int seconds, List<String> args, Map<String, String> env) {
    List<String> cmd = base();
    cmd.addAll(List.of("-n", "-M", "prepared", "-c", Integer.toString(clients), "-j", Integer.toString(clients),
        "-T", Integer.toString(seconds)));
    cmd.addAll(args);
    cmd.add(db);
    String out = exec(cmd, env);
    Matcher tps = TPS.matcher(out);
    Matcher lat = LATENCY.matcher(out);
    Matcher count = COUNT.matcher(out);
    if (!tps.find() || !count.find()) {
      throw new IllegalStateException("cannot read pgbench's output:\n" + out);
    }
    return new Result(Double.parseDouble(tps.group(1)), lat.find() ? Double.parseDouble(lat.group(1)) : Double.NaN,
        Long.parseLong(count.group(1)), clients);
  }

  private List<String> base() {
    return new ArrayList<>(List.of(bin.resolve("pgbench").toString(), "-h", pg.host(), "-p",
        Integer.toString(pg.port()), "-U", pg.user()));
  }

  private static String exec(List<String> cmd, Map<String, String> env) {
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.environment().putAll(env);
    try {
      Process p = pb.start();
      byte[] bytes = p.getInputStream().readAllBytes();
      int rc = p.waitFor();
      String out = new String(bytes, StandardCharsets.UTF_8);
      if (rc != 0) {
        throw new IllegalStateException("pgbench failed (exit " + rc + "): " + String.join(" ", cmd) + "\n" + out);
      }
      return out;
    } catch (IOException e) {
      throw new IllegalStateException("cannot run " + cmd.get(0) + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running pgbench", e);
    }
  }
}
