package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class CoordinateTest {

  @Test
  void textFormRoundTrips() {
    long seed = Seeds.seed("CoordinateTest");
    qt().withFixedSeed(seed)
        .forAll(longs().between(1, Long.MAX_VALUE / 4), integers().between(0, 50), longs().all())
        .checkAssert(
            (xmin, span, salt) -> {
              Coordinate c = random(xmin, span, new Random(salt));
              assertEquals(c, Coordinate.parse(c.toString()));
            });
  }

  @Test
  void visibilityFollowsSnapshotRules() {
    Coordinate c = Coordinate.parse("v1:100:105:100,103");
    assertTrue(c.sees(99));
    assertFalse(c.sees(100));
    assertTrue(c.sees(101));
    assertTrue(c.sees(102));
    assertFalse(c.sees(103));
    assertTrue(c.sees(104));
    assertFalse(c.sees(105));
    assertEquals("v1:100:105:100,103", c.toString());
    assertEquals("v1:7:7:", Coordinate.parse("v1:7:7:").toString());
    assertEquals(0, c.incarnation());
  }

  @Test
  void theCurrentFormCarriesTheIncarnation() {
    Coordinate c = Coordinate.parse("v2:1796130898995571:100:105:100,103");
    assertEquals(1796130898995571L, c.incarnation());
    assertEquals(Coordinate.of(100, 105, List.of(100L, 103L)), Coordinate.of(0, 100, 105, List.of(100L, 103L)));
    assertEquals(List.of(100L, 103L), c.inProgress());
    assertEquals("v2:1796130898995571:100:105:100,103", c.toString());
    assertFalse(c.equals(Coordinate.parse("v1:100:105:100,103")), "another incarnation is another coordinate");
  }

  @Test
  void malformedTextIsRefusedWithTheTextAndWhatToDo() {
    for (String bad : List.of("", "v1:", "v0:1:2:", "v1:1:2", "v1:a:2:", "v1:5:3:", "v1:1:5:7", "v1:1:5:3,2", "v1:1:5:,",
        "v2:1:2:", "v2:0:1:2:", "v2:x:1:2:", "v2:-5:1:2:", "v2:7:1:5:7", "v1:+1:2:", "v2:1:1:2:3:")) {
      MalformedCoordinateException e = assertThrows(MalformedCoordinateException.class, () -> Coordinate.parse(bad), bad);
      assertEquals("GN010", e.sqlState());
      assertTrue(e.getMessage().contains("gnomon.coordinate()"), e.getMessage());
    }
    assertThrows(MalformedCoordinateException.class, () -> Coordinate.parse(null));
  }

  private static Coordinate random(long xmin, int span, Random rnd) {
    long xmax = xmin + span;
    List<Long> xip = new ArrayList<>();
    for (long x = xmin; x < xmax; x++) {
      if (rnd.nextInt(3) == 0) {
        xip.add(x);
      }
    }
    return rnd.nextBoolean() ? Coordinate.of(xmin, xmax, xip) : Coordinate.of(1 + rnd.nextLong(Long.MAX_VALUE - 1), xmin, xmax, xip);
  }
}
