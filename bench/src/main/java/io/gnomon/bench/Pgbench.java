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
