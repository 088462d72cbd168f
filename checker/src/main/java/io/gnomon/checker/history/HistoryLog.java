package io.gnomon.checker.history;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The history file being written: one JSON line per {@link Op}, numbered in the order they are logged, kept in memory
 * too for the verifier. Logging an op only numbers it and keeps it; a thread of its own writes the file, so that a slow
 * disk (the kernel throttles writers when others fill the page cache) never holds up the sessions. Thread-safe. A
 * disabled log drops everything (the benchmark's "logging off" baseline).
 */
public final class HistoryLog implements AutoCloseable {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final BufferedWriter out;
  private final boolean enabled;
  private final long startNanos = System.nanoTime();
  private final List<Op> ops = new ArrayList<>();
  private final AtomicLong dropped = new AtomicLong();
  private final Thread writer;
  private volatile boolean closing;
  private volatile IOException failure;
  private int written;
  private long next = 1;

  private HistoryLog(BufferedWriter out, boolean enabled) {
    this.out = out;
    this.enabled = enabled;
    this.writer = enabled ? new Thread(this::writeLoop, "checker-history-writer") : null;
    if (writer != null) {
      writer.setDaemon(true);
      writer.start();
    }
  }

  /** Writes the ops logged since the last pass, every 100 ms, until the log is closed. */
  private void writeLoop() {
    while (true) {
      boolean last = closing;
      List<Op> batch;
      synchronized (this) {
        batch = List.copyOf(ops.subList(written, ops.size()));
        written = ops.size();
      }
      try {
        for (Op op : batch) {
          out.write(MAPPER.writeValueAsString(op));
          out.write('\n');
        }
        if (last) {
          out.close();
          return;
        }
      } catch (IOException e) {
        failure = e;
        return;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        closing = true;
      }
    }
  }

  /** A log written to {@code file} (created, or truncated). */
  public static HistoryLog to(Path file) {
    try {
      Files.createDirectories(file.toAbsolutePath().getParent());
      return new HistoryLog(Files.newBufferedWriter(file, StandardCharsets.UTF_8), true);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the history file " + file + ": " + e.getMessage(), e);
    }
  }

  /** A log that keeps nothing. */
  public static HistoryLog disabled() {
    return new HistoryLog(null, false);
  }

  /** Milliseconds since the log was opened: the time base of every op. */
  public long elapsedMillis() {
    return (System.nanoTime() - startNanos) / 1_000_000;
  }

  /** Numbers, stamps, keeps and writes one op; returns it. */
  public Op log(Op.Builder builder) {
    if (!enabled) {
      dropped.incrementAndGet();
      return null;
    }
    synchronized (this) {
      Op op = builder.build(next++, elapsedMillis());
      ops.add(op);
      return op;
    }
  }

  /** Every op logged so far, in order. */
  public synchronized List<Op> ops() {
    return List.copyOf(ops);
  }

  /** Ops logged (or, when disabled, dropped) so far. */
  public synchronized long count() {
    return enabled ? ops.size() : dropped.get();
  }

  /** Writes what is left and closes the file. */
  @Override
  public void close() {
    if (writer == null) {
      return;
    }
    closing = true;
    try {
      writer.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (failure != null) {
      throw new UncheckedIOException("cannot write the history file: " + failure.getMessage(), failure);
    }
  }

  /** Reads a history file back. */
  public static List<Op> read(Path file) {
    List<Op> ops = new ArrayList<>();
    try (var lines = Files.lines(file, StandardCharsets.UTF_8)) {
      for (String line : (Iterable<String>) lines::iterator) {
        if (!line.isBlank()) {
          ops.add(MAPPER.readValue(line, Op.class));
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the history file " + file + ": " + e.getMessage(), e);
    }
    return ops;
  }
}
