package io.gnomon.feed.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gnomon.BranchNotFoundException;
import io.gnomon.feed.ChangeEvent;
import io.gnomon.feed.FeedPosition;
import io.gnomon.feed.Operation;
import java.sql.Array;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;
import org.jooq.SQLDialect;
import org.jooq.impl.DSL;

/**
 * A consumer's backfill: every row of each of its tables as of its start coordinate, read through the table's
 * generated {@code gnomon_t.<table>_as_of(coordinate)} function with a cursor, as {@link Operation#READ} events.
 */
public final class Backfill {
  private static final int FETCH_SIZE = 1000;

  private record Table(String relation, String schema, String name, String asOfFunction, List<String> keys) {}

  private Backfill() {}

  /**
   * Streams the rows to {@code handler}, table by table in the order the tables were tracked, inside the caller's
   * transaction ({@code c} must not be in autocommit mode, for the cursor). Returns how many rows it read.
   */
  public static long run(Connection c, PageReader reader, String consumer, Consumer<ChangeEvent> handler)
      throws SQLException {
    String coordinate;
    FeedPosition position;
    String branch;
    Integer[] tableIds;
    try (PreparedStatement ps = c.prepareStatement(
        // the start snapshot is a committed row, safe in any incarnation: labelled with the one reading it
        "select gnomon.coordinate_text(start_snapshot::text), table_ids, tick_id, txn_key, vid,"
            + " (select b.branch_name from gnomon.branch b where b.branch_id = k.branch_id), k.branch_id is not null"
            + " from gnomon.consumer k where consumer_name = ?")) {
      ps.setString(1, consumer);
      try (ResultSet rs = ps.executeQuery()) {
        if (!rs.next()) {
          throw FeedSql.notFound(consumer);
        }
        coordinate = rs.getString(1);
        tableIds = (Integer[]) rs.getArray(2).getArray();
        position = new FeedPosition(rs.getLong(3), rs.getLong(4), rs.getLong(5));
        branch = rs.getBoolean(7) ? rs.getString(6) : ChangeEvent.MAIN;
        if (branch == null) {
          throw new BranchNotFoundException("the branch that feed consumer '" + consumer + "' follows was dropped"
              + "\n  Hint: Unregister the consumer.", null);
        }
      }
    }
    List<Table> tables = new ArrayList<>();
    try (PreparedStatement ps = c.prepareStatement(
        "select format('%I.%I', schema_name, table_name), schema_name, table_name,"
            + " case when ? then gnomon.object_name(base_name, '_at') else as_of_function end, key_columns"
            + " from gnomon.tracked_table where table_id = any (?) order by table_id")) {
      Array ids = c.createArrayOf("integer", tableIds);
      ps.setBoolean(1, !branch.equals(ChangeEvent.MAIN));
      ps.setArray(2, ids);
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          tables.add(new Table(rs.getString(1), rs.getString(2), rs.getString(3), rs.getString(4),
              Arrays.asList((String[]) rs.getArray(5).getArray())));
        }
      }
    }
    String database = reader.database(c);
    Instant readAt = Instant.now();
    long rows = 0;
    for (Table t : tables) {
      String function = DSL.using(SQLDialect.POSTGRES).render(DSL.name("gnomon_t", t.asOfFunction()));
      // on a branch: the table at the branch's point as of the start (gnomon_t.<table>_at(gnomon.point(…)))
      boolean onBranch = !branch.equals(ChangeEvent.MAIN);
      try (PreparedStatement ps = c.prepareStatement("select row_to_json(r)::text from " + function
          + (onBranch ? "(gnomon.point(?, ?)) r" : "(?) r"))) {
        ps.setFetchSize(FETCH_SIZE);
        if (onBranch) {
          ps.setString(1, branch);
          ps.setString(2, coordinate);
        } else {
          ps.setString(1, coordinate);
        }
        try (ResultSet rs = ps.executeQuery()) {
          while (rs.next()) {
            JsonNode row = reader.parse(rs.getString(1));
            ObjectNode key = JsonNodeFactory.instance.objectNode();
            for (String k : t.keys()) {
              key.set(k, row.get(k));
            }
            handler.accept(new ChangeEvent(
                "v1:r:" + t.relation() + ":" + key, Operation.READ, t.relation(), database, t.schema(), t.name(),
                key, null, row, position, 0, readAt, 0, 0, branch));
            rows++;
          }
        }
      }
    }
    return rows;
  }
}
