package io.gnomon.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Where the documentation is: README.md and docs/ at the repository root. */
final class Docs {
  /** The Markdown files whose runnable examples the tests run, in reading order. */
  static final List<String> FILES = List.of(
      "README.md", "docs/concepts.md", "docs/sql-reference.md", "docs/java-api.md", "docs/operations.md",
      "docs/branches.md", "docs/feed.md", "docs/merge.md");

  private Docs() {}

  /** The repository root: the nearest directory, from the module's, that holds README.md and docs/. */
  static Path root() {
    Path dir = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
    for (Path d = dir; d != null; d = d.getParent()) {
      if (Files.isRegularFile(d.resolve("README.md")) && Files.isDirectory(d.resolve("docs"))) {
        return d;
      }
    }
    throw new IllegalStateException("no README.md and docs/ above " + dir);
  }

  static Path file(String relative) {
    return root().resolve(relative);
  }
}
