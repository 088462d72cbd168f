package io.gnomon.checker.run;

import io.gnomon.feed.ChangeEvent;
import io.gnomon.feed.Feed;
import io.gnomon.feed.FeedPage;
import io.gnomon.feed.FeedRunner;
import io.gnomon.feed.FeedRunnerConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The checker's feed consumer: a {@link FeedRunner} that stores every event, with its row images, in {@code ck_feed} in
 * the transaction that acknowledges its page (exactly once, if the feed is right), reconnecting to the current primary
 * across faults. With the C module enabled, its pages come from the module's page reader ({@code gnomon.feed_page_c}).
 */
public final class FeedSink implements AutoCloseable {
  private final Feed feed;
  private final FeedRunner runner;
  /** Events stored so far (by this process; a page rolled back by a fault is counted again when it comes back). */
  public final AtomicLong events = new AtomicLong();

  public FeedSink(Servers servers) {
    this.feed = Feed.open(servers.dataSource());
    FeedRunnerConfig config = FeedRunnerConfig.builder().pageSize(500).idleInterval(Duration.ofMillis(50))
        .initialBackoff(Duration.ofMillis(100)).maxBackoff(Duration.ofSeconds(1)).maxRetries(1000).build();
    this.runner = feed.startTransactional(Schema.CONSUMER, this::store, config);
  }

  private void store(Connection c, FeedPage page) throws SQLException {
    if (page.isEmpty()) {
      return;
    }
    int n = page.size();
    Long[] tbl = new Long[n];
    Long[] key = new Long[n];
    String[] xid = new String[n];
    Long[] vid = new Long[n];
    String[] op = new String[n];
    Long[] tick = new Long[n];
    String[] pos = new String[n];
    String[] before = new String[n];
    String[] after = new String[n];
    for (int i = 0; i < n; i++) {
      ChangeEvent e = page.events().get(i);
      tbl[i] = Long.parseLong(e.table().substring("ck_t".length()));
      key[i] = e.key().get("id").asLong();
      xid[i] = Long.toString(e.xid());
      vid[i] = e.vid();
      op[i] = switch (e.op()) {
        case CREATE -> "I";
        case UPDATE -> "U";
        case DELETE -> "D";
        default -> "?";
      };
      tick[i] = e.tick();
      pos[i] = e.position().toString();
      before[i] = e.beforeJson();
      after[i] = e.afterJson();
    }
    try (PreparedStatement ps = c.prepareStatement("insert into ck_feed (tbl, key, xid, vid, op, tick, pos, before, after) "
        + "select * from unnest(?::int[], ?::bigint[], ?::xid8[], ?::bigint[], ?::char[], ?::bigint[], ?::text[], "
        + "?::jsonb[], ?::jsonb[])")) {
      ps.setArray(1, c.createArrayOf("bigint", tbl));
      ps.setArray(2, c.createArrayOf("bigint", key));
      ps.setArray(3, c.createArrayOf("text", xid));
      ps.setArray(4, c.createArrayOf("bigint", vid));
      ps.setArray(5, c.createArrayOf("text", op));
      ps.setArray(6, c.createArrayOf("bigint", tick));
      ps.setArray(7, c.createArrayOf("text", pos));
      ps.setArray(8, c.createArrayOf("text", before));
      ps.setArray(9, c.createArrayOf("text", after));
      ps.executeUpdate();
    }
    events.addAndGet(n);
  }

  /**
   * Waits until the consumer has acknowledged every batch up to the last tick recorded now, polling the consumer's
   * row; returns null when it has, else why not.
   */
  public String drain(Servers servers, Duration patience) throws InterruptedException {
    long deadline = System.nanoTime() + patience.toNanos();
    long target = -1;
    String last = "no answer from the server";
    while (System.nanoTime() < deadline) {
      if (runner.state() == FeedRunner.State.FAILED) {
        return "the feed runner stopped: " + runner.failure().map(Throwable::toString).orElse("?");
      }
      try (Connection c = servers.connect()) {
        if (target < 0) {
          try (PreparedStatement ps = c.prepareStatement("select gnomon.tick()"); ResultSet rs = ps.executeQuery()) {
            rs.next();
            target = rs.getLong(1);
          }
        }
        try (PreparedStatement ps = c.prepareStatement(
            "select tick_id from gnomon.consumer where consumer_name = ?")) {
          ps.setString(1, Schema.CONSUMER);
          try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            long at = rs.getLong(1);
            if (at >= target) {
              return null;
            }
            last = "the consumer acknowledged tick " + at + " of " + target;
          }
        }
      } catch (SQLException e) {
        last = e.getMessage();
      }
      Thread.sleep(100);
    }
    return "after " + patience.toSeconds() + " s, " + last;
  }

  /** Failures the runner retried. */
  public long retries() {
    return runner.retries();
  }

  @Override
  public void close() {
    runner.close();
  }
}
