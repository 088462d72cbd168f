package io.gnomon.checker.history;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The history file: what is logged is written, numbered, and reads back the same. */
class HistoryLogTest {

  @Test
  void opsReadBackAsTheyWereLogged(@TempDir Path dir) {
    Path file = dir.resolve("history.jsonl");
    HistoryLog log = HistoryLog.to(file);
    for (int i = 0; i < 1000; i++) {
      log.log(Op.of("read").session(1, i, "rr").table(2).read("v1:10:12:11", 3, 5)
          .rows(List.of(new long[] {3, 7003}, new long[] {5, -6})).outcome("ok"));
    }
    log.log(Op.of("fault").fault("kill", "start", "#1 SIGKILL").outcome("ok"));
    log.close();
    List<Op> back = HistoryLog.read(file);
    assertEquals(log.ops().size(), back.size());
    for (int i = 0; i < back.size(); i++) {
      Op a = log.ops().get(i);
      Op b = back.get(i);
      assertEquals(i + 1, b.id());
      assertEquals(a.coord(), b.coord());
      assertEquals(a.phase(), b.phase());
      if (a.rows() != null) {
        assertArrayEquals(a.rows().get(0), b.rows().get(0));
      }
    }
  }
}
