package io.gnomon.sql;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.fail;

import io.gnomon.testkit.GnomonDatabase;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import java.util.SortedMap;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The committed jOOQ classes in {@value CatalogCodegen#PACKAGE} are exactly what {@link CatalogCodegen} generates
 * from a freshly migrated catalog. With {@code -Dgnomon.regenerate=true} it rewrites them in the source tree instead
 * (see {@code docs/sql-codegen.md}).
 */
class CatalogCodegenIT {
  @RegisterExtension static final GnomonDatabase db = GnomonDatabase.empty();

  @Test
  void committedClassesMatchTheMigratedCatalog(@TempDir Path temp) throws Exception {
    Catalog.install(db.dataSource());
    Path committed = CatalogCodegen.committedSourceRoot();

    if (Boolean.getBoolean(CatalogCodegen.REGENERATE_PROPERTY)) {
      try (Connection c = db.connect()) {
        CatalogCodegen.generate(c, committed);
      }
      System.out.println(
          "Regenerated " + CatalogCodegen.generatedFiles(committed).size() + " files in "
              + CatalogCodegen.packageDirectory(committed));
      return;
    }

    try (Connection c = db.connect()) {
      CatalogCodegen.generate(c, temp);
    }
    SortedMap<String, String> generated = CatalogCodegen.generatedFiles(temp);
    assertFalse(generated.isEmpty(), "jOOQ generated nothing into " + temp);
    List<String> differences = CatalogCodegen.differences(CatalogCodegen.generatedFiles(committed), generated);
    if (!differences.isEmpty()) {
      fail(
          "The committed jOOQ classes in " + CatalogCodegen.packageDirectory(committed)
              + " differ from the classes generated from the migrated catalog (" + differences.size()
              + " files):\n  " + String.join("\n  ", differences)
              + "\nRegenerate them (see docs/sql-codegen.md):\n"
              + "  " + CatalogCodegen.REGENERATE_COMMAND + "\n"
              + "then review and commit the result.");
    }
  }
}
