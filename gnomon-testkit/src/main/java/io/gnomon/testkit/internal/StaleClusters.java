package io.gnomon.testkit.internal;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes cluster directories left by JVMs that died without running their shutdown hook (killed
 * with SIGKILL, crashed): their postmasters are shut down and their directories deleted. A
 * directory is stale when the JVM in its owner marker is gone, or when it has no marker and is
 * older than an hour (a younger one may be being created right now).
 */
public final class StaleClusters {

  private static final Logger LOG = LoggerFactory.getLogger(StaleClusters.class);
  private static final AtomicBoolean DONE = new AtomicBoolean();
  private static final Duration UNMARKED_GRACE = Duration.ofHours(1);

  private StaleClusters() {}

  /** Reaps stale directories under the default parent, once per JVM. */
  static void reapOnce() {
    if (DONE.compareAndSet(false, true)) {
      try {
        reap(ClusterDirectory.tmpRoot());
      } catch (RuntimeException e) {
        LOG.warn("Could not remove stale PostgreSQL cluster directories: {}", e.toString());
      }
    }
  }

  /**
   * Reaps stale cluster directories under {@code parent}.
   *
   * @param parent the directory holding {@code gnomon-pg-*} directories
   * @return the directories removed
   */
  public static List<Path> reap(Path parent) {
    List<Path> removed = new ArrayList<>();
    if (!Files.isDirectory(parent)) {
      return removed;
    }
    try (DirectoryStream<Path> dirs =
        Files.newDirectoryStream(parent, ClusterDirectory.PREFIX + "*")) {
      for (Path dir : dirs) {
        if (Files.isDirectory(dir) && isStale(dir)) {
          try {
            ClusterProcesses.shutDownAll(dir, Duration.ofSeconds(10));
            ClusterDirectory.deleteTree(dir);
            removed.add(dir);
            LOG.info("Removed stale PostgreSQL cluster directory {}", dir);
          } catch (RuntimeException e) {
            LOG.warn("Could not remove stale cluster directory {}: {}", dir, e.toString());
          }
        }
      }
    } catch (IOException e) {
      LOG.warn("Could not list {}: {}", parent, e.toString());
    }
    return removed;
  }

  private static boolean isStale(Path dir) {
    Optional<ClusterDirectory.Owner> owner = ClusterDirectory.readOwner(dir);
    if (owner.isPresent()) {
      return !owner.get().alive();
    }
    try {
      FileTime modified = Files.getLastModifiedTime(dir);
      return modified.toInstant().isBefore(Instant.now().minus(UNMARKED_GRACE));
    } catch (IOException e) {
      return false;
    }
  }
}
