package io.gnomon.cli;

import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

/**
 * Rows as psql prints them in its default aligned format: centred headers, numbers right-aligned, {@code (N rows)}
 * below. The demo shows every result this way, and the docs test compares the results shown in the docs with it.
 *
 * @param columns the column names
 * @param rightAligned per column, whether psql right-aligns it (numeric types)
 * @param rows the values as PostgreSQL's text form; null is shown empty, as psql does
 */
public record ResultTable(List<String> columns, List<Boolean> rightAligned, List<List<String>> rows) {
  /**
   * The types psql right-aligns (print.c, column_type_alignment): numbers, and the transaction-id types, which JDBC
   * reports as {@link Types#OTHER}. (Type names alone would miss identity columns, which pgjdbc names "bigserial".)
   */
  private static final Set<Integer> NUMERIC_JDBC_TYPES =
      Set.of(Types.SMALLINT, Types.INTEGER, Types.BIGINT, Types.NUMERIC, Types.DECIMAL, Types.REAL, Types.FLOAT,
          Types.DOUBLE);

  private static final Set<String> NUMERIC_TYPE_NAMES = Set.of("xid", "xid8", "cid");

  /** Copies the lists. */
  public ResultTable {
    columns = List.copyOf(columns);
    rightAligned = List.copyOf(rightAligned);
    rows = rows.stream().map(r -> Collections.unmodifiableList(new ArrayList<>(r))).toList();
  }

  /** Reads every row of a result set, in PostgreSQL's text form. */
  public static ResultTable of(ResultSet rs) throws SQLException {
    ResultSetMetaData md = rs.getMetaData();
    List<String> columns = new ArrayList<>();
    List<Boolean> right = new ArrayList<>();
    for (int i = 1; i <= md.getColumnCount(); i++) {
      columns.add(md.getColumnLabel(i));
      right.add(NUMERIC_JDBC_TYPES.contains(md.getColumnType(i))
          || NUMERIC_TYPE_NAMES.contains(md.getColumnTypeName(i)));
    }
    List<List<String>> rows = new ArrayList<>();
    while (rs.next()) {
      List<String> row = new ArrayList<>();
      for (int i = 1; i <= columns.size(); i++) {
        row.add(rs.getString(i));
      }
      rows.add(row);
    }
    return new ResultTable(columns, right, rows);
  }

  /** The lines psql would print, without trailing spaces. */
  public List<String> lines() {
    int n = columns.size();
    int[] width = new int[n];
    for (int i = 0; i < n; i++) {
      width[i] = columns.get(i).length();
      for (List<String> row : rows) {
        width[i] = Math.max(width[i], text(row.get(i)).length());
      }
    }
    List<String> out = new ArrayList<>();
    StringBuilder header = new StringBuilder();
    StringBuilder rule = new StringBuilder();
    for (int i = 0; i < n; i++) {
      int space = width[i] - columns.get(i).length();
      header.append(i == 0 ? " " : " | ").append(" ".repeat(space / 2)).append(columns.get(i))
          .append(" ".repeat((space + 1) / 2));
      rule.append(i == 0 ? "" : "+").append("-".repeat(width[i] + 2));
    }
    out.add(stripTrailing(header));
    out.add(rule.toString());
    for (List<String> row : rows) {
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < n; i++) {
        String v = text(row.get(i));
        String pad = " ".repeat(width[i] - v.length());
        line.append(i == 0 ? " " : " | ").append(rightAligned.get(i) ? pad + v : v + pad);
      }
      out.add(stripTrailing(line));
    }
    out.add(rows.size() == 1 ? "(1 row)" : "(" + rows.size() + " rows)");
    return out;
  }

  /** The value in row {@code row} (from 0) of the column named {@code column}. */
  public String value(int row, String column) {
    int i = columns.indexOf(column);
    if (i < 0) {
      throw new IllegalArgumentException("no column " + column + " in " + columns);
    }
    return rows.get(row).get(i);
  }

  private static String text(String value) {
    return value == null ? "" : value;
  }

  private static String stripTrailing(StringBuilder b) {
    return b.toString().stripTrailing();
  }
}
