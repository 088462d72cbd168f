package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A directory of PostgreSQL server binaries and their version.
 *
 * @param bindir the directory holding {@code initdb}, {@code postgres} and friends
 * @param majorVersion the major version, such as 15
 * @param version the full version text reported by {@code postgres --version}
 */
public record Binaries(Path bindir, int majorVersion, String version) {

  private static final Pattern VERSION = Pattern.compile("\\(PostgreSQL\\)\\s+(\\d+)(\\.\\d+)?");

  /** Tells whether {@code dir} holds the binaries a cluster needs: initdb and postgres. */
  static boolean usable(Path dir) {
    return Files.isExecutable(dir.resolve("initdb")) && Files.isExecutable(dir.resolve("postgres"));
  }

  /**
   * Inspects a binary directory, running {@code postgres --version} as {@code runAs} says.
   *
   * @param dir the directory
   * @param runAs how to run PostgreSQL binaries
   * @return the binaries
   * @throws PgClusterException if the directory lacks binaries or the version cannot be read
   */
  public static Binaries inspect(Path dir, RunAs runAs) {
    if (!usable(dir)) {
      throw new PgClusterException(
          dir + " does not contain PostgreSQL server binaries (initdb and postgres)");
    }
    String out =
        Commands.runChecked(
            "postgres --version",
            runAs.wrap(List.of(dir.resolve("postgres").toString(), "--version")),
            null,
            null,
            Duration.ofSeconds(20));
    Matcher m = VERSION.matcher(out);
    if (!m.find()) {
      throw new PgClusterException(
          "Could not read the PostgreSQL version from '" + out.trim() + "' (" + dir + ")");
    }
    return new Binaries(dir, Integer.parseInt(m.group(1)), out.trim());
  }

  /** Returns the path of a tool in this directory. */
  Path tool(String name) {
    return bindir.resolve(name);
  }

  /** Tells whether a tool exists in this directory. */
  boolean has(String name) {
    return Files.isExecutable(tool(name));
  }
}
