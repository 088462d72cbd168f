package io.gnomon.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.gnomon.Coordinate;
import io.gnomon.feed.Feed;
import io.gnomon.feed.FeedStart;
import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgCluster;
import io.gnomon.testkit.PostgresProvider;
import java.io.PrintStream;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.function.IntFunction;
import java.util.stream.IntStream;

/**
 * The feed group: Gnomon's change feed against PgQ and logical decoding with wal2json, on the same writes in one run.
 * Every consumer is registered (every PgQ consumer and replication slot created) before the writes it reads, so each
 * repeat reads the whole backlog afresh. See {@link FeedSetup} for the writes and {@link FeedConsumers} for the
 * consumption; the peers come from Debian ({@code bench/scripts/install-feed-peers.sh}, run by {@code bench/run.sh}),
 * and a peer that cannot be had is reported as null with the reason.
 */
final class FeedGroup {
  /** Events per Gnomon page and per wal2json call in the side-by-side consumption: one tick's batch, as in PgQ. */
  static final int PAGE = FeedSetup.TICK_EVERY;
  /**
   * The consumers of the side-by-side rotation, by number: the SQL page, PgQ, wal2json, the SQL page reading ahead,
   * the C page reader, the C page reader reading ahead.
   */
  private static final String[] SYSTEMS = {"Gnomon", "PgQ", "wal2json", "Gnomon-RA", "Gnomon-C", "Gnomon-C-RA"};

  private FeedGroup() {}

  /** Logical decoding needs {@code wal_level = logical}; the rest is every group's cluster. */
  static ClusterOptions options() {
    return BenchCluster.options().toBuilder().walLevel("logical").set("max_replication_slots", "16")
        .set("max_wal_senders", "4").build();
  }

  static List<Metric> run(Budget budget, Path outDir, PrintStream out) {
    Details log = new Details(out);
    FeedRun.Sizes sizes = FeedRun.Sizes.of(budget);
    try (PgCluster pg = PostgresProvider.startCluster(options())) {
      Machine.describe().forEach(line -> log.log("%s", line));
      Pgbench pgbench = new Pgbench(pg, BenchCluster.binaries(), outDir.resolve("scripts"));
      FeedSetup.load(pg, pgbench, log);
      try (Connection c = pg.connect(FeedSetup.DB)) {
        log.log("server: %s; %s", Db.text(c, "select version()"), String.join(", ", Db.lines(c,
            "select name || '=' || current_setting(name) from pg_settings where name in ('fsync',"
                + " 'synchronous_commit', 'shared_buffers', 'work_mem', 'wal_level', 'jit', 'max_wal_size')"
                + " order by name")));
        log.log("peers: %s", Optional.ofNullable(System.getenv("GNOMON_BENCH_FEED_PEERS"))
            .map(s -> s.replace('\n', ';')).orElse("not checked (not started by bench/run.sh)"));
        return measure(pg, budget, sizes, log, pgbench, c);
      } catch (SQLException e) {
        throw new IllegalStateException(e.getMessage(), e);
      } finally {
        log.writeTo(outDir.resolve("feed.txt"));
      }
    }
  }

