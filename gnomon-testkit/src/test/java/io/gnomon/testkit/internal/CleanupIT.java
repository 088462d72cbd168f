package io.gnomon.testkit.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PostgresProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Clusters vanish when their JVM exits, and a later JVM removes those of JVMs that died. */
@Timeout(120)
class CleanupIT {

  @Test
  void shutdownHookRemovesTheClusterOfAJvmWhoseTestFailed() throws Exception {
    String classpath =
        System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Path output = Files.createTempFile("gnomon-cleanup-it-", ".log");
    try {
      Process child =
          new ProcessBuilder(
                  java.toString(), "-cp", classpath, ClusterCleanupMain.class.getName())
              .redirectErrorStream(true)
              .redirectOutput(output.toFile())
              .start();
      assertTrue(child.waitFor(90, TimeUnit.SECONDS), "child JVM finished");
      String out = Files.readString(output, StandardCharsets.UTF_8);
      assertNotEquals(0, child.exitValue(), out);
      assertTrue(out.contains("simulated test failure"), out);
      Path data =
          out.lines()
              .filter(l -> l.startsWith("DATA="))
              .map(l -> Path.of(l.substring(5)))
              .findFirst()
              .orElseThrow(() -> new AssertionError("no DATA= line in\n" + out));
      Path root = data.getParent();
      assertTrue(root.getFileName().toString().startsWith(ClusterDirectory.PREFIX), out);
      assertFalse(Files.exists(root), "the shutdown hook deleted " + root + "\n" + out);
      assertEquals(List.of(), ClusterProcesses.under(root), "no server process survived");
    } finally {
      Files.deleteIfExists(output);
    }
  }

  @Test
  void clustersOfDeadJvmsAreReaped() throws Exception {
    Path parent =
        Files.createTempDirectory(
            Path.of("/tmp"),
            "gnomon-reaper-it-",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwxr-xr-x")));
    String previous = System.getProperty(ClusterDirectory.TMPDIR_PROPERTY);
    System.setProperty(ClusterDirectory.TMPDIR_PROPERTY, parent.toString());
    try (PgCluster orphan =
        PostgresProvider.startCluster(ClusterOptions.builder().fsync(false).build())) {
      Path orphanRoot = orphan.dataDirectory().orElseThrow().getParent();
      Process gone = new ProcessBuilder("true").start();
      gone.waitFor();
      Files.writeString(
          orphanRoot.resolve(ClusterDirectory.OWNER_FILE), "pid=" + gone.pid() + "\nstart=\n");
      Path alive = Files.createDirectory(parent.resolve(ClusterDirectory.PREFIX + "alive"));
      Files.writeString(alive.resolve(ClusterDirectory.OWNER_FILE), ClusterDirectory.ownerRecord());
      Path young = Files.createDirectory(parent.resolve(ClusterDirectory.PREFIX + "unmarked"));

      List<Path> removed = StaleClusters.reap(parent);

      assertEquals(List.of(orphanRoot), removed);
      assertFalse(Files.exists(orphanRoot));
      assertFalse(orphan.isRunning(), "the orphan's postmaster was shut down");
      assertEquals(List.of(), ClusterProcesses.under(orphanRoot));
      assertTrue(Files.exists(alive), "directories of live JVMs stay");
      assertTrue(Files.exists(young), "young unmarked directories stay");
    } finally {
      if (previous == null) {
        System.clearProperty(ClusterDirectory.TMPDIR_PROPERTY);
      } else {
        System.setProperty(ClusterDirectory.TMPDIR_PROPERTY, previous);
      }
      ClusterDirectory.deleteTree(parent);
    }
  }
}
