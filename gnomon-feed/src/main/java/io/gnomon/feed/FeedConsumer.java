package io.gnomon.feed;

import io.gnomon.Coordinate;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * A registered consumer, as stored in {@code gnomon.consumer}.
 *
 * @param name its name
 * @param tables the tracked tables it follows, as SQL names them ({@code schema.table})
 * @param images whether its events carry the row images {@code before} and {@code after}
 * @param position its acknowledged position
 * @param start its start coordinate: no change visible at it is delivered; a backfill reads the tables as of it
 * @param maxLag how far behind the last tick it may fall before it is expired, if limited
 * @param registeredAt when it was registered
 * @param ackedAt when it last acknowledged a position, if ever
 * @param branch whose writes it follows: {@value ChangeEvent#MAIN} for the tables themselves, else a branch's name
 */
public record FeedConsumer(
    String name,
    List<String> tables,
    boolean images,
    FeedPosition position,
    Coordinate start,
    Optional<Duration> maxLag,
    Instant registeredAt,
    Optional<Instant> ackedAt,
    String branch) {

  /** Copies the table list. */
  public FeedConsumer {
    tables = List.copyOf(tables);
  }
}