  private static List<Metric> measure(PgCluster pg, Budget budget, FeedRun.Sizes sizes, Details log, Pgbench pgbench,
      Connection c) throws SQLException {
    int repeats = sizes.repeats();
    Feed feed = Feed.open(pg.dataSource(FeedSetup.DB));
    ObjectMapper mapper = feed.mapper();
    // every consumer starts at one coordinate taken before any write
    String start = Db.text(c, "select pg_current_snapshot()::text");
    FeedStart at = FeedStart.at(Coordinate.parse("v1:" + start));
    List<String> table = List.of(FeedSetup.TRACKED);
    IntFunction<List<String>> names = n -> IntStream.range(0, n).mapToObj(i -> "c" + i).toList();
    List<String> readers = prefixed("images_", names.apply(repeats));
    List<String> aheadReaders = prefixed("images_ahead_", names.apply(repeats));
    List<String> cReaders = prefixed("images_c_", names.apply(repeats));
    List<String> cAheadReaders = prefixed("images_c_ahead_", names.apply(repeats));
    List<String> drainers = prefixed("drain_", names.apply(sizes.drainRepeats() + 1)); // + 1 for the plan
    for (String name : readers) {
      feed.register(name, table, at, true);
    }
    for (String name : aheadReaders) {
      feed.register(name, table, at, true);
    }
    for (String name : cReaders) {
      feed.register(name, table, at, true);
    }
    for (String name : cAheadReaders) {
      feed.register(name, table, at, true);
    }
    for (String name : drainers) {
      feed.register(name, table, at, true);
    }
    List<String> sqlNoImages = prefixed("sql_no_images_", names.apply(Math.min(3, repeats)));
    List<String> sqlImages = prefixed("sql_images_", names.apply(Math.min(3, repeats)));
    for (String name : sqlNoImages) {
      feed.register(name, table, at, false);
    }
    for (String name : sqlImages) {
      feed.register(name, table, at, true);
    }
    List<String> pgqConsumers = prefixed("pgq_", names.apply(repeats));
    List<String> slots = prefixed("w2j_", names.apply(repeats));
    Optional<String> noPgq = FeedSetup.installPgq(c, pgqConsumers);

    // the same writes, one system after the other
    double gnomonWrite = FeedSetup.write(c, FeedSetup.TRACKED, sizes.versions(), "select gnomon.tick()");
    log.log("wrote %,d versions to %s in %.1f s (gnomon.tick() every %,d)", sizes.versions(), FeedSetup.TRACKED,
        gnomonWrite, FeedSetup.TICK_EVERY);
    double pgqWrite = Double.NaN;
    if (noPgq.isEmpty()) {
      pgqWrite = FeedSetup.write(c, FeedSetup.PGQ_TABLE, sizes.versions(), "select pgq.ticker()");
      log.log("wrote %,d versions to %s in %.1f s (pgq.ticker() every %,d)", sizes.versions(), FeedSetup.PGQ_TABLE,
          pgqWrite, FeedSetup.TICK_EVERY);
    } else {
      log.log("PgQ not measured: %s", noPgq.get());
    }
    Optional<String> noW2j = FeedSetup.createSlots(c, slots);
    double w2jWrite = Double.NaN;
    if (noW2j.isEmpty()) {
      w2jWrite = FeedSetup.write(c, FeedSetup.W2J_TABLE, sizes.versions(), null);
      log.log("wrote %,d versions to %s in %.1f s (%d wal2json slots)", sizes.versions(), FeedSetup.W2J_TABLE,
          w2jWrite, slots.size());
    } else {
      log.log("wal2json not measured: %s", noW2j.get());
    }
    String end = Db.text(c, "select snapshot::text from gnomon.tick order by tick_id desc limit 1");
    log.log("backlog: %,d versions per system in %d batches; start %s, last tick %s", sizes.versions(),
        sizes.batches(), start, end);
    Db.exec(c, "vacuum analyze");
    FeedSetup.flushWal(c);

    FeedRun run = new FeedRun(pg, budget, sizes, log, pgbench, feed, c, start, end);
    log.log("load average before the reads: %.2f", Machine.load());
    FeedMetrics gnomon = new FeedMetrics(run);
    // the read-ahead consumer's second connection, opened once and warmed like the first (a page read ahead of a
    // consumer moves nothing)
    Connection fetch = pg.dataSource(FeedSetup.DB).getConnection();
    feed.pollAfter(fetch, aheadReaders.get(0), feed.consumer(aheadReaders.get(0)).orElseThrow().position(), 100);
    FeedConsumers consumers = new FeedConsumers(mapper, fetch);
    List<Metric> changeset = gnomon.changeset();
    List<Metric> sqlPages = gnomon.sqlPages(sqlNoImages, sqlImages, PAGE);

    // the C module's page reader (gnomon.feed_page_c) for one consumer of the rotation, chosen per page by the
    // session's gnomon.feed_page_c; enabled only for the reads (its write trigger would change the writes' rows)
    Optional<String> noC = useCModule(c, true);
    log.log(noC.map(m -> "the C page reader is not measured: " + m)
        .orElse("the C module is enabled for the reads (" + CWriteMetrics.library() + ")"));
    Db.exec(fetch, "set gnomon.feed_page_c = off");
    // side by side, rotating which system goes first
    List<double[]> g = new ArrayList<>();
    List<double[]> vsPgq = new ArrayList<>();
    List<double[]> vsW2j = new ArrayList<>();
    List<double[]> gCpu = new ArrayList<>();
    List<double[]> vsPgqCpu = new ArrayList<>();
    List<double[]> vsW2jCpu = new ArrayList<>();
    List<double[]> gAhead = new ArrayList<>();
    List<double[]> gAheadCpu = new ArrayList<>();
    List<double[]> gC = new ArrayList<>();
    List<double[]> gCCpu = new ArrayList<>();
    List<double[]> gCAhead = new ArrayList<>();
    List<double[]> gCAheadCpu = new ArrayList<>();
    for (int r = 0; r < repeats; r++) {
      double[] rate = new double[SYSTEMS.length];
      double[] cpuRate = new double[SYSTEMS.length];
      for (int k = 0; k < SYSTEMS.length; k++) {
        int system = (r + k) % SYSTEMS.length;
        if ((system == 4 || system == 5) && noC.isPresent()) {
          rate[system] = Double.NaN;
          cpuRate[system] = Double.NaN;
          continue;
        }
        String cPage = system == 4 || system == 5 ? "on" : "off";
        Db.exec(run.c(), "set gnomon.feed_page_c = " + cPage);
        Db.exec(fetch, "set gnomon.feed_page_c = " + cPage);
        FeedConsumers.Consumption d = consume(system, r, run, consumers, readers, aheadReaders, cReaders,
            cAheadReaders, pgqConsumers, slots, noPgq.isEmpty(), noW2j.isEmpty());
        rate[system] = d == null ? Double.NaN : d.rowsPerSecond();
        cpuRate[system] = d == null ? Double.NaN : d.rowsPerCpuSecond();
      }
      g.add(new double[] {rate[0], Double.NaN});
      vsPgq.add(new double[] {rate[0], rate[1]});
      vsW2j.add(new double[] {rate[0], rate[2]});
      gCpu.add(new double[] {cpuRate[0], Double.NaN});
      vsPgqCpu.add(new double[] {cpuRate[0], cpuRate[1]});
      vsW2jCpu.add(new double[] {cpuRate[0], cpuRate[2]});
      gAhead.add(new double[] {rate[3], Double.NaN});
      gAheadCpu.add(new double[] {cpuRate[3], Double.NaN});
      gC.add(new double[] {rate[4], rate[0]});
      gCCpu.add(new double[] {cpuRate[4], cpuRate[0]});
      gCAhead.add(new double[] {rate[5], rate[4]});
      gCAheadCpu.add(new double[] {cpuRate[5], cpuRate[4]});
    }
    Db.exec(run.c(), "reset gnomon.feed_page_c");
    if (noC.isEmpty()) {
      useCModule(c, false);
    }
    fetch.close();
    if (noW2j.isEmpty()) {
      FeedSetup.dropSlots(c, slots);
    }
    log.log("load average after the side-by-side consumption: %.2f", Machine.load());
    Metric drain = gnomon.drain(consumers, drainers.subList(0, sizes.drainRepeats()));
    List<Metric> update = gnomon.updateWithConsumer(mapper);
    List<Metric> updateC = null;
    if (useCModule(c, true).isEmpty()) {
      try {
        updateC = gnomon.updateWithConsumerC(mapper);
      } finally {
        useCModule(c, false);
      }
    }
    log.log("load average at the end: %.2f", Machine.load());

    String consumption = String.format(Locale.ROOT, "the same %,d changes, batches of %,d (one tick), each change"
        + " to a JSON envelope with old and new rows, one JDBC connection", sizes.versions(), PAGE);
    List<Metric> rows = new ArrayList<>();
    rows.add(changeset.get(0));
    rows.add(FeedRun.valueMetric("feed_images_rows_per_s", "rows/s", g,
        new Target(Target.Kind.AT_LEAST, 250_000, true), "Java consumer (Feed.poll + Feed.ack, pages of "
            + String.format(Locale.ROOT, "%,d", PAGE) + "), old and new images, each event to JSON bytes"));
    rows.add(drain);
    rows.add(noPgq.isEmpty() ? Metric.paired("feed_vs_pgq", "rows/s", vsPgq, null, "Gnomon vs PgQ 3 (logutriga"
        + " with backup; next_batch, get_batch_events, finish_batch): " + consumption)
        : FeedRun.unavailable("feed_vs_pgq", "rows/s", noPgq.get()));
    rows.add(noW2j.isEmpty() ? Metric.paired("feed_vs_wal2json", "rows/s", vsW2j, null, "Gnomon vs wal2json 2"
        + " (format-version 2, REPLICA IDENTITY FULL, pg_logical_slot_get_changes up to " + PAGE + " changes): "
        + consumption) : FeedRun.unavailable("feed_vs_wal2json", "rows/s", noW2j.get()));
    rows.addAll(update);
    if (updateC != null) {
      rows.addAll(updateC);
    }
    // the same consumption per CPU-second (the server's process and the consuming thread): on a machine shared with
    // other work, what each system costs, less the waiting for a CPU
    rows.add(FeedRun.valueMetric("feed_images_rows_per_cpu_s", "rows/CPU-s", gCpu, null, "the Java consumer above:"
        + " events per CPU-second of its server process plus its thread"));
    if (noPgq.isEmpty()) {
      rows.add(Metric.paired("feed_vs_pgq_cpu", "rows/CPU-s", vsPgqCpu, null, "as feed_vs_pgq, per CPU-second of"
          + " the server process plus the consuming thread"));
    }
    if (noW2j.isEmpty()) {
      rows.add(Metric.paired("feed_vs_wal2json_cpu", "rows/CPU-s", vsW2jCpu, null, "as feed_vs_wal2json, per"
          + " CPU-second of the server process (the walsender-less SQL decoding runs in it) plus the consuming"
          + " thread"));
    }
    rows.add(gnomon.drainCpu);
    rows.add(FeedRun.valueMetric("feed_images_read_ahead_rows_per_s", "rows/s", gAhead, null, "the same"
        + " consumption reading ahead: Feed.pollAfter of the next page on a second connection while this one's events"
        + " go to JSON bytes and are acknowledged (Feed.ack)"));
    rows.add(FeedRun.valueMetric("feed_images_read_ahead_rows_per_cpu_s", "rows/CPU-s", gAheadCpu, null,
        "as above, per CPU-second of both server processes plus both threads"));
    if (noC.isEmpty()) {
      rows.add(FeedRun.valueMetric("feed_images_c_rows_per_s", "rows/s", gC.stream()
              .map(p -> new double[] {p[0], Double.NaN}).toList(), null, "the Java consumer above, its pages read"
              + " by the C module's page reader (gnomon.feed_page_c) instead of the SQL page"));
      rows.add(Metric.paired("feed_images_c_vs_sql", "rows/s", gC, null, "the Java consumer, C page reader vs SQL"
          + " page, same repeat"));
      rows.add(Metric.paired("feed_images_c_vs_sql_cpu", "rows/CPU-s", gCCpu, null, "as feed_images_c_vs_sql, per"
          + " CPU-second of the server process plus the consuming thread"));
      rows.add(FeedRun.valueMetric("feed_images_c_read_ahead_rows_per_s", "rows/s", gCAhead.stream()
              .map(p -> new double[] {p[0], Double.NaN}).toList(), null, "the C page reader's consumer reading"
              + " ahead (as feed_images_read_ahead: Feed.pollAfter of the next page on a second connection while this"
              + " one's events go to JSON bytes and are acknowledged)"));
      rows.add(Metric.paired("feed_images_c_read_ahead_vs_c", "rows/s", gCAhead, null, "the C page reader's"
          + " consumer, reading ahead vs not, same repeat"));
      rows.add(Metric.paired("feed_images_c_read_ahead_vs_c_cpu", "rows/CPU-s", gCAheadCpu, null, "as"
          + " feed_images_c_read_ahead_vs_c, per CPU-second of both server processes plus both threads"));
    } else {
      rows.add(FeedRun.unavailable("feed_images_c_rows_per_s", "rows/s", noC.get()));
    }
    // the evidence behind them
    rows.addAll(changeset.subList(1, changeset.size()));
    rows.addAll(sqlPages);
    if (noPgq.isEmpty()) {
      rows.add(Metric.single("write_tracked_vs_pgq_s", gnomonWrite, "s", pgqWrite, null, "the writes: "
          + sizes.versions() + " single-row UPDATEs in transactions of " + FeedSetup.PER_TXN
          + ", server-side procedure, with the capture's ticker; Gnomon's trigger vs PgQ's logutriga"));
    }
    if (noW2j.isEmpty()) {
      rows.add(Metric.single("write_tracked_vs_logical_s", gnomonWrite, "s", w2jWrite, null, "the same writes:"
          + " Gnomon's trigger vs an untracked table with REPLICA IDENTITY FULL (what logical decoding costs a"
          + " write)"));
    }
    return rows;
  }

