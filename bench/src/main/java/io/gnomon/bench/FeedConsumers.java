package io.gnomon.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gnomon.feed.ChangeEvent;
import io.gnomon.feed.Feed;
import io.gnomon.feed.FeedPage;
import io.gnomon.feed.FeedPosition;
import java.lang.management.ManagementFactory;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The same consumption through three systems: read every change of the backlog in batches over one JDBC connection,
 * turn each into a Debezium-shaped JSON envelope ({@code before}, {@code after}, {@code op}, {@code source}, {@code
 * key}) written to bytes with Jackson, and acknowledge each batch. Each consumer starts from the system's native form:
 * Gnomon's {@link ChangeEvent} (key and row images as the JSON text {@code gnomon.feed_read} returns, copied into the
 * envelope unparsed), PgQ's urlencoded rows (decoded into trees), wal2json's JSON text (parsed, since its changes
 * are column arrays, not rows). Each checks that it read exactly the expected number of changes.
 */
final class FeedConsumers {
  private final ObjectMapper mapper;
  private final Connection fetch;

  /** Consumers writing JSON with {@code mapper}; Gnomon's read-ahead reads on {@code fetch}, a second connection. */
  FeedConsumers(ObjectMapper mapper, Connection fetch) {
    this.mapper = mapper;
    this.fetch = fetch;
  }

  /**
   * What one consumer run did.
   *
   * @param events changes read
   * @param pages batches (pages, calls) it took
   * @param jsonBytes bytes of JSON written
   * @param seconds wall-clock time of the whole run
   * @param jsonSeconds the part of it spent turning changes into JSON in Java (the rest: the database and JDBC)
   * @param serverCpuSeconds CPU time of the connection's server process during the run (NaN when unknown)
   * @param clientCpuSeconds CPU time of the consuming Java thread during the run
   */
  record Consumption(long events, long pages, long jsonBytes, double seconds, double jsonSeconds,
      double serverCpuSeconds, double clientCpuSeconds) {
    double rowsPerSecond() {
      return events / seconds;
    }

    /** Events per second of CPU, the server's and the consumer's together: less sensitive to the machine's load. */
    double rowsPerCpuSecond() {
      return events / (serverCpuSeconds + clientCpuSeconds);
    }

    /** CPU microseconds per event, server and client. */
    String cpuPerEvent() {
      return String.format(java.util.Locale.ROOT, "CPU %.1f us/event in the server + %.1f in Java",
          serverCpuSeconds * 1e6 / events, clientCpuSeconds * 1e6 / events);
    }

    double secondsPerPage() {
      return seconds / Math.max(1, pages);
    }
  }

