package io.gnomon.testkit.internal;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The README's table lists every system property and environment variable the testkit reads. */
class ReadmeTest {

  @Test
  void everyKnobIsDocumented() throws Exception {
    String readme = Files.readString(Path.of("README.md"));
    for (String knob :
        List.of(
            Provisioner.JDBC_URL_PROPERTY,
            Provisioner.JDBC_URL_ENV,
            BinaryLocator.BINDIR_PROPERTY,
            BinaryLocator.BINDIR_ENV,
            RunAs.PROPERTY,
            ClusterDirectory.TMPDIR_PROPERTY,
            ContainerServer.IMAGE_PROPERTY)) {
      assertTrue(readme.contains("| `" + knob + "` |"), knob + " is missing from README.md");
    }
  }
}
