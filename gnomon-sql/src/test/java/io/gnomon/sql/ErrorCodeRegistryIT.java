package io.gnomon.sql;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.testkit.GnomonDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Gnomon's SQLSTATE registry, {@code gnomon.error_code}, and its Java mirror {@link GnomonSqlState} agree exactly, and
 * every Gnomon SQLSTATE a migration mentions is registered.
 */
class ErrorCodeRegistryIT {
  @RegisterExtension
  static final GnomonDatabase db = GnomonDatabase.fromTemplate(CatalogTemplate.NAME, CatalogTemplate::install);

  /** A Gnomon SQLSTATE as the registry's check constraint allows it. */
  private static final Pattern CODE = Pattern.compile("\\bGN[0-9A-Z]{3}\\b");

  /** An {@code errcode = '…'} option of RAISE. */
  private static final Pattern ERRCODE = Pattern.compile("errcode\\s*=\\s*'([^']*)'", Pattern.CASE_INSENSITIVE);

  private static Map<String, String> registry;

  @BeforeAll
  static void readRegistry() throws SQLException {
    registry = new TreeMap<>();
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("select sqlstate, name, retryable, meaning from gnomon.error_code")) {
      while (rs.next()) {
        registry.put(rs.getString("sqlstate"), rs.getString("name") + " retryable=" + rs.getBoolean("retryable"));
        assertFalse(rs.getString("meaning").isBlank(), rs.getString("sqlstate") + " has no meaning");
      }
    }
  }

  @Test
  void registryRowsEqualTheJavaEnum() {
    Map<String, String> java = new TreeMap<>();
    for (GnomonSqlState s : GnomonSqlState.values()) {
      java.put(s.sqlState(), s.name() + " retryable=" + s.retryable());
    }
    List<String> problems = new ArrayList<>();
    for (String code : union(registry.keySet(), java.keySet())) {
      String row = registry.get(code);
      String constant = java.get(code);
      if (row == null) {
        problems.add(code + ": GnomonSqlState." + constant + " has no row in gnomon.error_code (R__01_errors.sql)");
      } else if (constant == null) {
        problems.add(code + ": gnomon.error_code row " + row + " has no GnomonSqlState constant");
      } else if (!row.equals(constant)) {
        problems.add(code + ": gnomon.error_code says " + row + ", GnomonSqlState says " + constant);
      }
    }
    assertEquals(List.of(), problems, "gnomon.error_code and GnomonSqlState disagree");
    assertEquals(GnomonSqlState.values().length, registry.size());
  }

  @Test
  void enumLooksUpEveryRegisteredCode() {
    for (String code : registry.keySet()) {
      assertEquals(
          code,
          GnomonSqlState.of(code).map(GnomonSqlState::sqlState).orElse("no GnomonSqlState"),
          "GnomonSqlState.of(\"" + code + "\")");
    }
  }

  @Test
  void everyGnomonSqlStateInTheMigrationsIsRegistered() {
    Map<String, Set<String>> unregistered = new TreeMap<>();
    Set<String> seen = new TreeSet<>();
    MigrationScripts.all()
        .forEach(
            (file, sql) -> {
              Matcher m = CODE.matcher(sql);
              while (m.find()) {
                seen.add(m.group());
                if (!registry.containsKey(m.group())) {
                  unregistered.computeIfAbsent(m.group(), k -> new TreeSet<>()).add(file + ":" + line(sql, m.start()));
                }
              }
              Matcher e = ERRCODE.matcher(sql);
              while (e.find()) {
                String code = e.group(1);
                if (code.toUpperCase().startsWith("GN") && !registry.containsKey(code)) {
                  unregistered.computeIfAbsent(code, k -> new TreeSet<>()).add(file + ":" + line(sql, e.start()));
                }
              }
            });
    assertEquals(Map.of(), unregistered, "SQLSTATEs raised or named in migrations but missing from gnomon.error_code");
    // the scan must have found what it scans for, or it proves nothing
    assertTrue(seen.size() >= 5, "found only " + seen + " in " + MigrationScripts.all().keySet());
  }

  @Test
  void scannerSeesCodesAndRaisedLiterals() {
    // the scanner itself: a well-formed code in text, and a malformed one in an errcode option
    String sql = "raise exception using errcode = 'GN01', message = 'x'; -- then GN999 and GNOMON";
    assertEquals(List.of("GN999"), CODE.matcher(sql).results().map(r -> r.group()).collect(Collectors.toList()));
    Matcher e = ERRCODE.matcher(sql);
    assertTrue(e.find());
    assertEquals("GN01", e.group(1));
  }

  private static int line(String text, int offset) {
    return (int) text.substring(0, offset).chars().filter(ch -> ch == '\n').count() + 1;
  }

  private static Set<String> union(Set<String> a, Set<String> b) {
    Set<String> all = new TreeSet<>();
    all.addAll(a);
    all.addAll(b);
    return all;
  }
}
