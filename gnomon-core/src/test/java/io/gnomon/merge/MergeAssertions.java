package io.gnomon.merge;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** Merges in both directions and checks the answer. */
final class MergeAssertions {
  static final ObjectMapper JSON = new ObjectMapper();

  private MergeAssertions() {}

  static JsonNode json(String text) {
    try {
      return JSON.readTree(text.replace('\'', '"'));
    } catch (Exception e) {
      throw new IllegalArgumentException(text, e);
    }
  }

  /** merge(b,o,t) and merge(b,t,o) both resolve to {@code expected} (a symmetric strategy). */
  static void resolvesBothWays(Strategy s, ColumnType type, Object b, Object o, Object t, Object expected) {
    Column c = Column.of("c", type);
    assertResolved(expected, Merge.column(c, s, b, o, t), "merge(b, o, t)");
    assertResolved(expected, Merge.column(c, s, b, t, o), "merge(b, t, o)");
  }

  /** merge(b,o,t) resolves to {@code expected}, merge(b,t,o) to {@code mirrored} (union's order differs). */
  static void resolves(Strategy s, ColumnType type, Object b, Object o, Object t, Object expected, Object mirrored) {
    Column c = Column.of("c", type);
    assertResolved(expected, Merge.column(c, s, b, o, t), "merge(b, o, t)");
    assertResolved(mirrored, Merge.column(c, s, b, t, o), "merge(b, t, o)");
  }

  /** merge(b,o,t) and merge(b,t,o) are both conflicts; returns the first. */
  static Conflict conflictsBothWays(Strategy s, ColumnType type, Object b, Object o, Object t) {
    Column c = Column.of("c", type);
    Resolution r1 = Merge.column(c, s, b, o, t);
    Resolution r2 = Merge.column(c, s, b, t, o);
    Conflict c1 = assertInstanceOf(Conflict.class, r1, "merge(b, o, t) should conflict");
    Conflict c2 = assertInstanceOf(Conflict.class, r2, "merge(b, t, o) should conflict");
    assertEquals("c", c1.column());
    assertEquals(s.name(), c1.strategy());
    assertTrue(Merge.same(o, c1.ours()) && Merge.same(t, c1.theirs()) && Merge.same(b, c1.base()), c1.toString());
    assertTrue(Merge.same(t, c2.ours()) && Merge.same(o, c2.theirs()), c2.toString());
    return c1;
  }

  static void assertResolved(Object expected, Resolution r, String what) {
    Resolved resolved = assertInstanceOf(Resolved.class, r, () -> what + " should resolve, got " + r);
    assertTrue(Merge.same(expected, resolved.value()), () -> what + ": expected " + expected + ", got " + resolved.value());
  }
}
