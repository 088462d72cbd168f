package io.gnomon.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gnomon.Gnomon;
import io.gnomon.feed.ChangeEvent;
import io.gnomon.feed.Feed;
import io.gnomon.feed.FeedRunner;
import io.gnomon.feed.FeedRunnerConfig;
import io.gnomon.feed.FeedStart;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.DoubleSupplier;

/**
 * Gnomon's own feed measurements on the backlog the group wrote: the change set read inside the server, one page of
 * everything through {@code gnomon.feed_read}, the drain in pages of 1,000, and the write path while a consumer runs.
 */
final class FeedMetrics {
  private final FeedRun run;
  private final Details log;
  /** The drain's CPU time, set by {@link #drain}. */
  Metric drainCpu;

  FeedMetrics(FeedRun run) {
    this.run = run;
    this.log = run.log();
  }

  /**
   * changeset_rows_per_s: {@code count(*)} over the table's change function between the consumers' start and the
   * last tick, images off (the rows the feed would page through, before any window or page logic); and, as
   * evidence, the same with each row's key built ({@code count(key)}).
   */
  List<Metric> changeset() throws SQLException {
    String fn = Db.text(run.c(), "select format('gnomon_t.%I', gnomon.object_name(base_name, '_changes'))"
        + " from gnomon.tracked_table");
    String args = "(?::pg_snapshot, ?::pg_snapshot, ?::pg_snapshot, false)";
    String count = "select count(*) from " + fn + args;
    String keys = "select count(key) from " + fn + args;
    Db.exec(run.c(), "set jit = off"); // a 50 ms query should not pay for compilation; say so in the report
    List<double[]> plain = new ArrayList<>();
    List<double[]> withKeys = new ArrayList<>();
    for (int r = 0; r < run.sizes().repeats(); r++) {
      plain.add(new double[] {rowsPerSecond(count), Double.NaN});
      withKeys.add(new double[] {rowsPerSecond(keys), Double.NaN});
    }
    explain("plan of the change set (images off)", "explain (analyze, buffers) " + count);
    Db.exec(run.c(), "reset jit");
    String over = String.format(Locale.ROOT, "%,d versions in %d batches", run.sizes().versions(),
        run.sizes().batches());
    return List.of(
        FeedRun.valueMetric("changeset_rows_per_s", "rows/s", plain, new Target(Target.Kind.AT_LEAST, 2_000_000, true),
            "select count(*) from the table's _changes(start, last tick, start, images off), " + over
                + ", jit off, server side"),
        FeedRun.valueMetric("changeset_keys_rows_per_s", "rows/s", withKeys, null,
            "the same with each row's key built as jsonb (count(key))"));
  }

