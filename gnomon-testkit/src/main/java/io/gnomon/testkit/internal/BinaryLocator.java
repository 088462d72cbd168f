package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Finds PostgreSQL server binaries installed on this machine: {@code -Dgnomon.pg.bindir} or {@code
 * GNOMON_PG_BINDIR} if given, then {@code pg_config --bindir}, then {@code
 * /usr/lib/postgresql/VERSION/bin}, newest version first.
 */
public final class BinaryLocator {

  /** System property naming a binary directory explicitly. */
  public static final String BINDIR_PROPERTY = "gnomon.pg.bindir";

  /** Environment variable naming a binary directory explicitly. */
  public static final String BINDIR_ENV = "GNOMON_PG_BINDIR";

  private static final Path DEBIAN_ROOT = Path.of("/usr/lib/postgresql");

  private BinaryLocator() {}

  /**
   * Finds the directory of local binaries. Runs {@code pg_config --bindir} (a build-configuration
   * query, harmless as root) but no server binary.
   *
   * @param reasons receives one line per place looked at without success
   * @return the directory, or empty when none is installed
   * @throws PgClusterException if an explicitly named directory is unusable
   */
  public static Optional<Path> findLocal(List<String> reasons) {
    String explicit = System.getProperty(BINDIR_PROPERTY, System.getenv(BINDIR_ENV));
    if (explicit != null && !explicit.isBlank()) {
      Path dir = Path.of(explicit.trim());
      if (!Binaries.usable(dir)) {
        throw new PgClusterException(
            BINDIR_PROPERTY + "/" + BINDIR_ENV + " names " + dir
                + ", which does not contain initdb and postgres");
      }
      return Optional.of(dir);
    }
    for (Path dir : candidates(reasons)) {
      if (Binaries.usable(dir)) {
        return Optional.of(dir);
      }
      reasons.add(dir + " lacks initdb or postgres");
    }
    return Optional.empty();
  }

  private static List<Path> candidates(List<String> reasons) {
    List<Path> dirs = new ArrayList<>();
    Optional<Path> pgConfig = Tools.onPath("pg_config");
    if (pgConfig.isPresent()) {
      try {
        Commands.Result r =
            Commands.run(
                List.of(pgConfig.get().toString(), "--bindir"), null, null, Duration.ofSeconds(20));
        String out = r.output().trim();
        if (r.exitCode() == 0 && !out.isEmpty() && !out.contains("\n")) {
          dirs.add(Path.of(out));
        } else {
          reasons.add("pg_config --bindir failed: " + out);
        }
      } catch (PgClusterException e) {
        reasons.add("pg_config --bindir failed: " + e.getMessage());
      }
    } else {
      reasons.add("pg_config is not on the PATH");
    }
    List<Path> versions = new ArrayList<>();
    if (Files.isDirectory(DEBIAN_ROOT)) {
      try (DirectoryStream<Path> s = Files.newDirectoryStream(DEBIAN_ROOT)) {
        s.forEach(p -> versions.add(p.resolve("bin")));
      } catch (IOException e) {
        reasons.add("could not list " + DEBIAN_ROOT + ": " + e.getMessage());
      }
    } else {
      reasons.add(DEBIAN_ROOT + " does not exist");
    }
    versions.sort(Comparator.comparingDouble(BinaryLocator::versionOf).reversed());
    for (Path v : versions) {
      if (!dirs.contains(v)) {
        dirs.add(v);
      }
    }
    return dirs;
  }

  private static double versionOf(Path bin) {
    try {
      return Double.parseDouble(bin.getParent().getFileName().toString());
    } catch (NumberFormatException e) {
      return -1;
    }
  }
}
