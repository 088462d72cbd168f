package io.gnomon.cli;

import io.gnomon.feed.ChangeEvent;
import io.gnomon.feed.Feed;
import io.gnomon.feed.FeedPage;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;

/**
 * The demo's change-feed step: a consumer registered in SQL, three changes, a tick, the page as psql shows it, then
 * the same page from Java as Debezium-shaped JSON events, acknowledged. Checks that the feed returned exactly the
 * three changes, in order.
 */
final class DemoFeedStep {
  private static final String CONSUMER = "demo";

  private final DataSource dataSource;
  private final Transcript t;

  DemoFeedStep(DataSource dataSource, Transcript transcript) {
    this.dataSource = dataSource;
    this.t = transcript;
  }

  void run(Connection c) throws SQLException {
    t.step("Follow the changes: the change feed");
    t.say("The versions Gnomon keeps are also a change feed: a named consumer reads the changes of its tables in "
        + "commit order, page by page, and acknowledges each page; its position lives in the database, so it resumes "
        + "exactly where it left off after a crash, with no replication slot. Register a consumer; it starts now:");
    t.sql(c, "select gnomon.feed_register('" + CONSUMER + "', array['public.account']) as start;");
    t.sql(c, "update account set balance = balance + 5 where id = 3;");
    t.sql(c, "insert into account values (5, 'erin', 10.00);");
    t.sql(c, "delete from account where id = 4;");
    t.say("Ticks cut the feed into batches, so a change reaches consumers once a tick after its commit exists (the "
        + "ticker ticks every second; here we tick by hand):");
    t.sql(c, "select gnomon.tick();");
    ResultTable sqlPage = t.sql(c,
        "select event_position, op, key, before, after from gnomon.feed_read('" + CONSUMER + "', 10);");
    expectOps("the page read in SQL", sqlPage.rows().stream().map(r -> r.get(1) + ":" + r.get(2)).toList());
    t.note("Nothing is acknowledged yet, so reading again returns the same page. Java reads it as events:");

    Feed feed = Feed.open(dataSource);
    FeedPage page = feed.poll(CONSUMER, 10);
    List<String> printed = new ArrayList<>();
    for (ChangeEvent e : page.events()) {
      printed.add(feed.toJson(e));
    }
    t.java("""
        Feed feed = Feed.open(dataSource);
        FeedPage page = feed.poll("demo", 10);
        for (ChangeEvent e : page.events()) {
          System.out.println(feed.toJson(e));   // Debezium-shaped: before, after, op, ts_ms, source, key
        }
        feed.ack("demo", page.position());""", printed);
    feed.ack(CONSUMER, page.position());
    expectOps("the page read from Java",
        page.events().stream().map(e -> e.op().code() + ":" + e.key().toString()).toList());
    t.say("Each event's id is its position: a sink that sees an event twice (the consumer crashed before "
        + "acknowledging) can drop the repeat. A consumer whose writes go to this database applies a page and "
        + "acknowledges it in one transaction, and gets each change exactly once. After the acknowledgement:");
    ResultTable after = t.sql(c, "select count(*) from gnomon.feed_read('" + CONSUMER + "', 10);");
    if (!after.rows().equals(List.of(List.of("0")))) {
      throw new Demo.DemoCheckFailed("the feed returned events again after they were acknowledged: " + after.rows());
    }
    t.sql(c, "select gnomon.feed_unregister('" + CONSUMER + "');");
  }

  private static void expectOps(String what, List<String> got) {
    List<String> expected = List.of("u:{\"id\":3}", "c:{\"id\":5}", "d:{\"id\":4}");
    if (!got.equals(expected)) {
      throw new Demo.DemoCheckFailed(what + " returned " + got + ", expected " + expected);
    }
  }
}