  private static FeedConsumers.Consumption consume(int system, int r, FeedRun run, FeedConsumers consumers,
      List<String> readers, List<String> aheadReaders, List<String> cReaders, List<String> cAheadReaders,
      List<String> pgqConsumers,
      List<String> slots, boolean pgq, boolean w2j) throws SQLException {
    long events = run.sizes().versions();
    FeedConsumers.Consumption d;
    switch (system) {
      case 0:
        d = consumers.gnomon(run.feed(), run.c(), readers.get(r), PAGE, events);
        break;
      case 4:
        d = consumers.gnomon(run.feed(), run.c(), cReaders.get(r), PAGE, events);
        break;
      case 3:
        d = consumers.gnomonReadAhead(run.feed(), run.c(), aheadReaders.get(r), PAGE, events);
        break;
      case 5:
        d = consumers.gnomonReadAhead(run.feed(), run.c(), cAheadReaders.get(r), PAGE, events);
        break;
      case 1:
        if (!pgq) {
          return null;
        }
        d = consumers.pgq(run.c(), pgqConsumers.get(r), events);
        break;
      default:
        if (!w2j) {
          return null;
        }
        d = consumers.wal2json(run.c(), slots.get(r), PAGE, events);
    }
    run.log().log("consume %-9s repeat %d: %,9.0f rows/s (%,d events, %d batches, %.2f s of which %.2f s to JSON in"
            + " Java; %.0f JSON bytes per event; %s)",
        SYSTEMS[system], r,
        d.rowsPerSecond(), d.events(), d.pages(), d.seconds(), d.jsonSeconds(), (double) d.jsonBytes() / d.events(),
        d.cpuPerEvent());
    return d;
  }

  /** Enables (or disables) the C module in the bench's database; empty when done, else why it could not be. */
  private static Optional<String> useCModule(Connection c, boolean enable) {
    try {
      Db.exec(c, enable ? "select gnomon.use_c_module(true, '" + CWriteMetrics.library().replace("'", "''") + "')"
          : "select gnomon.use_c_module(false)");
      return Optional.empty();
    } catch (IllegalStateException e) {
      return Optional.of(e.getMessage());
    }
  }

  private static List<String> prefixed(String prefix, List<String> names) {
    return names.stream().map(n -> prefix + n).toList();
  }
}
