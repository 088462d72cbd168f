package io.gnomon.checker.run;

import io.gnomon.checker.verify.AmcheckRun;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Runs {@code pg_amcheck} (heap, and every btree index with {@code --heapallindexed}) on the checker's database on
 * the current primary, from the PostgreSQL bin directory the cluster runs from (else from the PATH). Keeps every run.
 */
public final class Amcheck {
  private final Servers servers;
  private final List<AmcheckRun> runs = Collections.synchronizedList(new ArrayList<>());

  public Amcheck(Servers servers) {
    this.servers = servers;
  }

  /** Every run so far. */
  public List<AmcheckRun> runs() {
    return List.copyOf(runs);
  }

  /** Runs pg_amcheck now and keeps the result. */
  public AmcheckRun run(String when) {
    AmcheckRun r = check(when);
    runs.add(r);
    return r;
  }

  private AmcheckRun check(String when) {
    Optional<Path> binary = servers.primary().binDirectory().map(d -> d.resolve("pg_amcheck"))
        .filter(Files::isExecutable).or(Amcheck::onPath);
    if (binary.isEmpty()) {
      return new AmcheckRun(when, "unavailable", "no pg_amcheck binary in the PostgreSQL bin directory, on the PATH or under /usr/lib/postgresql");
    }
    List<String> cmd = List.of(binary.get().toString(), "-h", servers.primary().host(), "-p",
        Integer.toString(servers.primary().port()), "-U", servers.primary().user(), "-w", "--heapallindexed",
        "-d", servers.database());
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(120, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return new AmcheckRun(when, "unavailable", "pg_amcheck did not finish within 120 s");
      }
      String text = new String(out, StandardCharsets.UTF_8).strip();
      if (p.exitValue() == 0) {
        return new AmcheckRun(when, "clean", text);
      }
      if (text.contains("extension \"amcheck\"") || text.contains("amcheck") && text.contains("not installed")) {
        return new AmcheckRun(when, "unavailable", "the amcheck extension is missing: " + text);
      }
      if (text.contains("could not connect") || text.contains("connection to server")) {
        return new AmcheckRun(when, "unavailable", "pg_amcheck could not connect: " + text);
      }
      return new AmcheckRun(when, "corrupt", "exit status " + p.exitValue() + ": " + text);
    } catch (IOException e) {
      return new AmcheckRun(when, "unavailable", "could not run pg_amcheck: " + e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new AmcheckRun(when, "unavailable", "interrupted");
    }
  }

  /** pg_amcheck on the PATH, else from the newest /usr/lib/postgresql/VERSION/bin. */
  private static Optional<Path> onPath() {
    Optional<Path> found = path();
    if (found.isPresent()) {
      return found;
    }
    try (var dirs = Files.list(Path.of("/usr/lib/postgresql"))) {
      return dirs.map(d -> d.resolve("bin").resolve("pg_amcheck")).filter(Files::isExecutable)
          .max(java.util.Comparator.comparingInt(p -> version(p.getParent().getParent())));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  private static int version(Path dir) {
    try {
      return Integer.parseInt(dir.getFileName().toString());
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  private static Optional<Path> path() {
    String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
    for (String dir : path.split(":")) {
      Path p = Path.of(dir, "pg_amcheck");
      if (Files.isExecutable(p)) {
        return Optional.of(p);
      }
    }
    return Optional.empty();
  }
}
