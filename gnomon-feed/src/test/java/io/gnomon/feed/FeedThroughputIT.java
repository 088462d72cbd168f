package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Drain speed, printed (not asserted: the machines that run the build are shared): a backlog of updates in
 * transactions of 1,000 rows, drained in pages of 1,000 with and without row images, JSON envelopes included. The
 * figures that count are the bench's ({@code bench/run.sh feed}); this keeps an eye on the order of magnitude.
 */
@Timeout(120)
class FeedThroughputIT extends FeedTestBase {
  private static final int ROWS = 20_000;

  @Test
  void drainsABacklogInPagesOfAThousand() throws Exception {
    sql("create table bulk (id integer primary key, name text, qty integer, price numeric(10,2))",
        "insert into bulk select g, 'item ' || g, g % 100, (g % 1000) / 10.0 from generate_series(1, " + ROWS + ") g");
    gnomon().track("public.bulk");
    feed().register("images", List.of("public.bulk"), FeedStart.now(), true);
    feed().register("keys", List.of("public.bulk"), FeedStart.now(), false);
    for (int from = 1; from <= ROWS; from += 1000) {
      sql("update bulk set qty = qty + 1 where id between " + from + " and " + (from + 999));
    }
    tick();
    ObjectMapper mapper = new ObjectMapper();
    for (String consumer : List.of("images", "keys")) {
      AtomicLong bytes = new AtomicLong();
      long started = System.nanoTime();
      long events = 0;
      while (true) {
        FeedPage page = feed().poll(consumer, 1000);
        for (ChangeEvent e : page.events()) {
          bytes.addAndGet(mapper.writeValueAsString(e).length());
        }
        events += page.size();
        if (page.advances()) {
          feed().ack(consumer, page.position());
        }
        if (page.isEmpty()) {
          break;
        }
      }
      double seconds = (System.nanoTime() - started) / 1e9;
      assertEquals(ROWS, events);
      System.out.printf("FeedThroughputIT: consumer %s drained %d events (%d JSON bytes) in pages of 1000 in %.2f s:"
          + " %.0f events/s%n", consumer, events, bytes.get(), seconds, events / seconds);
    }
  }
}
