package io.gnomon.sql;

import io.gnomon.sql.internal.PgSnapshotBinding;
import io.gnomon.sql.internal.Xid8Binding;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.jooq.codegen.GenerationTool;
import org.jooq.codegen.JavaGenerator;
import org.jooq.meta.jaxb.Configuration;
import org.jooq.meta.jaxb.Database;
import org.jooq.meta.jaxb.ForcedType;
import org.jooq.meta.jaxb.Generate;
import org.jooq.meta.jaxb.Generator;
import org.jooq.meta.jaxb.Logging;
import org.jooq.meta.jaxb.OnError;
import org.jooq.meta.jaxb.Target;
import org.jooq.meta.postgres.PostgresDatabase;

/**
 * Generates the jOOQ classes of the {@code gnomon} catalog from a database the catalog was really migrated into (not
 * from the DDL text), into {@value #PACKAGE}.
 *
 * <p>The generated sources are committed under {@code gnomon-sql/src/main/java}; {@code CatalogCodegenIT} regenerates
 * them into a temporary directory and fails when they differ. To regenerate them into the source tree after changing
 * a migration, run {@link #REGENERATE_COMMAND} from the repository root (after {@code mvn -q -B install -DskipTests},
 * so that the testkit is installed), then review and commit the result.
 *
 * <p>See {@code docs/sql-codegen.md}. The output is deterministic: no {@code @Generated} annotation, no date, no jOOQ
 * patch version, {@code \n} line endings, and objects in name order.
 */
final class CatalogCodegen {
  /** The package of the generated classes: private API, never in a public signature. */
  static final String PACKAGE = "io.gnomon.sql.internal.generated";

  /** The system property that makes {@code CatalogCodegenIT} write into the source tree instead of checking it. */
  static final String REGENERATE_PROPERTY = "gnomon.regenerate";

  /** The command, from the repository root, that regenerates the committed classes (docs/sql-codegen.md shows it). */
  static final String REGENERATE_COMMAND =
      "mvn -B -pl gnomon-sql test -Dtest=CatalogCodegenIT -D" + REGENERATE_PROPERTY + "=true";

  /**
   * Objects of the {@code gnomon} schema that are not generated: Flyway's history table (Flyway owns it) and the
   * event-trigger functions, which cannot be called and which jOOQ cannot map.
   */
  static final String EXCLUDES = "gnomon\\.flyway_schema_history | gnomon\\.ddl_guard | gnomon\\.drop_guard | gnomon\\.privilege_guard | gnomon\\.schema_guard | gnomon\\.trigger_guard | gnomon\\.trigger_drop_guard";

  static {
    // keep the build log readable
    System.setProperty("org.jooq.no-logo", "true");
    System.setProperty("org.jooq.no-tips", "true");
  }

  private CatalogCodegen() {}

  /**
   * Generates the classes of the catalog installed in {@code connection}'s database into {@code sourceRoot} (a
   * directory such as {@code src/main/java}; the generator replaces the package directory below it).
   */
  static void generate(Connection connection, Path sourceRoot) throws Exception {
    GenerationTool tool = new GenerationTool();
    tool.setConnection(connection);
    tool.run(configuration(sourceRoot));
  }

