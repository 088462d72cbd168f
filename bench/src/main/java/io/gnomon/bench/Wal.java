package io.gnomon.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.sql.Connection;
import java.util.List;
import java.util.Optional;

/** WAL positions and, when the data directory is local, {@code pg_waldump} breakdowns between them. */
final class Wal {
  /** Bytes of WAL between two positions, and the part of them that was full-page images. */
  record Span(String from, String to, long bytes, long fpiBytes, long records, String breakdown) {}

  private final Path bin;
  private final Optional<Path> dataDir;

  Wal(Path bin, Optional<Path> dataDir) {
    this.bin = bin;
    this.dataDir = dataDir;
  }

  static String insertLsn(Connection c) {
    return Db.text(c, "select pg_current_wal_insert_lsn()::text");
  }

  /** The WAL written from {@code from} to now, with a {@code pg_waldump --stats=record} breakdown if possible. */
  Span since(Connection c, String from) {
    String to = insertLsn(c);
    long bytes = (long) Db.number(c, "select pg_wal_lsn_diff('" + to + "', '" + from + "')");
    long fpi = -1;
    long records = -1;
    String breakdown = "";
    if (dataDir.isPresent()) {
      waitFlushed(c, to);
      breakdown = dump(from, to);
      for (String line : breakdown.split("\n")) {
        if (line.startsWith("Total")) {
          String[] t = line.trim().split("\\s+");
          // Total N recsize [pct] fpisize [pct] combined [pct]
          records = Long.parseLong(t[1]);
          fpi = Long.parseLong(t[4]);
        }
      }
    }
    return new Span(from, to, bytes, fpi, records, breakdown);
  }

  private static void waitFlushed(Connection c, String lsn) {
    Db.waitUntil(10_000, () -> Db.number(c, "select pg_wal_lsn_diff(pg_current_wal_flush_lsn(), '" + lsn + "')") >= 0);
  }

  private String dump(String from, String to) {
    List<String> cmd = List.of(bin.resolve("pg_waldump").toString(), "--stats=record", "-p",
        dataDir.get().resolve("pg_wal").toString(), "-s", from, "-e", to);
    try {
      Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      p.waitFor();
      return out;
    } catch (IOException e) {
      return "pg_waldump failed: " + e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted";
    }
  }
}
