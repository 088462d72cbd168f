package io.gnomon.feed;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.annotation.JsonSerialize;
import io.gnomon.feed.internal.ChangeEventSerializer;
import java.time.Instant;
import java.util.Objects;

/**
 * One change of one row of a tracked table, as the feed delivers it; or, for {@link Operation#READ}, one row read by
 * a {@link Feed#backfill backfill}.
 *
 * <p>Serialised by Jackson ({@code mapper.writeValueAsString(event)}) into an envelope shaped like Debezium's:
 * {@code {"id", "before", "after", "op", "ts_ms", "source": {…}, "key"}} (see {@code docs/feed.md}). Row images are
 * whole rows as {@code to_jsonb} renders them, large (TOAST) values included.
 *
 * @param id a stable id for deduplication: the event's position for a change (the same event always has the same
 *     id for a consumer, whatever the page sizes and restarts), {@code v1:r:<table>:<key>} for a backfill row
 * @param op what happened
 * @param relation the table as SQL names it, {@code schema.table} with quotes where needed
 * @param database the database's name
 * @param schema the table's schema
 * @param table the table's name
 * @param key the row's primary key, {@code {"column": value, …}}
 * @param before the row before the change; null for a create or a read, and when the consumer takes no images
 * @param after the row after the change; null for a delete, and when the consumer takes no images
 * @param position the position to acknowledge once this event (and every one before it) is handled; for a backfill
 *     row, the consumer's position when the backfill ran
 * @param tick the tick whose batch holds the change (0 for a backfill row)
 * @param tickAt when that tick was recorded (for a backfill row, when the backfill read it)
 * @param xid the 64-bit id of the transaction that made the change (0 for a backfill row)
 * @param vid the change's version key, unique across every tracked table (0 for a backfill row)
 */
@JsonSerialize(using = ChangeEventSerializer.class)
public record ChangeEvent(
    String id,
    Operation op,
    String relation,
    String database,
    String schema,
    String table,
    JsonNode key,
    JsonNode before,
    JsonNode after,
    FeedPosition position,
    long tick,
    Instant tickAt,
    long xid,
    long vid) {

  /** Checks the required parts. */
  public ChangeEvent {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(op, "op");
    Objects.requireNonNull(relation, "relation");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(position, "position");
    Objects.requireNonNull(tickAt, "tickAt");
  }

  /** Milliseconds since the epoch of {@link #tickAt()}: the envelope's {@code ts_ms}. */
  public long tsMs() {
    return tickAt.toEpochMilli();
  }

  /** Whether the event comes from a backfill ({@link Operation#READ}) rather than from a change. */
  public boolean isBackfill() {
    return op == Operation.READ;
  }
}