  static Configuration configuration(Path sourceRoot) {
    return new Configuration()
        .withLogging(Logging.WARN)
        .withOnError(OnError.FAIL)
        .withOnUnused(OnError.FAIL)
        .withGenerator(
            new Generator()
                .withName(JavaGenerator.class.getName())
                .withDatabase(
                    new Database()
                        .withName(PostgresDatabase.class.getName())
                        .withInputSchema("gnomon")
                        .withIncludes(".*")
                        .withExcludes(EXCLUDES)
                        .withIncludeTables(true)
                        .withIncludeRoutines(true)
                        .withIncludeTriggerRoutines(false)
                        .withIncludeUDTs(true)
                        .withIncludeSequences(true)
                        .withIncludeIndexes(true)
                        .withIncludePrimaryKeys(true)
                        .withIncludeUniqueKeys(true)
                        .withIncludeForeignKeys(true)
                        .withForcedTypes(
                            // types jOOQ does not know: bound through their text form (see io.gnomon.sql.internal)
                            new ForcedType()
                                .withUserType(String.class.getName())
                                .withBinding(PgSnapshotBinding.class.getName())
                                .withIncludeTypes("(pg_catalog\\.)?pg_snapshot"),
                            new ForcedType()
                                .withUserType(Long.class.getName())
                                .withBinding(Xid8Binding.class.getName())
                                .withIncludeTypes("(pg_catalog\\.)?xid8")))
                .withGenerate(
                    new Generate()
                        .withGeneratedAnnotation(false)
                        .withGeneratedAnnotationDate(false)
                        .withGeneratedAnnotationJooqVersion(false)
                        .withJooqVersionReference(false)
                        .withPojos(false)
                        .withDaos(false)
                        .withInterfaces(false)
                        .withRecords(true)
                        .withRoutines(true)
                        .withTables(true)
                        .withKeys(true)
                        .withIndexes(true)
                        .withSequences(true)
                        .withJavaTimeTypes(true)
                        .withNewline("\n")
                        .withIndentation("    "))
                .withTarget(
                    new Target()
                        .withPackageName(PACKAGE)
                        .withDirectory(sourceRoot.toAbsolutePath().toString())
                        .withEncoding("UTF-8")
                        .withClean(true)));
  }

  /** The module's base directory: Maven's {@code basedir} when run by Surefire, else the working directory. */
  static Path moduleDirectory() {
    Path dir = Path.of(System.getProperty("basedir", System.getProperty("user.dir"))).toAbsolutePath();
    if (!Files.isDirectory(dir.resolve("src/main/resources/io/gnomon/sql/migration"))
        && Files.isDirectory(dir.resolve("gnomon-sql/src/main/resources/io/gnomon/sql/migration"))) {
      dir = dir.resolve("gnomon-sql"); // run from the repository root
    }
    return dir;
  }

  /** The committed source root, {@code gnomon-sql/src/main/java}. */
  static Path committedSourceRoot() {
    return moduleDirectory().resolve("src/main/java");
  }

  /** The directory of the generated package below a source root. */
  static Path packageDirectory(Path sourceRoot) {
    return sourceRoot.resolve(PACKAGE.replace('.', '/'));
  }

  /** The generated files below a source root: path relative to the package directory, to content. */
  static SortedMap<String, String> generatedFiles(Path sourceRoot) {
    Path dir = packageDirectory(sourceRoot);
    SortedMap<String, String> files = new TreeMap<>();
    if (!Files.isDirectory(dir)) {
      return files;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : (Iterable<Path>) paths.filter(Files::isRegularFile)::iterator) {
        files.put(dir.relativize(p).toString().replace('\\', '/'), Files.readString(p, StandardCharsets.UTF_8));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return files;
  }

  /**
   * What differs between the committed and the freshly generated files: one line per file that is missing, extra or
   * changed (with its first differing line); empty when they agree.
   */
  static List<String> differences(Map<String, String> committed, Map<String, String> generated) {
    List<String> out = new ArrayList<>();
    TreeSet<String> names = new TreeSet<>(committed.keySet());
    names.addAll(generated.keySet());
    for (String name : names) {
      String was = committed.get(name);
      String now = generated.get(name);
      if (was == null) {
        out.add("new (not committed): " + name);
      } else if (now == null) {
        out.add("stale (no longer generated): " + name);
      } else if (!Objects.equals(was, now)) {
        out.add("changed: " + name + " " + firstDifference(was, now));
      }
    }
    return out;
  }

  private static String firstDifference(String was, String now) {
    String[] a = was.split("\n", -1);
    String[] b = now.split("\n", -1);
    for (int i = 0; i < Math.max(a.length, b.length); i++) {
      String x = i < a.length ? a[i] : "<end of file>";
      String y = i < b.length ? b[i] : "<end of file>";
      if (!x.equals(y)) {
        return "(line " + (i + 1) + ": committed `" + x.strip() + "`, generated `" + y.strip() + "`)";
      }
    }
    return "";
  }
}
