package io.gnomon.testkit.internal;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs {@code initdb} once per JVM and binaries, then gives each new cluster a copy ({@code cp
 * -a}, which keeps owners and modes) of that pristine data directory: copying is several times
 * faster than bootstrapping, especially on a loaded machine. The pristine copy is never started;
 * it lives in its own {@code gnomon-pg-*} directory, removed at JVM exit (or reaped later).
 *
 * <p>Clusters made this way share a database system identifier, which only matters for tools
 * that compare clusters (pg_rewind); standbys are made with pg_basebackup and are unaffected.
 */
final class InitdbCache {

  private static final Logger LOG = LoggerFactory.getLogger(InitdbCache.class);
  private static final Map<String, ClusterDirectory> PRISTINE = new HashMap<>();

  private InitdbCache() {}

  /** Fills {@code dir.data()}, which must not exist yet, with a freshly initialised cluster. */
  static void populate(Binaries binaries, RunAs runAs, ClusterDirectory dir, Duration timeout) {
    ClusterDirectory pristine = pristine(binaries, runAs, timeout);
    Commands.Result r =
        Commands.run(
            List.of("cp", "-a", pristine.data().toString(), dir.data().toString()),
            dir.root(),
            null,
            timeout);
    if (r.exitCode() != 0) {
      LOG.warn("Copying {} failed, running initdb instead: {}", pristine.data(), r.output());
      ClusterDirectory.deleteTree(dir.data());
      initdb(binaries, runAs, dir, timeout);
    }
  }

  private static synchronized ClusterDirectory pristine(
      Binaries binaries, RunAs runAs, Duration timeout) {
    String key = binaries.bindir() + "|" + runAs;
    ClusterDirectory dir = PRISTINE.get(key);
    if (dir != null && java.nio.file.Files.isRegularFile(dir.data().resolve("PG_VERSION"))) {
      return dir;
    }
    dir = ClusterDirectory.create(runAs);
    ShutdownHooks.register("pristine data directory " + dir, dir::delete);
    try {
      initdb(binaries, runAs, dir, timeout);
    } catch (RuntimeException e) {
      dir.delete();
      throw e;
    }
    PRISTINE.put(key, dir);
    return dir;
  }

  /** Runs initdb into {@code dir.data()}: superuser postgres, trust authentication, UTF8, C. */
  static void initdb(Binaries binaries, RunAs runAs, ClusterDirectory dir, Duration timeout) {
    List<String> cmd =
        List.of(
            binaries.tool("initdb").toString(),
            "-D",
            dir.data().toString(),
            "-U",
            "postgres",
            "--auth=trust",
            "-E",
            "UTF8",
            "--locale=C",
            "--no-sync");
    Commands.runChecked(
        "initdb of " + dir.data() + " (as " + runAs + ")",
        runAs.wrap(cmd),
        dir.root(),
        dir.root().resolve("initdb.log"),
        timeout);
  }
}
