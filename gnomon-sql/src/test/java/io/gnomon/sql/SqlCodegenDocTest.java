package io.gnomon.sql;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * {@code docs/sql-codegen.md} cannot rot: its Java example is the one {@code GeneratedClassesIT} runs, and its
 * regenerate command is the one {@link CatalogCodegen} prints.
 */
class SqlCodegenDocTest {
  private static final Path MODULE = CatalogCodegen.moduleDirectory();
  private static final Path DOC = MODULE.resolveSibling("docs").resolve("sql-codegen.md");

  @Test
  void javaExampleIsTheOneTheIntegrationTestRuns() throws IOException {
    String doc = Files.readString(DOC);
    int start = doc.indexOf("```java\n");
    assertTrue(start >= 0, DOC + " has no ```java block");
    String example = doc.substring(start + "```java\n".length(), doc.indexOf("```", start + 7));

    String test = Files.readString(MODULE.resolve("src/test/java/io/gnomon/sql/GeneratedClassesIT.java"));
    int from = test.indexOf('\n', test.indexOf("// tag::example[]")) + 1;
    int to = test.lastIndexOf('\n', test.indexOf("// end::example[]")) + 1;
    String tagged =
        Arrays.stream(test.substring(from, to).split("\n"))
            .map(String::strip)
            .collect(Collectors.joining("\n", "", "\n"));

    assertTrue(
        tagged.equals(example),
        "the ```java example of " + DOC + " must be the tagged region of GeneratedClassesIT:\n" + tagged);
  }

  @Test
  void regenerateCommandIsTheOneTheCheckPrints() throws IOException {
    String doc = Files.readString(DOC);
    assertTrue(
        doc.contains("\n" + CatalogCodegen.REGENERATE_COMMAND + "\n"),
        DOC + " must show the command " + CatalogCodegen.REGENERATE_COMMAND);
  }
}
