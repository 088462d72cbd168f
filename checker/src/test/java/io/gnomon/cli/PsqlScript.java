package io.gnomon.cli;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Runs the SQL of documentation blocks as psql would, on one session: statements end with {@code ;} or {@code
 * \gset}, {@code \gset} stores a row's columns in variables, {@code :'name'} and {@code :name} interpolate them. A
 * statement may be followed, on the next lines, by what psql prints for it as {@code --} comments (a table with
 * its rule line, or {@code ERROR:}/{@code DETAIL:}/{@code HINT:} lines); then what it returns must be exactly that,
 * except that {@code …} in a shown line stands for any text (for times and transaction ids).
 */
final class PsqlScript {
  private static final Pattern RULE = Pattern.compile("-+(\\+-+)*");

  /**
   * One statement of a block.
   *
   * @param sql the statement as written, variables not yet interpolated
   * @param gset whether it ends with {@code \gset}
   * @param line the block line it starts on, from 1 (the line of the opening fence is 0)
   * @param expected what psql prints for it, or empty when the block does not say
   */
  record Step(String sql, boolean gset, int line, List<String> expected) {}

  private final Connection connection;
  private final Map<String, String> variables = new HashMap<>();
  private int executed;

  PsqlScript(Connection connection) {
    this.connection = connection;
  }

  /** How many statements ran so far. */
  int executed() {
    return executed;
  }

  /** Runs every statement of a block, in order; an {@link AssertionError} names the block's file and line. */
  void run(MarkdownBlocks.Block block) {
    for (Step step : parse(block.text())) {
      String where = block.file().getFileName() + ":" + (block.line() + step.line());
      run(step, where);
      executed++;
    }
  }

  private void run(Step step, String where) {
    String sql = interpolate(step.sql());
    List<String> expected = step.expected();
    boolean expectsError = !expected.isEmpty() && expected.get(0).startsWith("ERROR:");
    List<String> actual;
    try (Statement st = connection.createStatement()) {
      if (step.gset()) {
        gset(st, sql, where);
        return;
      }
      actual = st.execute(sql) ? lines(st.getResultSet()) : null;
    } catch (SQLException e) {
      if (expectsError) {
        assertLines(where, sql, expected, Transcript.psqlError(e));
        return;
      }
      throw new AssertionError(where + ": the statement failed: " + String.join("\n", Transcript.psqlError(e))
          + " [SQLSTATE " + e.getSQLState() + "]\n" + sql, e);
    }
    if (expectsError) {
      throw new AssertionError(where + ": the docs say this fails with " + expected.get(0) + ", but it succeeded:\n"
          + sql);
    }
    if (!expected.isEmpty()) {
      if (actual == null) {
        throw new AssertionError(where + ": the docs show rows, but the statement returned none:\n" + sql);
      }
      assertLines(where, sql, expected, actual);
    }
  }

  private void gset(Statement st, String sql, String where) throws SQLException {
    try (ResultSet rs = st.executeQuery(sql)) {
      ResultSetMetaData md = rs.getMetaData();
      if (!rs.next()) {
        throw new AssertionError(where + ": \\gset needs one row, the statement returned none:\n" + sql);
      }
      for (int i = 1; i <= md.getColumnCount(); i++) {
        variables.put(md.getColumnLabel(i), rs.getString(i));
      }
      if (rs.next()) {
        throw new AssertionError(where + ": \\gset needs one row, the statement returned more:\n" + sql);
      }
    }
  }

  private static List<String> lines(ResultSet rs) throws SQLException {
    try (rs) {
      return ResultTable.of(rs).lines();
    }
  }

  /** Compares line by line; {@code …} in an expected line stands for any text. */
  private static void assertLines(String where, String sql, List<String> expected, List<String> actual) {
    List<String> e = expected.stream().map(String::stripTrailing).toList();
    List<String> a = actual.stream().map(String::stripTrailing).toList();
    boolean same = e.size() == a.size();
    for (int i = 0; same && i < e.size(); i++) {
      String x = e.get(i);
      same = x.contains("…") ? matchesWithGaps(x, a.get(i)) : x.equals(a.get(i));
    }
    if (!same) {
      throw new AssertionError(where + ": the docs show\n" + String.join("\n", e) + "\nbut\n" + sql + "\nprints\n"
          + String.join("\n", a));
    }
  }

  private static boolean matchesWithGaps(String expected, String actual) {
    StringBuilder regex = new StringBuilder();
    for (String part : expected.split("…", -1)) {
      if (regex.length() > 0) {
        regex.append(".*");
      }
      regex.append(Pattern.quote(part));
    }
    return actual.matches(regex.toString());
  }

