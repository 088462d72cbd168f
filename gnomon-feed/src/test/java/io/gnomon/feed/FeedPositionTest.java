package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.Coordinate;
import io.gnomon.InvalidPositionException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Positions and starts as values: text form, order, validation. */
class FeedPositionTest {

  @Test
  void roundTripsThroughItsTextForm() {
    long seed = System.nanoTime();
    Random random = new Random(seed);
    for (int i = 0; i < 1000; i++) {
      long tick = random.nextInt(3) == 0 ? 0 : Math.abs(random.nextLong() % 999_999_999_999_999_999L);
      long txn = random.nextBoolean() ? 0 : 1 + random.nextInt(Integer.MAX_VALUE);
      FeedPosition p = FeedPosition.of(tick, txn, txn == 0 ? 0 : 1 + random.nextInt((int) Math.min(txn, 1 << 30)));
      assertEquals(p, FeedPosition.parse(p.toString()), "seed " + seed);
    }
    assertEquals("v1:42:0:0", FeedPosition.afterTick(42).toString());
    assertEquals(FeedPosition.of(7, 19, 12), FeedPosition.parse("v1:7:19:12"));
  }

  @Test
  void ordersByTickThenTransactionThenVersion() {
    List<FeedPosition> sorted = List.of(FeedPosition.START, FeedPosition.of(0, 5, 3), FeedPosition.of(0, 5, 5),
        FeedPosition.of(0, 9, 1), FeedPosition.afterTick(1), FeedPosition.of(1, 2, 2), FeedPosition.afterTick(2));
    List<FeedPosition> shuffled = new ArrayList<>(sorted);
    Collections.shuffle(shuffled, new Random(1));
    Collections.sort(shuffled);
    assertEquals(sorted, shuffled);
    assertTrue(FeedPosition.afterTick(1).isAfter(FeedPosition.of(0, 9, 1)));
  }

  @Test
  void refusesWhatIsNotAPosition() {
    for (String bad : new String[] {null, "", "42", "v1:", "v1:1:2", "v0:1:0:0", "v1:1:0:0:0", "v1:+1:0:0",
        "v1:1e3:0:0", "v1:1:0:7", "v1:1:7:0", "v1:9999999999999999999:0:0", "v1:1:2:3:", "v1::1:1",
        "v1:1::1", "v1:1:2:", ":v1:1:2:3", "v1:1:2:3 "}) {
      InvalidPositionException e = assertThrows(InvalidPositionException.class, () -> FeedPosition.parse(bad));
      assertEquals("GN033", e.sqlState());
      assertTrue(e.getMessage().contains("malformed feed position"), e.getMessage());
    }
    assertThrows(IllegalArgumentException.class, () -> FeedPosition.of(-1, 0, 0));
  }

  @Test
  void aStartAtACoordinateCarriesIt() {
    Coordinate c = Coordinate.parse("v1:10:12:11");
    assertEquals("v1:10:12:11", FeedStart.at(c).sql());
    assertEquals("now", FeedStart.now().sql());
    assertEquals("now", FeedStart.backfill().sql());
    assertThrows(IllegalArgumentException.class, () -> new FeedStart(FeedStart.Kind.AT, null));
    assertThrows(IllegalArgumentException.class, () -> new FeedStart(FeedStart.Kind.NOW, c));
  }
}
