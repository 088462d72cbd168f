package io.gnomon.merge;

import static io.gnomon.merge.MergeAssertions.assertResolved;
import static io.gnomon.merge.MergeAssertions.conflictsBothWays;
import static io.gnomon.merge.MergeAssertions.resolvesBothWays;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.math.BigDecimal;
import org.junit.jupiter.api.Test;

/** fail, ours, theirs, counter, max, min and custom, with hand-picked cases in both directions. */
class ScalarStrategiesTest {
  private static final ColumnType I4 = ColumnType.int4();

  @Test
  void perColumnRuleComesBeforeAnyStrategy() {
    for (String name : Strategies.NAMES) {
      Strategy s = Strategies.byName(name).orElseThrow();
      Column c = Column.of("c", ColumnType.text());
      assertResolved("b", Merge.column(c, s, "b", "b", "b"), name + " identity");
      assertResolved("x", Merge.column(c, s, "b", "x", "b"), name + " ours only");
      assertResolved("y", Merge.column(c, s, "b", "b", "y"), name + " theirs only");
      assertResolved("x", Merge.column(c, s, "b", "x", "x"), name + " same change");
      assertResolved(null, Merge.column(c, s, "b", null, "b"), name + " set to NULL on one side");
    }
    // numbers are the same by value, as in SQL
    assertResolved(new BigDecimal("2.00"), Merge.column(Column.of("n", ColumnType.numeric()), Strategies.fail(),
        new BigDecimal("1.0"), new BigDecimal("1.00"), new BigDecimal("2.00")), "1.0 = 1.00");
  }

  @Test
  void failOursTheirs() {
    Conflict c = conflictsBothWays(Strategies.fail(), I4, 1L, 2L, 3L);
    assertTrue(c.reason().contains("strategy is fail"), c.reason());
    Column col = Column.of("c", I4);
    assertResolved(2L, Merge.column(col, Strategies.ours(), 1L, 2L, 3L), "ours");
    assertResolved(3L, Merge.column(col, Strategies.ours(), 1L, 3L, 2L), "ours, mirrored");
    assertResolved(3L, Merge.column(col, Strategies.theirs(), 1L, 2L, 3L), "theirs");
    assertResolved(2L, Merge.column(col, Strategies.theirs(), 1L, 3L, 2L), "theirs, mirrored");
  }

  @Test
  void counterAddsBothDeltas() {
    resolvesBothWays(Strategies.counter(), I4, 10L, 13L, 5L, 8L);
    resolvesBothWays(Strategies.counter(), ColumnType.int8(), -7L, 0L, 100L, 107L);
    resolvesBothWays(Strategies.counter(), I4, null, 2L, 3L, 5L); // a NULL base counts as 0
    resolvesBothWays(Strategies.counter(), ColumnType.numeric(10, 2), new BigDecimal("100.00"),
        new BigDecimal("70.50"), new BigDecimal("125.25"), new BigDecimal("95.75"));
    resolvesBothWays(Strategies.counter(), ColumnType.numeric(), new BigDecimal("0.1"), new BigDecimal("0.3"),
        new BigDecimal("1e40"), new BigDecimal("1e40").add(new BigDecimal("0.2")));
    // Integer and Short inputs are accepted; the result is a Long
    resolvesBothWays(Strategies.counter(), ColumnType.int2(), (short) 1, 2, 3L, 4L);
  }

  @Test
  void counterOverflowIsAConflictNeverAWrap() {
    Conflict c = conflictsBothWays(Strategies.counter(), ColumnType.int2(), 32_000L, 32_700L, 32_100L);
    assertTrue(c.reason().contains("32800") && c.reason().contains("int2"), c.reason());
    conflictsBothWays(Strategies.counter(), ColumnType.int2(), 0L, -32_768L, -1L);
    resolvesBothWays(Strategies.counter(), ColumnType.int2(), 0L, 32_767L, 0L, 32_767L);
    resolvesBothWays(Strategies.counter(), ColumnType.int2(), 1L, 32_767L, 0L, 32_766L);
    conflictsBothWays(Strategies.counter(), I4, 0L, (long) Integer.MAX_VALUE, 1L);
    resolvesBothWays(Strategies.counter(), I4, 2L, (long) Integer.MAX_VALUE, 1L, (long) Integer.MAX_VALUE - 1);
    conflictsBothWays(Strategies.counter(), ColumnType.int8(), 0L, Long.MAX_VALUE, 1L);
    conflictsBothWays(Strategies.counter(), ColumnType.int8(), 0L, Long.MIN_VALUE, -1L);
    conflictsBothWays(Strategies.counter(), ColumnType.int8(), Long.MIN_VALUE, Long.MAX_VALUE, 0L);
    // the intermediate ours + theirs overflows a long, the result does not
    resolvesBothWays(Strategies.counter(), ColumnType.int8(), Long.MAX_VALUE - 1, Long.MAX_VALUE, Long.MAX_VALUE - 2,
        Long.MAX_VALUE - 1);
    // found by the fuzzer: theirs − base overflows a long, the result does not
    resolvesBothWays(Strategies.counter(), ColumnType.int8(), -3L, -1L, Long.MAX_VALUE - 2, Long.MAX_VALUE);
    resolvesBothWays(Strategies.counter(), ColumnType.int8(), 4L, 1L, Long.MIN_VALUE + 3, Long.MIN_VALUE);
    conflictsBothWays(Strategies.counter(), ColumnType.numeric(5, 2), new BigDecimal("500.00"),
        new BigDecimal("999.00"), new BigDecimal("600.00"));
    resolvesBothWays(Strategies.counter(), ColumnType.numeric(5, 2), new BigDecimal("500.00"),
        new BigDecimal("999.99"), new BigDecimal("-400.00"), new BigDecimal("99.99"));
    Conflict sides = conflictsBothWays(Strategies.counter(), I4, 1L, null, 2L);
    assertTrue(sides.reason().contains("NULL"), sides.reason());
  }

