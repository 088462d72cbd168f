package io.gnomon.testkit.internal;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/** Finding executables on the PATH. */
public final class Tools {

  private Tools() {}

  /** Returns the first executable called {@code name} on the PATH. */
  public static Optional<Path> onPath(String name) {
    String path = System.getenv("PATH");
    if (path == null || path.isBlank()) {
      path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
    }
    for (String dir : path.split(File.pathSeparator)) {
      if (dir.isBlank()) {
        continue;
      }
      Path candidate = Path.of(dir, name);
      if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
        return Optional.of(candidate);
      }
    }
    return Optional.empty();
  }
}
