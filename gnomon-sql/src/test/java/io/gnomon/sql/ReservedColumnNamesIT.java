package io.gnomon.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.testkit.GnomonDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Array;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Every {@code g_*} name the migrations and the C module use (their own columns beside a tracked table's, and aliases
 * beside them in generated SQL) is in {@code gnomon.reserved_column_names()}, which track and the DDL guard refuse as
 * a user's column name: a name added to the generated SQL without it would let a user column break a read.
 */
class ReservedColumnNamesIT {
  @RegisterExtension
  static final GnomonDatabase db = GnomonDatabase.fromTemplate(CatalogTemplate.NAME, CatalogTemplate::install);

  private static final Pattern NAME = Pattern.compile("\\bg_[a-z][a-z0-9_]*\\b");

  @Test
  void everyInternalNameIsReserved() throws Exception {
    Set<String> used = new TreeSet<>();
    for (String text : MigrationScripts.all().values()) {
      names(text, used);
    }
    Path c = Path.of("..", "gnomon-c", "src");
    assertTrue(Files.isDirectory(c), c.toAbsolutePath() + " (the C module's sources) is missing");
    try (Stream<Path> files = Files.list(c)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".c")).toList()) {
        names(Files.readString(f), used);
      }
    }
    Set<String> reserved = new TreeSet<>();
    try (Connection conn = db.connect(); Statement st = conn.createStatement();
        ResultSet rs = st.executeQuery("select gnomon.reserved_column_names()")) {
      rs.next();
      Array a = rs.getArray(1);
      for (Object o : (Object[]) a.getArray()) {
        reserved.add((String) o);
      }
    }
    Set<String> missing = new TreeSet<>(used);
    missing.removeAll(reserved);
    assertEquals(Set.of(), missing, "g_* names used by the generated SQL but not reserved (add them to "
        + "gnomon.reserved_column_names() in R__04_track.sql)");
    assertTrue(reserved.containsAll(Set.of("g_vid", "g_xid", "g_op", "g_cp", "gnomon_rn", "g_branch", "g_lvl")));
  }

  private static void names(String text, Set<String> into) throws IOException {
    Matcher m = NAME.matcher(text);
    while (m.find()) {
      into.add(m.group());
    }
  }
}
