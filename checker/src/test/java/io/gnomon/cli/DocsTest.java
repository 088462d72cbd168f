package io.gnomon.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.GnomonConfig;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** The docs against the code, without a database: knobs, public types, links, the README's two commands. */
class DocsTest {

  /** Rows of the knob table in section GnomonConfig of docs/java-api.md: | `name` | default | meaning |. */
  private static final Pattern KNOB_ROW = Pattern.compile("(?m)^\\| `(\\w+)` \\| ([^|]+) \\| ([^|]+) \\|$");

  @Test
  void knobTableListsExactlyTheKnobsOfGnomonConfig() throws IOException {
    Map<String, String> documented = new LinkedHashMap<>();
    String doc = Files.readString(Docs.file("docs/java-api.md"));
    int section = doc.indexOf("\n## GnomonConfig\n");
    assertTrue(section >= 0, "docs/java-api.md has no section ## GnomonConfig");
    int next = doc.indexOf("\n## ", section + 1);
    Matcher m = KNOB_ROW.matcher(doc.substring(section, next < 0 ? doc.length() : next));
    while (m.find()) {
      documented.put(m.group(1), m.group(2).strip());
    }
    assertEquals(GnomonConfig.KNOBS.keySet().stream().sorted().toList(),
        documented.keySet().stream().sorted().toList(), "the knob table of docs/java-api.md against GnomonConfig.KNOBS");
    GnomonConfig.KNOBS.forEach((name, description) -> {
      String defaultValue = description.split(" — ", 2)[0].strip();
      assertEquals(defaultValue, documented.get(name).replace("`", ""), "the default of knob " + name);
    });
  }

  @Test
  void javaApiNamesEveryPublicTypeOfPackageIoGnomon() throws IOException {
    String doc = Files.readString(Docs.file("docs/java-api.md"));
    Path sources = Docs.file("gnomon-core/src/main/java/io/gnomon");
    List<String> missing = new ArrayList<>();
    try (Stream<Path> files = Files.list(sources)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
        String type = f.getFileName().toString().replace(".java", "");
        if (!type.equals("package-info") && !doc.contains("`" + type)) {
          missing.add(type);
        }
      }
    }
    assertEquals(List.of(), missing, "public types of io.gnomon missing from docs/java-api.md");
  }

  @Test
  void readmeGivesTheTwoCommandsExactly() throws IOException {
    List<MarkdownBlocks.Block> bash = MarkdownBlocks.of(Docs.file("README.md")).stream()
        .filter(b -> b.info().equals(List.of("bash")))
        .toList();
    List<String> lines = bash.stream().flatMap(b -> b.text().stream()).toList();
    // the first command runs the main job (the checker) through the launcher, the second every test
    assertEquals(List.of("./gnomon check", "mvn -B verify"), lines.subList(0, 2), lines.toString());
    String ci = Files.readString(Docs.file(".ci/run"));
    assertTrue(ci.contains("\nexec mvn -B verify\n"), ".ci/run must run the README's test command");
  }

  @Test
  void anchorsPointAtHeadingsThatExist() throws IOException {
    Pattern link = Pattern.compile("\\]\\(([^)#\\s]*)#([^)\\s]+)\\)");
    List<String> broken = new ArrayList<>();
    for (String name : Docs.FILES) {
      Path file = Docs.file(name);
      Matcher m = link.matcher(Files.readString(file));
      while (m.find()) {
        Path target = m.group(1).isEmpty() ? file : file.getParent().resolve(m.group(1));
        if (target.toString().endsWith(".md") && Files.exists(target) && !anchors(target).contains(m.group(2))) {
          broken.add(name + " -> " + m.group(1) + "#" + m.group(2));
        }
      }
    }
    assertEquals(List.of(), broken, "links to headings that do not exist");
  }

  /** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as hyphens. */
  private static List<String> anchors(Path file) throws IOException {
    List<String> anchors = new ArrayList<>();
    boolean inCode = false;
    for (String line : Files.readAllLines(file)) {
      if (line.startsWith("```")) {
        inCode = !inCode;
      } else if (!inCode && line.startsWith("#")) {
        String text = line.replaceFirst("^#+\\s*", "").replace("`", "").replace("\\", "");
        anchors.add(text.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
      }
    }
    return anchors;
  }

  @Test
  void relativeLinksPointAtFilesThatExist() throws IOException {
    Pattern link = Pattern.compile("\\]\\(([^)#\\s]+)(#[^)]*)?\\)");
    List<String> broken = new ArrayList<>();
    for (String name : Docs.FILES) {
      Path file = Docs.file(name);
      Matcher m = link.matcher(Files.readString(file));
      while (m.find()) {
        String target = m.group(1);
        if (!target.contains("://") && !Files.exists(file.getParent().resolve(target))) {
          broken.add(name + " -> " + target);
        }
      }
    }
    assertEquals(List.of(), broken, "broken relative links");
  }
}