  @Test
  void maxAndMin() {
    resolvesBothWays(Strategies.max(), I4, 5L, 3L, 9L, 9L);
    resolvesBothWays(Strategies.min(), I4, 5L, 3L, 9L, 3L);
    resolvesBothWays(Strategies.max(), ColumnType.numeric(), BigDecimal.ONE, new BigDecimal("2.5"),
        new BigDecimal("-3"), new BigDecimal("2.5"));
    resolvesBothWays(Strategies.max(), ColumnType.text(), "b", "apple", "cherry", "cherry");
    resolvesBothWays(Strategies.min(), ColumnType.text(), "b", "apple", "cherry", "apple");
    resolvesBothWays(Strategies.max(), I4, 5L, null, 9L, 9L); // NULL loses, as in greatest()
    resolvesBothWays(Strategies.min(), I4, 5L, null, 9L, 9L);
    assertFalse(Strategies.max().supports(ColumnType.json()));
    assertFalse(Strategies.counter().supports(ColumnType.text()));
  }

  @Test
  void textComparesByCodePointsLikeCollateC() {
    // U+1F600 (a surrogate pair in UTF-16) is beyond U+FFFD: code point order, as PostgreSQL's "C" collation orders
    // UTF-8, says larger; String.compareTo (UTF-16 code units) would say smaller
    String emoji = "\uD83D\uDE00";
    String replacement = "\uFFFD";
    resolvesBothWays(Strategies.max(), ColumnType.text(), "a", emoji, replacement, emoji);
    resolvesBothWays(Strategies.min(), ColumnType.text(), "a", emoji, replacement, replacement);
    resolvesBothWays(Strategies.max(), ColumnType.text(), "a", "\u00E9", "z", "\u00E9");
    resolvesBothWays(Strategies.max(), ColumnType.text(), "", "ab", "a", "ab");
    resolvesBothWays(Strategies.min(), ColumnType.text(), "x", "\uD83D\uDE01", "\uD83D\uDE00", "\uD83D\uDE00");
  }

  @Test
  void customFunction() {
    Strategy longest = Strategies.custom("longest", (column, b, o, t) ->
        ((String) o).length() == ((String) t).length()
            ? new Conflict(column.name(), b, o, t, "longest", "same length")
            : Resolution.resolved(((String) o).length() > ((String) t).length() ? o : t));
    resolvesBothWays(longest, ColumnType.text(), "a", "bb", "ccc", "ccc");
    Conflict c = conflictsBothWays(longest, ColumnType.text(), "a", "bb", "cc");
    assertEquals("same length", c.reason());
    Strategy broken = Strategies.custom("broken", (column, b, o, t) -> null);
    IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
        () -> Merge.column(Column.of("c", I4), broken, 1L, 2L, 3L));
    assertTrue(e.getMessage().contains("broken"), e.getMessage());
  }

  @Test
  void columnTypes() {
    assertEquals("numeric(10,2)", ColumnType.numeric(10, 2).toString());
    assertEquals("text[]", ColumnType.arrayOf(ColumnType.text()).toString());
    assertEquals(-32_768, ColumnType.int2().minValue());
    org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> ColumnType.numeric(2, 3));
    org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
        () -> ColumnType.arrayOf(ColumnType.json()));
  }

  /** The example of docs/java-api.md, section Merges, with what it prints. */
  @Test
  void javaApiExample() {
    Column balance = Column.of("balance", ColumnType.int4());
    Resolution r = Merge.column(balance, Strategies.counter(), 100L, 70L, 125L);
    assertEquals("Resolved[value=95]", r.toString());
    Resolution overflow = Merge.column(Column.of("n", ColumnType.int2()), Strategies.counter(), 32000L, 32700L, 32100L);
    assertTrue(overflow.isConflict());
  }
}
