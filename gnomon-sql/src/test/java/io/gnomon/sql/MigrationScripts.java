package io.gnomon.sql;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.stream.Stream;

/** The catalog's migration scripts as Flyway finds them on the class path: file name to text. */
final class MigrationScripts {
  /** Where {@link Catalog} tells Flyway to look. */
  static final String LOCATION = "io/gnomon/sql/migration";

  private MigrationScripts() {}

  /** Every {@code .sql} file of the migration location, by file name; never empty. */
  static SortedMap<String, String> all() {
    URL url = Catalog.class.getClassLoader().getResource(LOCATION);
    if (url == null) {
      throw new IllegalStateException("no " + LOCATION + " on the class path");
    }
    try {
      URI uri = url.toURI();
      if ("jar".equals(uri.getScheme())) {
        try (FileSystem jar = FileSystems.newFileSystem(uri, Map.of())) {
          return read(jar.getPath(LOCATION));
        }
      }
      return read(Path.of(uri));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (URISyntaxException e) {
      throw new IllegalStateException(e);
    }
  }

  private static SortedMap<String, String> read(Path dir) throws IOException {
    SortedMap<String, String> scripts = new TreeMap<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path f : (Iterable<Path>) files.filter(f -> f.getFileName().toString().endsWith(".sql"))::iterator) {
        scripts.put(f.getFileName().toString(), Files.readString(f, StandardCharsets.UTF_8));
      }
    }
    if (scripts.isEmpty()) {
      throw new IllegalStateException("no migration scripts in " + dir);
    }
    return scripts;
  }

  /** How many migrations a first install applies: every versioned and every repeatable script. */
  static int count() {
    return (int) all().keySet().stream().filter(n -> n.startsWith("V") || n.startsWith("R__")).count();
  }
}
