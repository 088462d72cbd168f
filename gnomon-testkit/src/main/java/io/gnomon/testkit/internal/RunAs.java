package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Which OS user PostgreSQL binaries run as. {@code initdb} and {@code postgres} refuse to run as
 * root, so when the JVM is root every binary is wrapped: by {@code setpriv} to become the {@code
 * postgres} user, or by {@code unshare --user} into a user namespace where root appears as {@code
 * nobody} (files stay owned by root outside).
 *
 * <p>The system property {@code gnomon.pg.runas} ({@code current}, {@code postgres}, {@code
 * userns}) overrides the choice.
 */
public final class RunAs {

  /** The system property that overrides the choice. */
  public static final String PROPERTY = "gnomon.pg.runas";

  /** The three ways of running a binary. */
  public enum Mode {
    /** As the JVM's own (non-root) user. */
    CURRENT_USER,
    /** As the {@code postgres} OS user through {@code setpriv}. */
    POSTGRES_USER,
    /** In a fresh user namespace through {@code unshare}, as uid/gid 65534 inside. */
    USER_NAMESPACE
  }

  private static final String NOBODY = "65534";

  private final Mode mode;
  private final int uid;
  private final int gid;

  private RunAs(Mode mode, int uid, int gid) {
    this.mode = mode;
    this.uid = uid;
    this.gid = gid;
  }

  /**
   * Returns the mode.
   *
   * @return the mode
   */
  public Mode mode() {
    return mode;
  }

  /**
   * Chooses how to run locally installed binaries: {@code setpriv} as postgres when root.
   *
   * @return the strategy
   */
  public static RunAs forLocalBinaries() {
    return choose(true);
  }

  /**
   * Chooses how to run embedded binaries: a user namespace when root (no postgres user needed).
   *
   * @return the strategy
   */
  public static RunAs forEmbeddedBinaries() {
    return choose(false);
  }

  /**
   * Returns a specific mode.
   *
   * @param mode the mode
   * @return the strategy
   * @throws PgClusterException if the mode is not possible on this machine
   */
  public static RunAs of(Mode mode) {
    switch (mode) {
      case CURRENT_USER:
        return new RunAs(mode, -1, -1);
      case POSTGRES_USER:
        int[] ids =
            postgresUser()
                .orElseThrow(
                    () ->
                        new PgClusterException(
                            "The JVM runs as root but there is no 'postgres' OS user to run"
                                + " PostgreSQL as; create one (useradd --system postgres) or set -D"
                                + PROPERTY
                                + "=userns"));
        requireTool("setpriv", "util-linux");
        return new RunAs(mode, ids[0], ids[1]);
      case USER_NAMESPACE:
      default:
        requireTool("unshare", "util-linux");
        return new RunAs(Mode.USER_NAMESPACE, -1, -1);
    }
  }

  private static RunAs choose(boolean preferPostgresUser) {
    String forced = System.getProperty(PROPERTY, "").trim().toLowerCase(Locale.ROOT);
    switch (forced) {
      case "current":
        return of(Mode.CURRENT_USER);
      case "postgres":
        return of(Mode.POSTGRES_USER);
      case "userns":
        return of(Mode.USER_NAMESPACE);
      case "":
        break;
      default:
        throw new PgClusterException(
            "-D" + PROPERTY + "=" + forced + " is not one of current, postgres, userns");
    }
    if (!isRoot()) {
      return of(Mode.CURRENT_USER);
    }
    if (preferPostgresUser && postgresUser().isPresent() && Tools.onPath("setpriv").isPresent()) {
      return of(Mode.POSTGRES_USER);
    }
    return of(Mode.USER_NAMESPACE);
  }

  /**
   * Wraps a command line so that it runs as this strategy's user.
   *
   * @param command the binary and its arguments
   * @return the command to execute
   */
  public List<String> wrap(List<String> command) {
    List<String> out = new ArrayList<>();
    switch (mode) {
      case POSTGRES_USER:
        out.addAll(
            List.of("setpriv", "--reuid=" + uid, "--regid=" + gid, "--init-groups"));
        break;
      case USER_NAMESPACE:
        out.addAll(List.of("unshare", "--user", "--map-user=" + NOBODY, "--map-group=" + NOBODY));
        break;
      case CURRENT_USER:
      default:
        break;
    }
    out.addAll(command);
    return out;
  }

  /**
   * Gives a file or directory to the user binaries run as (only needed for {@code setpriv}).
   *
   * @param path the file or directory (not followed if a link)
   */
  public void chown(Path path) {
    if (mode != Mode.POSTGRES_USER) {
      return;
    }
    try {
      Files.setAttribute(path, "unix:uid", uid, LinkOption.NOFOLLOW_LINKS);
      Files.setAttribute(path, "unix:gid", gid, LinkOption.NOFOLLOW_LINKS);
    } catch (IOException e) {
      throw new PgClusterException(
          "Could not give " + path + " to the postgres OS user: " + e.getMessage(), e);
    }
  }

  /**
   * Tells whether the JVM's effective user is root, from {@code /proc/self/status}.
   *
   * @return whether the effective uid is 0
   */
  public static boolean isRoot() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.UTF_8)) {
        if (line.startsWith("Uid:")) {
          String[] f = line.substring(4).trim().split("\\s+");
          return f.length > 1 && "0".equals(f[1]);
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux: fall through to the user name
    }
    return "root".equals(System.getProperty("user.name"));
  }

  /** Returns uid and gid of the {@code postgres} OS user from {@code /etc/passwd}. */
  static Optional<int[]> postgresUser() {
    try {
      for (String line : Files.readAllLines(Path.of("/etc/passwd"), StandardCharsets.UTF_8)) {
        String[] f = line.split(":");
        if (f.length > 3 && "postgres".equals(f[0])) {
          return Optional.of(new int[] {Integer.parseInt(f[2]), Integer.parseInt(f[3])});
        }
      }
    } catch (IOException | RuntimeException e) {
      // no passwd file or an odd line: no postgres user
    }
    return Optional.empty();
  }

  private static void requireTool(String tool, String pkg) {
    if (Tools.onPath(tool).isEmpty()) {
      throw new PgClusterException(
          "The JVM runs as root and PostgreSQL refuses root; the testkit needs '"
              + tool
              + "' (package "
              + pkg
              + ") on the PATH to run it as another user");
    }
  }

  @Override
  public String toString() {
    return mode.name().toLowerCase(Locale.ROOT);
  }
}
