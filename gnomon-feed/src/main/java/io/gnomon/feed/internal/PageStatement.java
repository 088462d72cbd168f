package io.gnomon.feed.internal;

import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Types;
import java.util.ArrayList;
import java.util.List;
import org.postgresql.PGStatement;

/**
 * A page's statement from {@code gnomon.feed_page_plan} (its {@code q}, over the parameters {@code $1} to {@code
 * $19} that the plan's other columns hold, as text), as a JDBC statement: each {@code $n} outside quotes becomes a
 * {@code ?} cast to that parameter's type, bound to its text. Thread-safe (immutable).
 *
 * @param sql the statement with {@code ?} placeholders
 * @param parameters for each placeholder in order, the number of the plan's parameter it binds (1 to 19)
 */
record PageStatement(String sql, int[] parameters) {
  /** How many parameters a page's statement has: the columns of gnomon.feed_page_plan after q. */
  static final int PARAMETERS = 19;

  // the types of gnomon.feed_page_plan's columns q_prev ... q_bname, in order ($1 ... $19)
  private static final String[] TYPES = {
    "pg_snapshot", "pg_snapshot", "pg_snapshot", "xid8[]", "bigint[]", "xid8", "xid8", "bigint", "bigint", "bigint",
    "bigint", "xid8", "xid8", "boolean", "bigint", "bigint", "timestamptz", "gnomon.point", "text"
  };

  /** The JDBC form of {@code q}. */
  static PageStatement of(String q) {
    StringBuilder sql = new StringBuilder(q.length() + 256);
    List<Integer> parameters = new ArrayList<>();
    char quote = 0;
    for (int i = 0; i < q.length(); i++) {
      char ch = q.charAt(i);
      if (quote != 0) {
        // inside '...' or "...": a doubled quote is the quote itself and stays inside
        if (ch == quote) {
          quote = 0;
        }
        sql.append(ch);
      } else if (ch == '\'' || ch == '"') {
        quote = ch;
        sql.append(ch);
      } else if (ch == '$' && i + 1 < q.length() && Character.isDigit(q.charAt(i + 1))) {
        int j = i + 1;
        while (j < q.length() && Character.isDigit(q.charAt(j))) {
          j++;
        }
        int n = Integer.parseInt(q.substring(i + 1, j));
        if (n < 1 || n > PARAMETERS) {
          throw new IllegalStateException("gnomon.feed_page_plan returned a statement with parameter $" + n);
        }
        sql.append("(?::").append(TYPES[n - 1]).append(')');
        parameters.add(n);
        i = j - 1;
      } else {
        sql.append(ch);
      }
    }
    return new PageStatement(sql.toString(), parameters.stream().mapToInt(Integer::intValue).toArray());
  }

  /**
   * Binds the placeholders to the plan row's texts ({@code row[n]} is parameter {@code $n}; null stays null), with
   * no type of their own: each takes its cast's type and is parsed once, when it is bound. (Bound as {@code varchar},
   * a cast to an array would parse it again for every row the statement reads: an array's input function is stable,
   * so the planner does not fold it.)
   */
  void bind(PreparedStatement ps, String[] row) throws SQLException {
    for (int k = 0; k < parameters.length; k++) {
      String value = row[parameters[k]];
      if (value == null) {
        ps.setNull(k + 1, Types.OTHER);
      } else {
        ps.setObject(k + 1, value, Types.OTHER);
      }
    }
  }

  /**
   * Keeps the driver from preparing the statement on the server once it has run a few times: the server would then
   * be free to switch to a generic plan, where each page needs the plan of its own parameters (snapshots, xid ranges).
   */
  static void planEveryTime(PreparedStatement ps) throws SQLException {
    if (ps.isWrapperFor(PGStatement.class)) {
      ps.unwrap(PGStatement.class).setPrepareThreshold(0);
    }
  }
}