  private double rowsPerSecond(String sql) {
    try (PreparedStatement ps = run.c().prepareStatement(sql)) {
      ps.setString(1, run.start());
      ps.setString(2, run.end());
      ps.setString(3, run.start());
      long t0 = System.nanoTime();
      long rows;
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        rows = rs.getLong(1);
      }
      double s = (System.nanoTime() - t0) / 1e9;
      run.expect("change set", rows);
      log.log("change set %-42s %,9.0f rows/s (%.0f ms)", sql.substring(7, Math.min(sql.length(), 40)), rows / s,
          s * 1e3);
      return rows / s;
    } catch (SQLException e) {
      throw new IllegalStateException(sql + ": " + e.getMessage(), e);
    }
  }

  /**
   * feed_read_sql_pages_*_rows_per_s: the backlog in pages of {@code pageSize} through {@code gnomon.feed_read} and
   * {@code gnomon.feed_ack} over JDBC, every column fetched as text, no Java objects: what the database and the
   * transfer cost, without the Java API's parsing and JSON. One fresh consumer per repeat, images off and on.
   */
  List<Metric> sqlPages(List<String> noImages, List<String> images, int pageSize) throws SQLException {
    List<double[]> off = new ArrayList<>();
    List<double[]> on = new ArrayList<>();
    for (int r = 0; r < noImages.size(); r++) {
      off.add(new double[] {sqlPages(noImages.get(r), pageSize), Double.NaN});
      on.add(new double[] {sqlPages(images.get(r), pageSize), Double.NaN});
    }
    String how = String.format(Locale.ROOT, "gnomon.feed_read(consumer, %,d) + gnomon.feed_ack over JDBC, columns"
        + " as text, no Java objects", pageSize);
    return List.of(
        FeedRun.valueMetric("feed_read_sql_pages_no_images_rows_per_s", "rows/s", off, null, how + ", images off"),
        FeedRun.valueMetric("feed_read_sql_pages_images_rows_per_s", "rows/s", on, null, how + ", images on"));
  }

  private double sqlPages(String consumer, int pageSize) throws SQLException {
    long n = 0;
    long pages = 0;
    long t0 = System.nanoTime();
    try (PreparedStatement read = run.c().prepareStatement("select event_position, tick_id, tick_at::text,"
            + " xid::text, txn_key, vid, table_name, op, key::text, before::text, after::text"
            + " from gnomon.feed_read(?, ?)");
        PreparedStatement ack = run.c().prepareStatement("select gnomon.feed_ack(?, ?)")) {
      read.setString(1, consumer);
      read.setInt(2, pageSize);
      ack.setString(1, consumer);
      while (n < run.sizes().versions()) {
        String last = null;
        long before = n;
        try (ResultSet rs = read.executeQuery()) {
          while (rs.next()) {
            last = rs.getString(1);
            for (int i = 2; i <= 11; i++) {
              rs.getString(i);
            }
            if (!"h".equals(rs.getString(8))) {
              n++;
            }
          }
        }
        pages++;
        if (last == null || (n == before && pages > run.sizes().batches() + 2)) {
          throw new IllegalStateException("feed_read for " + consumer + " ended after " + n + " events");
        }
        ack.setString(2, last);
        ack.executeQuery().close();
      }
    }
    double s = (System.nanoTime() - t0) / 1e9;
    run.expect("feed_read pages of " + consumer, n);
    log.log("feed_read pages %-16s %,9.0f rows/s (%d pages of up to %,d, %.2f s)", consumer, n / s, pages, pageSize,
        s);
    return n / s;
  }

  /**
   * drain_152k_pages_1000_s: a consumer with images drains {@code drainEvents} changes through the Java API in pages
   * of 1,000 ({@code Feed.poll}, each event to JSON, {@code Feed.ack}); a quick run drains fewer and scales the time
   * to 152,000. Also writes the plan of one page's query (auto_explain) to the details.
   */
  Metric drain(FeedConsumers consumers, List<String> names) {
    explainPage(names.get(names.size() - 1));
    List<double[]> runs = new ArrayList<>();
    int events = run.sizes().drainEvents();
    double scale = 152_000.0 / events;
    double perPage = 0;
    List<double[]> cpu = new ArrayList<>();
    for (String name : names) {
      FeedConsumers.Consumption d = consumers.gnomon(run.feed(), run.c(), name, 1000, events);
      log.log("drain %s: %,d events in %d pages, %.1f s (%.0f ms per page; %s)", name, d.events(), d.pages(),
          d.seconds(), d.secondsPerPage() * 1e3, d.cpuPerEvent());
      cpu.add(new double[] {(d.serverCpuSeconds() + d.clientCpuSeconds()) * scale, Double.NaN});
      runs.add(new double[] {d.seconds() * scale, Double.NaN});
      perPage = d.secondsPerPage();
    }
    drainCpu = FeedRun.valueMetric("drain_152k_pages_1000_cpu_s", "CPU-s", cpu, null, "the drain above: CPU"
        + " seconds of its server process plus the consuming thread (what it would take on an idle machine, less"
        + " the round trips' latency)");
    return FeedRun.valueMetric("drain_152k_pages_1000_s", "s", runs, Target.valueAtMost(5.0),
        String.format(Locale.ROOT, "Java consumer, images and JSON, poll+ack pages of 1,000 in batches of %,d"
            + " (one tick per %,d versions); about %.0f ms per page%s", FeedSetup.TICK_EVERY, FeedSetup.TICK_EVERY,
            perPage * 1e3, scale == 1 ? "" : String.format(Locale.ROOT, "; quick: %,d events, scaled to 152,000",
                events)));
  }

  /** The plan of the query behind one page of 1,000 (the first page of {@code consumer}, which is not moved). */
  private void explainPage(String consumer) {
    try (Statement st = run.c().createStatement()) {
      st.execute("load 'auto_explain'");
      st.execute("set auto_explain.log_min_duration = 0");
      st.execute("set auto_explain.log_analyze = on");
      st.execute("set auto_explain.log_buffers = on");
      st.execute("set auto_explain.log_nested_statements = on");
      st.execute("set client_min_messages = log");
      st.clearWarnings();
      st.executeQuery("select count(*) from gnomon.feed_read(" + Db.literal(consumer) + ", 1000)").close();
      StringBuilder plans = new StringBuilder();
      for (SQLWarning w = st.getWarnings(); w != null; w = w.getNextWarning()) {
        for (String line : w.getMessage().split("\n")) {
          // the page's version lists are bound as arrays of up to 1,000 numbers: keep each line readable
          plans.append(line.length() > 400 ? line.substring(0, 400) + " …(" + line.length() + " characters)" : line)
              .append('\n');
        }
        plans.append('\n');
      }
      st.execute("reset client_min_messages");
      st.execute("set auto_explain.log_min_duration = -1");
      log.section("plans inside one gnomon.feed_read page of 1,000 with images (auto_explain, nested statements)",
          plans.toString());
    } catch (SQLException e) {
      log.log("no plan of a feed_read page: %s", e.getMessage());
    }
  }

  /**
   * tracked_update_with_feed_consumer_vs_without: pgbench single-row UPDATE tps (1 client) on the tracked table with
   * the ticker running, while a {@link FeedRunner} (default configuration: pages of 1,000, images, each event to
   * JSON, in this JVM on the same two cores) drains continuously, against the same without a consumer. Many short
   * pairs in alternating order, after one unmeasured run with a consumer (the JIT's compilations), a checkpoint and a
   * garbage collection before each run: the machine's other load drifts over tens of seconds. Each run logs the CPU
   * the whole cluster and this JVM used, per transaction: what the consumer costs, apart from the other load.
   */
  List<Metric> updateWithConsumer(ObjectMapper mapper) {
    return updateWithConsumer(mapper, "", "");
  }

  /**
   * The same with the C module enabled for both sides (its write trigger on the tracked table, and the consumer's
   * pages from its page reader): {@code tracked_update_with_feed_consumer_vs_without_c}.
   */
  List<Metric> updateWithConsumerC(ObjectMapper mapper) {
    return updateWithConsumer(mapper, "_c", "; the C module enabled on both sides (its write trigger; the consumer's"
        + " pages from gnomon.feed_page_c)");
  }

  /**
   * One pgbench run of {@link #updateTps}: its tps, and the server's CPU per write, the consumer's own backend left
   * out (what the cluster's processes, pgbench's backend, the ticker's and the background workers, spent per
   * transaction; NaN when /proc could not be read).
   */
  private record UpdateRun(double tps, double writersCpuUs) {}

  /**
   * Returns tracked_update_with_feed_consumer_vs_without (tps) and, from the same runs,
   * tracked_update_server_cpu_us_with_feed_consumer_vs_without: the cluster's CPU per transaction without the
   * consumer's backend, with a consumer against without. On two cores the consumer's backend and JVM take CPU time
   * that pgbench's client and backend would otherwise get, so the tps ratio moves with the scheduler; the CPU ratio
   * says whether a draining consumer makes each write cost the server more.
   */
  private List<Metric> updateWithConsumer(ObjectMapper mapper, String suffix, String note) {
    FeedRun.Sizes sizes = run.sizes();
    try (Gnomon gnomon = Gnomon.open(run.pg().dataSource(FeedSetup.DB))) {
      gnomon.startTicker();
      // one consumer for every run with a consumer, registered once: before each such run it is moved to the last
      // tick (the other side's writes are not its work), so each run measures a consumer keeping up with the writes.
      // A consumer registered afresh per run read its first batch, which its start coordinate cuts into, by a scan
      // per page (three to four times a kept-order page), and that was most of what the runs measured.
      String live = "live";
      run.feed().register(live, List.of(FeedSetup.TRACKED), FeedStart.now(), true);
      List<Double> cpuWith = new ArrayList<>();
      List<Double> cpuWithout = new ArrayList<>();
      DoubleSupplier with = () -> {
        UpdateRun u = updateTps(true, live, mapper);
        cpuWith.add(u.writersCpuUs());
        return u.tps();
      };
      DoubleSupplier without = () -> {
        UpdateRun u = updateTps(false, null, mapper);
        cpuWithout.add(u.writersCpuUs());
        return u.tps();
      };
      // one unmeasured run with a consumer first: the JIT compiles the runner's paths (and pgbench's table warms)
      // there, not in the first measured pair
      log.log("update 1c with a consumer, warm-up (not measured): %.0f tps", updateTps(true, live, mapper).tps());
      List<double[]> runs;
      try {
        runs = Paired.alternate(sizes.updatePairs(), with, without);
      } finally {
        run.feed().unregister(live);
      }
      String how = "pgbench -M prepared, 1 client, " + sizes.updatePairs() + " pairs of " + sizes.updateSeconds()
          + " s runs, single-row UPDATE of a random aid on the tracked table, ticker every 1 s on both sides;"
          + " with: a FeedRunner (defaults: pages of 1,000, idle 250 ms) with images, each event to JSON, in the"
          + " same JVM on the same two cores" + note;
      List<Metric> out = new ArrayList<>();
      out.add(Metric.paired("tracked_update_with_feed_consumer_vs_without" + suffix, "tps", runs, Target.atLeast(0.95),
          how));
      List<double[]> cpu = new ArrayList<>();
      for (int i = 0; i < Math.min(cpuWith.size(), cpuWithout.size()); i++) {
        if (!cpuWith.get(i).isNaN() && !cpuWithout.get(i).isNaN()) {
          cpu.add(new double[] {cpuWith.get(i), cpuWithout.get(i)});
        }
      }
      if (!cpu.isEmpty()) {
        out.add(Metric.paired("tracked_update_server_cpu_us_with_feed_consumer_vs_without" + suffix, "us", cpu,
            null, "the same runs: CPU of every process of the cluster (pgbench's backend, the ticker's,"
                + " the background workers, from /proc) per pgbench transaction, the consumer's own backend left out"));
      }
      return out;
    }
  }

  private UpdateRun updateTps(boolean withConsumer, String name, ObjectMapper mapper) {
    // the runner's feed on a data source that remembers its connection's backend, whose CPU is logged
    PidDataSource consumerSource = new PidDataSource(run.pg().dataSource(FeedSetup.DB));
    Feed consumerFeed = Feed.open(consumerSource);
    Db.exec(run.c(), "checkpoint");
    // the previous run's garbage is collected now, not during this run (on the same two cores as pgbench)
    System.gc();
    FeedRunner runner = null;
    AtomicLong bytes = new AtomicLong();
    if (withConsumer) {
      // caught up to the last tick, without reading what the previous runs wrote
      Db.exec(run.c(), "select gnomon.feed_ack('" + name + "', format('v1:%s:0:0', gnomon.tick()))");
      runner = consumerFeed.start(name, page -> {
        for (ChangeEvent e : page.events()) {
          bytes.addAndGet(mapper.writeValueAsBytes(e).length);
        }
      }, FeedRunnerConfig.defaults());
    }
    ClusterCpu cluster = ClusterCpu.of(run.pg());
    long server0 = cluster.serverMicros().orElse(-1);
    Map<Long, Long> procs0 = cluster.perProcessMicros();
    long jvm0 = ClusterCpu.jvmMicros();
    long t00 = System.nanoTime();
    try {
      Pgbench.Result r = run.pgbench().script(FeedSetup.DB, "feed_update", WriteMetrics.UPDATE_SCRIPT, 1,
          run.sizes().updateSeconds(), Map.of(), Map.of());
      // what the run cost the machine: the whole cluster (pgbench's backend, the ticker's, the consumer's) and this
      // JVM (the consumer's thread, the ticker, JIT and GC), per second of pgbench's run
      double wall = (System.nanoTime() - t00) / 1e9;
      long server1 = cluster.serverMicros().orElse(-1);
      // right after the cluster's total, so the consumer's backend is subtracted over the same interval
      Map<Long, Long> procs1 = cluster.perProcessMicros();
      long jvm1 = ClusterCpu.jvmMicros();
      double writersCpuUs = server0 < 0 || server1 < 0 ? Double.NaN
          : (server1 - server0) / (double) Math.max(1, r.transactions());
      log.log("  cpu during the run (%.1f s, load %.1f): cluster %.2f CPU-s, this JVM %.2f CPU-s; per transaction"
              + " %.0f us in the cluster, %.0f us in the JVM", wall, Machine.load(),
          server0 < 0 || server1 < 0 ? Double.NaN : (server1 - server0) / 1e6, (jvm1 - jvm0) / 1e6,
          server0 < 0 || server1 < 0 ? Double.NaN : (server1 - server0) / (double) Math.max(1, r.transactions()),
          (jvm1 - jvm0) / (double) Math.max(1, r.transactions()));
      if (runner != null) {
        long handled = runner.eventsHandled();
        // the consumer's own backend (its runner's connection)
        long pid = consumerSource.pid();
        long consumerCpu = procs1.getOrDefault(pid, -1L) - procs0.getOrDefault(pid, 0L);
        log.log("  the consumer's backend during the run: %.2f CPU-s, %.1f us per event handled (%,d events, %,d"
                + " pages)", consumerCpu / 1e6, consumerCpu / (double) Math.max(1, handled), handled,
            runner.pagesHandled());
        writersCpuUs = consumerCpu < 0 ? Double.NaN : writersCpuUs - consumerCpu / (double) Math.max(1, r.transactions());
        // after the measurement: how long the consumer takes to deliver the rest (a tick, then pages)
        long t0 = System.nanoTime();
        while (runner.eventsHandled() < r.transactions() && System.nanoTime() - t0 < 30_000_000_000L
            && runner.state() == FeedRunner.State.RUNNING) {
          sleep(50);
        }
        log.log("update 1c with a consumer    %9.0f tps; the consumer had handled %,d of the %,d versions when"
                + " pgbench stopped (%.0f%%, %,d pages) and the rest %.1f s later", r.tps(), handled,
            r.transactions(), 100.0 * handled / Math.max(1, r.transactions()), runner.pagesHandled(),
            (System.nanoTime() - t0) / 1e9);
      } else {
        log.log("update 1c without a consumer %9.0f tps", r.tps());
      }
      return new UpdateRun(r.tps(), writersCpuUs);
    } finally {
      if (runner != null) {
        runner.close();
        if (runner.failure().isPresent()) {
          Throwable failure = runner.failure().get();
          throw new IllegalStateException("the feed consumer failed: " + failure, failure);
        }
      }
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  /** EXPLAIN output of one statement with the run's start and end snapshots bound, into the details. */
  private void explain(String title, String sql) throws SQLException {
    StringBuilder plan = new StringBuilder();
    try (PreparedStatement ps = run.c().prepareStatement(sql)) {
      ps.setString(1, run.start());
      ps.setString(2, run.end());
      ps.setString(3, run.start());
      try (ResultSet rs = ps.executeQuery()) {
        while (rs.next()) {
          plan.append(rs.getString(1)).append('\n');
        }
      }
    }
    log.section(title, plan.toString());
  }
}
