package io.gnomon.testkit.internal;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Decides whether to try Testcontainers, without touching any Testcontainers class (whose
 * initialisation logs loudly when no Docker engine exists): the library must be on the classpath
 * and {@code DOCKER_HOST} set or {@code /var/run/docker.sock} present.
 */
final class DockerProbe {

  private static final String CONTAINER_CLASS =
      "org/testcontainers/containers/PostgreSQLContainer.class";

  private DockerProbe() {}

  static boolean available(List<String> reasons) {
    if (DockerProbe.class.getClassLoader().getResource(CONTAINER_CLASS) == null) {
      reasons.add("org.testcontainers:postgresql is not on the classpath");
      return false;
    }
    String dockerHost = System.getenv("DOCKER_HOST");
    if ((dockerHost == null || dockerHost.isBlank())
        && !Files.exists(Path.of("/var/run/docker.sock"))) {
      reasons.add("no Docker engine (DOCKER_HOST is unset and /var/run/docker.sock is missing)");
      return false;
    }
    return true;
  }
}
