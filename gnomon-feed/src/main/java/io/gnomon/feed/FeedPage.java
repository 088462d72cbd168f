package io.gnomon.feed;

import java.util.List;
import java.util.Objects;

/**
 * One page of the feed: whole transactions in commit order (a transaction larger than the page is split, and the
 * next page resumes inside it), read after the consumer's acknowledged position {@link #from()}.
 *
 * <p>Acknowledge {@link #position()} once every event is handled. It can be after {@code from} even when the page
 * has no events: the feed skipped batches in which none of the consumer's tables changed, and acknowledging it
 * keeps the consumer from re-reading them (and from being expired by its {@code max_lag}).
 *
 * @param consumer the consumer's name
 * @param from the acknowledged position the page was read after
 * @param position the position to acknowledge: the last event's, or after the skipped empty batches, or {@code
 *     from} when nothing was read
 * @param events the events, in feed order
 */
public record FeedPage(String consumer, FeedPosition from, FeedPosition position, List<ChangeEvent> events) {

  /** Checks the parts; copies the events. */
  public FeedPage {
    Objects.requireNonNull(consumer, "consumer");
    Objects.requireNonNull(from, "from");
    Objects.requireNonNull(position, "position");
    events = List.copyOf(events);
    if (position.compareTo(from) < 0) {
      throw new IllegalArgumentException("a page's position " + position + " is before its start " + from);
    }
  }

  /** Whether the page has no events. */
  public boolean isEmpty() {
    return events.isEmpty();
  }

  /** How many events the page has. */
  public int size() {
    return events.size();
  }

  /** Whether acknowledging the page moves the consumer ({@link #position()} is after {@link #from()}). */
  public boolean advances() {
    return position.isAfter(from);
  }
}
