package io.gnomon.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.sql.Catalog;
import io.gnomon.testkit.TestDatabase;
import io.gnomon.testkit.TestDatabases;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

/**
 * The docs' examples run, so they cannot rot: for each Markdown file, in a fresh database with the catalog installed,
 * every {@code ```sql runnable} block runs in order on one session as psql would (and must print what the docs show),
 * and every {@code ```java runnable} block is compiled and run. The SQL reference must also name every function of
 * schema {@code gnomon}, every object {@code gnomon.track} generates, and list exactly the SQLSTATEs of
 * {@code gnomon.error_code}.
 */
class DocsIT {
  @TempDir
  static Path work;

  @TestFactory
  Stream<DynamicTest> examplesRun() {
    return Docs.FILES.stream().map(f -> DynamicTest.dynamicTest(f, () -> runExamples(Docs.file(f))));
  }

  private static void runExamples(Path file) throws Exception {
    List<MarkdownBlocks.Block> blocks = MarkdownBlocks.of(file).stream()
        .filter(b -> b.runnable("sql") || b.runnable("java"))
        .toList();
    String prefix = "docs_" + file.getFileName().toString().replaceAll("\\W", "_");
    try (TestDatabase db = TestDatabases.fresh(prefix);
        Connection session = installed(db).connect()) {
      PsqlScript psql = new PsqlScript(session);
      JavaSnippets java = JavaSnippets.compile(blocks.stream().filter(b -> b.runnable("java")).toList(), work);
      for (MarkdownBlocks.Block block : blocks) {
        if (block.runnable("sql")) {
          psql.run(block);
        } else {
          java.run(block, db.dataSource());
        }
      }
    }
  }

  private static TestDatabase installed(TestDatabase db) {
    Catalog.install(db.dataSource());
    return db;
  }

  @Test
  void readmeAndSqlReferenceHaveRunnableExamples() throws Exception {
    assertTrue(count("README.md", "sql") >= 4, "README.md's psql example must be runnable");
    assertTrue(count("README.md", "java") >= 2, "README.md's Java examples must be runnable");
    assertTrue(count("docs/sql-reference.md", "sql") >= 10, "the SQL reference's examples must be runnable");
    assertTrue(count("docs/java-api.md", "java") >= 4, "the Java API's examples must be runnable");
  }

  private static long count(String file, String language) throws Exception {
    return MarkdownBlocks.of(Docs.file(file)).stream().filter(b -> b.runnable(language)).count();
  }

  @Test
  void sqlReferenceNamesEveryFunctionOfSchemaGnomon() throws Exception {
    String reference = Files.readString(Docs.file("docs/sql-reference.md"));
    List<String> missing = new ArrayList<>();
    try (TestDatabase db = TestDatabases.fresh("docs_functions");
        Connection c = installed(db).connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(
            "select distinct p.proname from pg_proc p where p.pronamespace = 'gnomon'::regnamespace order by 1")) {
      while (rs.next()) {
        String name = "gnomon." + rs.getString(1) + "(";
        if (!reference.contains(name)) {
          missing.add(name + ")");
        }
      }
    }
    assertEquals(List.of(), missing, "functions of schema gnomon missing from docs/sql-reference.md");
  }

  @Test
  void sqlReferenceNamesEveryGeneratedObject() throws Exception {
    String reference = Files.readString(Docs.file("docs/sql-reference.md"));
    List<String> missing = new ArrayList<>();
    try (TestDatabase db = TestDatabases.fresh("docs_generated");
        Connection c = installed(db).connect();
        Statement st = c.createStatement()) {
      st.execute("create table account (id integer primary key, owner text)");
      st.execute("select gnomon.track('public.account')");
      try (ResultSet rs = st.executeQuery(
          "select relname from pg_class where relnamespace = 'gnomon_t'::regnamespace and relkind in ('r', 'p', 'S')"
              + " and not relispartition"
              + " union select proname from pg_proc where pronamespace = 'gnomon_t'::regnamespace"
              + " union select tgname from pg_trigger where tgrelid = 'account'::regclass and not tgisinternal")) {
        while (rs.next()) {
          String name = rs.getString(1);
          String documented = name.startsWith("account_") ? "`<base>" + name.substring("account".length()) : "`" + name;
          if (!reference.contains(documented)) {
            missing.add(documented + "`");
          }
        }
      }
    }
    assertEquals(List.of(), missing, "generated objects missing from docs/sql-reference.md");
  }

  @Test
  void sqlReferenceListsExactlyTheSqlstatesOfTheRegistry() throws Exception {
    Map<String, String> documented = new LinkedHashMap<>();
    Matcher m = Pattern.compile("(?m)^\\| `(GN[0-9A-Z]{3})` \\| `([A-Z_]+)` \\|").matcher(
        Files.readString(Docs.file("docs/sql-reference.md")));
    while (m.find()) {
      documented.put(m.group(1), m.group(2));
    }
    Map<String, String> registry = new LinkedHashMap<>();
    try (TestDatabase db = TestDatabases.fresh("docs_sqlstates");
        Connection c = installed(db).connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select sqlstate, name from gnomon.error_code order by sqlstate")) {
      while (rs.next()) {
        registry.put(rs.getString(1), rs.getString(2));
      }
    } catch (SQLException e) {
      throw new AssertionError(e);
    }
    assertEquals(registry, documented, "the SQLSTATE table of docs/sql-reference.md against gnomon.error_code");
  }
}