  /** Splits a block into statements, each with the output the docs show for it. */
  static List<Step> parse(List<String> lines) {
    String s = String.join("\n", lines) + "\n";
    List<Step> steps = new ArrayList<>();
    int start = 0;
    int i = 0;
    while (i < s.length()) {
      int skipped = skipToken(s, i);
      if (skipped != i) {
        i = skipped;
        continue;
      }
      char c = s.charAt(i);
      boolean semicolon = c == ';';
      boolean gset = c == '\\';
      if (!semicolon && !gset) {
        i++;
        continue;
      }
      String sql;
      if (gset) {
        if (!s.startsWith("\\gset", i)) {
          throw new IllegalArgumentException("line " + lineOf(s, i) + ": only the psql command \\gset is supported");
        }
        sql = s.substring(start, i).strip();
      } else {
        sql = s.substring(start, i + 1).strip();
      }
      int lineStart = firstCodeLine(s, start);
      int eol = s.indexOf('\n', i);
      String restOfLine = s.substring(i + 1, eol).strip();
      boolean lastOnLine = gset || restOfLine.isEmpty() || restOfLine.startsWith("--");
      int next = lastOnLine ? eol + 1 : i + 1;
      List<String> expected = new ArrayList<>();
      int after = next;
      List<String> comments = new ArrayList<>();
      while (lastOnLine && after < s.length() && s.startsWith("--", after)) {
        int end = s.indexOf('\n', after);
        String comment = s.substring(after, end);
        comments.add(comment.length() > 3 ? comment.substring(3) : "");
        after = end + 1;
      }
      if (!comments.isEmpty()
          && (comments.get(0).startsWith("ERROR:") || comments.stream().anyMatch(l -> RULE.matcher(l).matches()))) {
        expected = comments;
        next = after;
      }
      steps.add(new Step(sql, gset, lineStart, List.copyOf(expected)));
      start = next;
      i = next;
    }
    String rest = withoutComments(s.substring(Math.min(start, s.length()))).strip();
    if (!rest.isEmpty()) {
      throw new IllegalArgumentException("line " + lineOf(s, start) + ": a statement does not end with ; : " + rest);
    }
    return steps;
  }

  /** Replaces {@code :'name'}, {@code :"name"} and {@code :name} of known variables, outside quotes, as psql does. */
  String interpolate(String sql) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    while (i < sql.length()) {
      int skipped = skipToken(sql, i);
      if (skipped != i) {
        out.append(sql, i, skipped);
        i = skipped;
        continue;
      }
      char c = sql.charAt(i);
      if (c == ':' && sql.startsWith("::", i)) {
        out.append("::");
        i += 2;
        continue;
      }
      if (c == ':' && i + 1 < sql.length()) {
        char q = sql.charAt(i + 1);
        if (q == '\'' || q == '"') {
          int close = sql.indexOf(q, i + 2);
          String name = close < 0 ? null : sql.substring(i + 2, close);
          if (name != null && variables.containsKey(name)) {
            String v = variables.get(name);
            out.append(q == '\'' ? "'" + v.replace("'", "''") + "'" : "\"" + v.replace("\"", "\"\"") + "\"");
            i = close + 1;
            continue;
          }
        } else {
          int end = i + 1;
          while (end < sql.length() && (Character.isLetterOrDigit(sql.charAt(end)) || sql.charAt(end) == '_')) {
            end++;
          }
          String name = sql.substring(i + 1, end);
          if (!name.isEmpty() && variables.containsKey(name)) {
            out.append(variables.get(name));
            i = end;
            continue;
          }
        }
      }
      out.append(c);
      i++;
    }
    return out.toString();
  }

  /** The index after a quoted literal, quoted identifier, dollar-quoted string or comment starting at i, else i. */
  private static int skipToken(String s, int i) {
    char c = s.charAt(i);
    if (c == '\'' || c == '"') {
      int j = i + 1;
      while (j < s.length()) {
        if (s.charAt(j) == c) {
          if (j + 1 < s.length() && s.charAt(j + 1) == c) {
            j += 2;
            continue;
          }
          return j + 1;
        }
        j++;
      }
      return s.length();
    }
    if (s.startsWith("--", i)) {
      int eol = s.indexOf('\n', i);
      return eol < 0 ? s.length() : eol;
    }
    if (s.startsWith("/*", i)) {
      int end = s.indexOf("*/", i + 2);
      return end < 0 ? s.length() : end + 2;
    }
    if (c == '$') {
      int j = i + 1;
      while (j < s.length() && (Character.isLetterOrDigit(s.charAt(j)) || s.charAt(j) == '_')) {
        j++;
      }
      if (j < s.length() && s.charAt(j) == '$' && (j == i + 1 || !Character.isDigit(s.charAt(i + 1)))) {
        String tag = s.substring(i, j + 1);
        int end = s.indexOf(tag, j + 1);
        return end < 0 ? s.length() : end + tag.length();
      }
    }
    return i;
  }

  private static String withoutComments(String s) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    while (i < s.length()) {
      int skipped = skipToken(s, i);
      if (skipped != i) {
        if (!s.startsWith("--", i) && !s.startsWith("/*", i)) {
          out.append(s, i, skipped);
        }
        i = skipped;
      } else {
        out.append(s.charAt(i++));
      }
    }
    return out.toString();
  }

  private static int firstCodeLine(String s, int from) {
    int i = from;
    while (i < s.length()) {
      int eol = s.indexOf('\n', i);
      String line = s.substring(i, eol < 0 ? s.length() : eol).strip();
      if (!line.isEmpty() && !line.startsWith("--")) {
        return lineOf(s, i);
      }
      i = eol < 0 ? s.length() : eol + 1;
    }
    return lineOf(s, from);
  }

  private static int lineOf(String s, int index) {
    int line = 1;
    for (int i = 0; i < index && i < s.length(); i++) {
      if (s.charAt(i) == '\n') {
        line++;
      }
    }
    return line;
  }
}
