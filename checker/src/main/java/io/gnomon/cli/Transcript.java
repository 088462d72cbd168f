package io.gnomon.cli;

import io.gnomon.sql.GnomonSqlState;
import java.io.PrintStream;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/**
 * What the demo prints: numbered steps with a few words of explanation, each SQL statement as typed at a psql prompt
 * followed by what psql would show, and each Java call as typed in jshell followed by its result. Every statement
 * shown is the statement run, text for text.
 */
final class Transcript {
  private static final int WIDTH = 100;
  private static final String INDENT = "  ";

  private final PrintStream out;
  private final String database;
  private int step;
  private String stepTitle = "starting";
  /** Whether the last thing printed was a result that psql would follow with a blank line. */
  private boolean blankPending;
  /** Whether the last thing printed was a step's heading. */
  private boolean afterHeading;

  Transcript(PrintStream out, String database) {
    this.out = out;
    this.database = database;
  }

  /** The number and title of the step under way, for failure messages. */
  String currentStep() {
    return step == 0 ? stepTitle : "step " + step + " (" + stepTitle + ")";
  }

  /** Starts the next numbered step. */
  void step(String title) {
    step++;
    stepTitle = title;
    out.println();
    String head = "== " + step + ". " + title + " ";
    out.println(head + "=".repeat(Math.max(3, WIDTH - head.length())));
    blankPending = false;
    afterHeading = true;
  }

  /** A paragraph of explanation, wrapped. */
  void say(String text) {
    if (!afterHeading) {
      out.println();
    }
    afterHeading = false;
    blankPending = false;
    StringBuilder line = new StringBuilder();
    for (String word : text.split(" +")) {
      if (line.length() > 0 && line.length() + 1 + word.length() > WIDTH) {
        out.println(line);
        line.setLength(0);
      }
      if (line.length() > 0) {
        line.append(' ');
      }
      line.append(word);
    }
    if (line.length() > 0) {
      out.println(line);
    }
  }

  /** Runs one SQL statement, showing it and what it returned; returns the rows (empty for commands). */
  ResultTable sql(Connection c, String sql) throws SQLException {
    prompt(sql);
    try (Statement st = c.createStatement()) {
      if (st.execute(sql)) {
        try (ResultSet rs = st.getResultSet()) {
          ResultTable table = ResultTable.of(rs);
          table.lines().forEach(l -> out.println(INDENT + l));
          blankPending = true;
          return table;
        }
      }
      out.println(INDENT + commandTag(sql, st.getUpdateCount()));
      return new ResultTable(List.of(), List.of(), List.of());
    }
  }

  /**
   * Runs one SQL statement that must fail, showing the error as psql does and its SQLSTATE; returns the error.
   *
   * @throws IllegalStateException when the statement succeeds
   */
  SQLException sqlError(Connection c, String sql) {
    prompt(sql);
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    } catch (SQLException e) {
      psqlError(e).forEach(l -> out.println(INDENT + l));
      blankPending = true;
      String state = e.getSQLState();
      note("SQLSTATE " + state + GnomonSqlState.of(state).map(s -> " (" + s.name() + ")").orElse(""));
      return e;
    }
    throw new IllegalStateException("this statement should have failed, but succeeded: " + sql);
  }

  /** A Java statement as typed in jshell, and the lines it printed or returned. */
  void java(String code, List<String> result) {
    beforeInput();
    String[] lines = code.split("\n");
    for (int i = 0; i < lines.length; i++) {
      out.println(INDENT + (i == 0 ? "jshell> " : "   ...> ") + lines[i]);
    }
    result.forEach(l -> out.println(INDENT + l));
    blankPending = !result.isEmpty();
  }

  /** A note printed right under a result, marked as an SQL comment so it is not mistaken for output. */
  void note(String text) {
    out.println(INDENT + "-- " + text);
    afterHeading = false;
  }

  /** An error as psql prints it at its default verbosity: ERROR, DETAIL and HINT lines. */
  static List<String> psqlError(SQLException e) {
    if (e instanceof PSQLException p && p.getServerErrorMessage() != null) {
      ServerErrorMessage m = p.getServerErrorMessage();
      List<String> lines = new ArrayList<>();
      lines.add("ERROR:  " + m.getMessage());
      if (m.getDetail() != null) {
        lines.add("DETAIL:  " + m.getDetail());
      }
      if (m.getHint() != null) {
        lines.add("HINT:  " + m.getHint());
      }
      return lines;
    }
    return List.of("ERROR:  " + e.getMessage());
  }

  private void beforeInput() {
    if (blankPending) {
      out.println();
    }
    blankPending = false;
    afterHeading = false;
  }

  private void prompt(String sql) {
    beforeInput();
    String[] lines = sql.split("\n");
    for (int i = 0; i < lines.length; i++) {
      out.println(INDENT + database + (i == 0 ? "=# " : "-# ") + lines[i]);
    }
  }

  /** The command tag psql prints for a statement that returns no rows, such as {@code INSERT 0 3}. */
  static String commandTag(String sql, int updateCount) {
    String[] words = sql.strip().split("\\s+");
    String verb = words[0].toUpperCase(Locale.ROOT);
    return switch (verb) {
      case "INSERT" -> "INSERT 0 " + updateCount;
      case "UPDATE", "DELETE" -> verb + " " + updateCount;
      case "CREATE", "ALTER", "DROP" -> verb + " " + words[1].toUpperCase(Locale.ROOT);
      default -> verb;
    };
  }
}
