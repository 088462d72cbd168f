package io.gnomon.cli;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.sql.DataSource;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Compiles and runs the Java examples of the docs. A block marked {@code java runnable} is the body of a method
 * {@code run(DataSource dataSource) throws Exception} with the imports below; a {@code // prints X} comment says
 * what the line before it prints, and the lines printed must be exactly those.
 */
final class JavaSnippets {
  /** What every example may use without importing it. */
  static final List<String> IMPORTS = List.of(
      "import io.gnomon.*;",
      "import io.gnomon.feed.*;",
      "import io.gnomon.cli.DocsTables.AccountRecord;",
      "import java.math.BigDecimal;",
      "import java.sql.Connection;",
      "import java.sql.PreparedStatement;",
      "import java.sql.ResultSet;",
      "import java.sql.SQLException;",
      "import java.sql.Statement;",
      "import java.time.*;",
      "import java.util.*;",
      "import java.util.concurrent.*;",
      "import javax.sql.DataSource;",
      "import org.jooq.Condition;",
      "import org.jooq.DSLContext;",
      "import org.jooq.Record;",
      "import org.jooq.Result;",
      "import org.jooq.SQLDialect;",
      "import org.jooq.Table;",
      "import org.jooq.impl.DSL;",
      "import static io.gnomon.cli.DocsTables.ACCOUNT;",
      "import static org.jooq.impl.DSL.field;",
      "import static org.jooq.impl.DSL.name;",
      "import static org.jooq.impl.DSL.table;");

  private static final Pattern PRINTS = Pattern.compile("//\\s*prints\\s+(.*)$");

  private final Path classes;
  private final Map<MarkdownBlocks.Block, String> classNames;

  private JavaSnippets(Path classes, Map<MarkdownBlocks.Block, String> classNames) {
    this.classes = classes;
    this.classNames = classNames;
  }

  /** Compiles every Java block of a file at once (one compiler run) into {@code workDir}. */
  static JavaSnippets compile(List<MarkdownBlocks.Block> blocks, Path workDir) throws IOException {
    Path dir = Files.createTempDirectory(workDir, "snippets");
    Map<MarkdownBlocks.Block, String> names = new LinkedHashMap<>();
    Map<Path, MarkdownBlocks.Block> files = new LinkedHashMap<>();
    for (MarkdownBlocks.Block block : blocks) {
      String className =
          "DocSnippet_" + block.file().getFileName().toString().replaceAll("\\W", "_") + "_" + block.line();
      List<String> source = new ArrayList<>(IMPORTS);
      source.add("public class " + className + " {");
      source.add("  public static void run(DataSource dataSource) throws Exception {");
      source.addAll(block.text());
      source.add("  }");
      source.add("}");
      Path file = dir.resolve(className + ".java");
      Files.write(file, source);
      names.put(block, className);
      files.put(file, block);
    }
    if (!files.isEmpty()) {
      compile(files, dir);
    }
    return new JavaSnippets(dir, names);
  }

  /** Runs a compiled block on {@code dataSource} and checks what it printed. */
  void run(MarkdownBlocks.Block block, DataSource dataSource) throws Exception {
    String className = classNames.get(block);
    List<String> expected = new ArrayList<>();
    for (String line : block.text()) {
      Matcher m = PRINTS.matcher(line);
      if (m.find()) {
        expected.add(m.group(1).strip());
      }
    }
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream original = System.out;
    try (URLClassLoader loader =
            new URLClassLoader(new URL[] {classes.toUri().toURL()}, JavaSnippets.class.getClassLoader());
        PrintStream capture = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
      System.setOut(capture);
      loader.loadClass(className).getMethod("run", DataSource.class).invoke(null, dataSource);
    } catch (InvocationTargetException e) {
      throw new AssertionError(block.where() + ": the example threw " + e.getCause(), e.getCause());
    } finally {
      System.setOut(original);
    }
    List<String> actual = printed.toString(StandardCharsets.UTF_8).lines().map(String::strip).toList();
    if (!expected.equals(actual)) {
      throw new AssertionError(block.where() + ": the example's comments say it prints " + expected
          + ", but it printed " + actual);
    }
  }

  private static void compile(Map<Path, MarkdownBlocks.Block> sources, Path out) throws IOException {
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    if (javac == null) {
      throw new AssertionError("the docs' Java examples need a JDK (javax.tools finds no compiler in this JVM)");
    }
    String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
      boolean ok = javac.getTask(null, files, diagnostics,
              List.of("-classpath", classpath, "-d", out.toString(), "-proc:none", "-encoding", "UTF-8"), null,
              files.getJavaFileObjectsFromPaths(sources.keySet()))
          .call();
      if (!ok) {
        StringBuilder b = new StringBuilder("Java examples of the docs do not compile:");
        for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
          if (d.getKind() == Diagnostic.Kind.ERROR && d.getSource() == null) {
            b.append("\n  ").append(d.getMessage(Locale.ROOT));
          } else if (d.getKind() == Diagnostic.Kind.ERROR) {
            MarkdownBlocks.Block block = sources.get(Path.of(d.getSource().toUri()));
            long docLine = block.line() + d.getLineNumber() - (IMPORTS.size() + 2);
            b.append("\n  ").append(block.file().getFileName()).append(':').append(docLine).append(": ")
                .append(d.getMessage(Locale.ROOT));
          }
        }
        throw new AssertionError(b.toString());
      }
    }
  }
}
