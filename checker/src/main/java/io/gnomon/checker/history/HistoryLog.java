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
 * too for the verifier. Thread-safe. A disabled log drops everything (the benchmark's "logging off" baseline).
 */
public final class HistoryLog implements AutoCloseable {
  private static final ObjectMapper MAPPER = new ObjectMapper();

  private final BufferedWriter out;
  private final boolean enabled;
  private final long startNanos = System.nanoTime();
  private final List<Op> ops = new ArrayList<>();
  private final AtomicLong dropped = new AtomicLong();
  private long next = 1;

  private HistoryLog(BufferedWriter out, boolean enabled) {
    this.out = out;
    this.enabled = enabled;
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
      try {
        out.write(MAPPER.writeValueAsString(op));
        out.write('\n');
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write the history file: " + e.getMessage(), e);
      }
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

  @Override
  public synchronized void close() {
    if (out != null) {
      try {
        out.close();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot close the history file: " + e.getMessage(), e);
      }
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
