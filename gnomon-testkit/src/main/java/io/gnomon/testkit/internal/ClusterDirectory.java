package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Optional;

/**
 * The directory of one throwaway cluster, {@code /tmp/gnomon-pg-NNN}: the data directory, a
 * private unix-socket directory, the server log, and a marker naming the JVM that owns it (so a
 * later JVM can remove it when that JVM died without cleaning up).
 *
 * <p>The parent is {@code /tmp} (or {@code -Dgnomon.pg.tmpdir}), not {@code java.io.tmpdir}:
 * it must be traversable by the postgres user and short enough for unix-socket paths.
 */
public final class ClusterDirectory {

  /** Name prefix of every cluster directory. */
  public static final String PREFIX = "gnomon-pg-";

  /** Name of the marker file recording the owning JVM. */
  public static final String OWNER_FILE = "gnomon-owner";

  /** The system property that moves cluster directories out of {@code /tmp}. */
  public static final String TMPDIR_PROPERTY = "gnomon.pg.tmpdir";

  private final Path root;

  private ClusterDirectory(Path root) {
    this.root = root;
  }

  /**
   * Creates a fresh directory owned by the user {@code runAs} runs binaries as.
   *
   * @param runAs how binaries will run
   * @return the directory, with the owner marker and socket directory in place
   */
  public static ClusterDirectory create(RunAs runAs) {
    try {
      Path parent = tmpRoot();
      Files.createDirectories(parent);
      checkTraversable(parent, runAs);
      Path root =
          Files.createTempDirectory(
              parent, PREFIX, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      Files.writeString(root.resolve(OWNER_FILE), ownerRecord(), StandardCharsets.UTF_8);
      ClusterDirectory dir = new ClusterDirectory(root);
      Files.createDirectory(
          dir.socketDir(),
          PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      runAs.chown(root);
      runAs.chown(dir.socketDir());
      return dir;
    } catch (IOException e) {
      throw new PgClusterException(
          "Could not create a cluster directory under " + tmpRoot() + ": " + e.getMessage(), e);
    }
  }

  private static void checkTraversable(Path parent, RunAs runAs) throws IOException {
    if (runAs.mode() != RunAs.Mode.POSTGRES_USER) {
      return;
    }
    for (Path p = parent.toAbsolutePath(); p != null; p = p.getParent()) {
      if (!Files.getPosixFilePermissions(p).contains(PosixFilePermission.OTHERS_EXECUTE)) {
        throw new PgClusterException(
            p
                + " is not traversable by the postgres OS user that PostgreSQL runs as, so it"
                + " cannot hold cluster directories; use a parent such as /tmp (-D"
                + TMPDIR_PROPERTY
                + "=...)");
      }
    }
  }

  /**
   * Returns the parent of all cluster directories.
   *
   * @return {@code /tmp} unless {@code -Dgnomon.pg.tmpdir} says otherwise
   */
  public static Path tmpRoot() {
    return Path.of(System.getProperty(TMPDIR_PROPERTY, "/tmp"));
  }

  /**
   * Returns the cluster's root directory.
   *
   * @return the {@code gnomon-pg-*} directory
   */
  public Path root() {
    return root;
  }

  /**
   * Returns the data directory ({@code PGDATA}), created by initdb (or a copy) or pg_basebackup.
   *
   * @return {@code root/data}
   */
  public Path data() {
    return root.resolve("data");
  }

  /**
   * Returns the private directory holding the server's unix socket.
   *
   * @return {@code root/sock}
   */
  public Path socketDir() {
    return root.resolve("sock");
  }

  /**
   * Returns the server log, which receives the postmaster's stdout and stderr.
   *
   * @return {@code root/postgres.log}
   */
  public Path log() {
    return root.resolve("postgres.log");
  }

  /** Deletes the whole directory; missing files are ignored. */
  public void delete() {
    deleteTree(root);
  }

  static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try {
      Files.walkFileTree(
          dir,
          new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs)
                throws IOException {
              Files.deleteIfExists(file);
              return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException exc) throws IOException {
              if (exc instanceof NoSuchFileException) {
                return FileVisitResult.CONTINUE;
              }
              throw exc;
            }

            @Override
            public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
              Files.deleteIfExists(d);
              return FileVisitResult.CONTINUE;
            }
          });
    } catch (IOException e) {
      throw new PgClusterException("Could not delete " + dir + ": " + e.getMessage(), e);
    }
  }

  /** The JVM recorded as a directory's owner. */
  record Owner(long pid, String start) {

    /** Tells whether that very JVM (same pid and start time) still runs. */
    boolean alive() {
      return ProcessHandle.of(pid)
          .filter(ProcessHandle::isAlive)
          .map(h -> start.isEmpty() || start.equals(startOf(h)))
          .orElse(false);
    }
  }

  static String ownerRecord() {
    ProcessHandle self = ProcessHandle.current();
    return "pid=" + self.pid() + "\nstart=" + startOf(self) + "\n";
  }

  static Optional<Owner> readOwner(Path root) {
    String text = Commands.read(root.resolve(OWNER_FILE));
    long pid = -1;
    String start = "";
    for (String line : text.split("\n")) {
      if (line.startsWith("pid=")) {
        try {
          pid = Long.parseLong(line.substring(4).trim());
        } catch (NumberFormatException e) {
          return Optional.empty();
        }
      } else if (line.startsWith("start=")) {
        start = line.substring(6).trim();
      }
    }
    return pid > 0 ? Optional.of(new Owner(pid, start)) : Optional.empty();
  }

  private static String startOf(ProcessHandle h) {
    return h.info().startInstant().map(Object::toString).orElse("");
  }

  @Override
  public String toString() {
    return root.toString();
  }
}