  /**
   * Gnomon: {@link Feed#poll(Connection, String, int)} pages of {@code pageSize}, each event to JSON, {@link
   * Feed#ack(Connection, String, io.gnomon.feed.FeedPosition)}; stops after {@code events} events.
   */
  Consumption gnomon(Feed feed, Connection c, String consumer, int pageSize, long events) {
    long n = 0;
    long pages = 0;
    long bytes = 0;
    long json = 0;
    Cpu cpu = new Cpu(c);
    long t0 = System.nanoTime();
    try {
      while (n < events) {
        FeedPage page = feed.poll(c, consumer, (int) Math.min(pageSize, events - n));
        long j0 = System.nanoTime();
        for (ChangeEvent e : page.events()) {
          bytes += mapper.writeValueAsBytes(e).length;
        }
        json += System.nanoTime() - j0;
        n += page.size();
        pages++;
        if (page.advances()) {
          feed.ack(c, consumer, page.position());
        } else if (page.isEmpty()) {
          throw new IllegalStateException("Gnomon's feed for " + consumer + " ended after " + n + " of " + events
              + " events");
        }
      }
    } catch (JsonProcessingException e) {
      throw new IllegalStateException(e.getMessage(), e);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    return checked("Gnomon", n, events, new Consumption(n, pages, bytes, seconds, json / 1e9,
        cpu.serverSeconds(), cpu.clientSeconds()));
  }

  /**
   * Gnomon with read-ahead: a second thread reads the next page ({@link Feed#pollAfter(Connection, String,
   * io.gnomon.feed.FeedPosition, int)} on a connection of its own, after the last page read) while this one turns
   * the page in hand into JSON and acknowledges it ({@link Feed#ack(Connection, String,
   * io.gnomon.feed.FeedPosition)}, after it is handled, as above): the server and the JVM work at once. CPU: both
   * connections' server processes and both threads.
   */
  Consumption gnomonReadAhead(Feed feed, Connection c, String consumer, int pageSize, long events) {
    long n = 0;
    long pages = 0;
    long bytes = 0;
    long json = 0;
    AtomicLong fetchCpu = new AtomicLong();
    ExecutorService reader = Executors.newSingleThreadExecutor(r -> {
      Thread t = new Thread(r, "feed-read-ahead");
      t.setDaemon(true);
      return t;
    });
    Cpu cpu = new Cpu(c);
    BackendCpu fetchServer = new BackendCpu(fetch);
    long fetchServer0 = fetchServer.micros().orElse(-1);
    long t0 = System.nanoTime();
    try {
      FeedPosition from = feed.consumer(consumer).orElseThrow().position();
      Future<FeedPage> next = reader.submit(readAhead(feed, fetch, consumer, from, (int) Math.min(pageSize, events),
          fetchCpu));
      while (n < events) {
        FeedPage page = next.get();
        long after = n + page.size();
        next = after < events
            ? reader.submit(readAhead(feed, fetch, consumer, page.position(),
                (int) Math.min(pageSize, events - after), fetchCpu))
            : null;
        long j0 = System.nanoTime();
        for (ChangeEvent e : page.events()) {
          bytes += mapper.writeValueAsBytes(e).length;
        }
        json += System.nanoTime() - j0;
        n = after;
        pages++;
        if (page.advances()) {
          feed.ack(c, consumer, page.position());
        } else if (page.isEmpty()) {
          throw new IllegalStateException("Gnomon's feed for " + consumer + " ended after " + n + " of " + events
              + " events");
        }
      }
    } catch (JsonProcessingException | ExecutionException e) {
      throw new IllegalStateException(e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    } finally {
      reader.shutdownNow();
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    long fetchServerNow = fetchServer.micros().orElse(-1);
    double server = fetchServer0 < 0 || fetchServerNow < 0 ? Double.NaN
        : cpu.serverSeconds() + (fetchServerNow - fetchServer0) / 1e6;
    return checked("Gnomon (read-ahead)", n, events, new Consumption(n, pages, bytes, seconds, json / 1e9,
        server, cpu.clientSeconds() + fetchCpu.get() / 1e9));
  }

  private static Callable<FeedPage> readAhead(Feed feed, Connection fetch, String consumer, FeedPosition after,
      int maxEvents, AtomicLong cpuNanos) {
    return () -> {
      long c0 = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
      try {
        return feed.pollAfter(fetch, consumer, after, maxEvents);
      } finally {
        cpuNanos.addAndGet(ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - c0);
      }
    };
  }

  /**
   * PgQ: {@code pgq.next_batch}, {@code pgq.get_batch_events}, each event to JSON, {@code pgq.finish_batch}, commit;
   * one batch per tick, until {@code events} events.
   */
  Consumption pgq(Connection c, String consumer, long events) throws SQLException {
    long n = 0;
    long pages = 0;
    long bytes = 0;
    long json = 0;
    Cpu cpu = new Cpu(c);
    long t0 = System.nanoTime();
    c.setAutoCommit(false);
    try (PreparedStatement next = c.prepareStatement("select pgq.next_batch(?, ?)");
        PreparedStatement get = c.prepareStatement(
            "select ev_id, ev_time, ev_txid, ev_type, ev_data, ev_extra1, ev_extra2 from pgq.get_batch_events(?)");
        PreparedStatement finish = c.prepareStatement("select pgq.finish_batch(?)")) {
      next.setString(1, FeedSetup.QUEUE);
      next.setString(2, consumer);
      while (n < events) {
        long batch;
        try (ResultSet rs = next.executeQuery()) {
          rs.next();
          batch = rs.getLong(1);
          if (rs.wasNull()) {
            throw new IllegalStateException("PgQ consumer " + consumer + " ran out of batches after " + n + " of "
                + events + " events");
          }
        }
        get.setLong(1, batch);
        try (ResultSet rs = get.executeQuery()) {
          while (rs.next()) {
            long j0 = System.nanoTime();
            bytes += pgqEnvelope(rs).length;
            json += System.nanoTime() - j0;
            n++;
          }
        }
        finish.setLong(1, batch);
        finish.executeQuery().close();
        c.commit();
        pages++;
      }
    } finally {
      c.rollback();
      c.setAutoCommit(true);
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    return checked("PgQ", n, events, new Consumption(n, pages, bytes, seconds, json / 1e9,
        cpu.serverSeconds(), cpu.clientSeconds()));
  }

  /**
   * wal2json: {@code pg_logical_slot_get_changes(slot, NULL, batch, 'format-version', '2', …)} (which consumes what
   * it returns), each change to JSON, until {@code events} events.
   */
  Consumption wal2json(Connection c, String slot, int batch, long events) throws SQLException {
    long n = 0;
    long pages = 0;
    long bytes = 0;
    long json = 0;
    Cpu cpu = new Cpu(c);
    long t0 = System.nanoTime();
    try (PreparedStatement get = c.prepareStatement("select data from pg_logical_slot_get_changes(?, null, ?,"
        + " 'format-version', '2', 'include-xids', 'true', 'include-transaction', 'false',"
        + " 'add-tables', '" + FeedSetup.W2J_TABLE + "')")) {
      get.setString(1, slot);
      get.setInt(2, batch);
      while (n < events) {
        long before = n;
        try (ResultSet rs = get.executeQuery()) {
          while (rs.next()) {
            String data = rs.getString(1);
            long j0 = System.nanoTime();
            bytes += wal2jsonEnvelope(data).length;
            json += System.nanoTime() - j0;
            n++;
          }
        }
        pages++;
        if (n == before) {
          throw new IllegalStateException("wal2json slot " + slot + " ran dry after " + n + " of " + events
              + " events");
        }
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    return checked("wal2json", n, events, new Consumption(n, pages, bytes, seconds, json / 1e9,
        cpu.serverSeconds(), cpu.clientSeconds()));
  }

  /** CPU time of a connection's server process and of this thread, from when it was made. */
  private static final class Cpu {
    private final BackendCpu backend;
    private final long server0;
    private final long client0;

    Cpu(Connection c) {
      backend = new BackendCpu(c);
      server0 = backend.micros().orElse(-1);
      client0 = ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime();
    }

    double serverSeconds() {
      long now = backend.micros().orElse(-1);
      return server0 < 0 || now < 0 ? Double.NaN : (now - server0) / 1e6;
    }

    double clientSeconds() {
      return (ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime() - client0) / 1e9;
    }
  }

  private static Consumption checked(String who, long n, long expected, Consumption c) {
    if (n != expected) {
      throw new IllegalStateException(who + " delivered " + n + " changes, " + expected + " were written");
    }
    return c;
  }

  /** A PgQ event (logutriga with 'backup': new row in ev_data, old row in ev_extra2) as an envelope. */
  private byte[] pgqEnvelope(ResultSet rs) throws SQLException {
    String type = rs.getString(4); // "U:aid"
    int colon = type.indexOf(':');
    ObjectNode before = urlDecoded(rs.getString(7));
    ObjectNode after = urlDecoded(rs.getString(5));
    ObjectNode key = mapper.createObjectNode();
    ObjectNode keySource = after != null ? after : before;
    if (colon >= 0 && keySource != null) {
      for (String k : type.substring(colon + 1).split(",")) {
        key.set(k, keySource.get(k));
      }
    }
    char op = type.charAt(0);
    String table = rs.getString(6);
    int dot = table.indexOf('.');
    return envelope(op == 'I' ? null : before, op == 'D' ? null : after, op == 'I' ? "c" : op == 'U' ? "u" : "d",
        rs.getTimestamp(2).getTime(), "pgq", table.substring(0, dot), table.substring(dot + 1), rs.getLong(3),
        rs.getLong(1), key);
  }

  /** A wal2json format-version 2 change (columns: the new row; identity: the old row, FULL) as an envelope. */
  private byte[] wal2jsonEnvelope(String data) {
    try {
      JsonNode change = mapper.readTree(data);
      String action = change.get("action").asText();
      ObjectNode after = columns(change.get("columns"));
      ObjectNode before = columns(change.get("identity"));
      ObjectNode key = mapper.createObjectNode(); // wal2json names no key: the benchmark's table has one, aid
      key.set("aid", (after != null ? after : before).get("aid"));
      return envelope(before, after, action.equals("I") ? "c" : action.equals("U") ? "u" : "d",
          System.currentTimeMillis(), "wal2json", change.get("schema").asText(), change.get("table").asText(),
          change.get("xid").asLong(), 0, key);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("wal2json wrote JSON Jackson cannot read: " + e.getOriginalMessage(), e);
    }
  }

  private ObjectNode columns(JsonNode array) {
    if (array == null || array.isNull()) {
      return null;
    }
    ObjectNode row = mapper.createObjectNode();
    for (JsonNode column : array) {
      row.set(column.get("name").asText(), column.get("value"));
    }
    return row;
  }

  private ObjectNode urlDecoded(String text) {
    if (text == null) {
      return null;
    }
    ObjectNode row = mapper.createObjectNode();
    for (String pair : text.split("&")) {
      int eq = pair.indexOf('=');
      if (eq < 0) {
        row.putNull(URLDecoder.decode(pair, StandardCharsets.UTF_8));
      } else {
        row.put(URLDecoder.decode(pair.substring(0, eq), StandardCharsets.UTF_8),
            URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
      }
    }
    return row;
  }

  private byte[] envelope(ObjectNode before, ObjectNode after, String op, long tsMs, String connector, String schema,
      String table, long txId, long id, ObjectNode key) {
    ObjectNode e = mapper.createObjectNode();
    e.set("before", before);
    e.set("after", after);
    e.put("op", op);
    e.put("ts_ms", tsMs);
    ObjectNode source = e.putObject("source");
    source.put("connector", connector);
    source.put("schema", schema);
    source.put("table", table);
    source.put("txId", txId);
    source.put("id", id);
    e.set("key", key);
    try {
      return mapper.writeValueAsBytes(e);
    } catch (JsonProcessingException ex) {
      throw new IllegalStateException(ex.getMessage(), ex);
    }
  }
}
