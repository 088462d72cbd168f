package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class OperationTest {
  @Test
  void everyCodeFindsItsOperationAndNothingElseDoes() {
    for (Operation o : Operation.values()) {
      assertEquals(o, Operation.of(o.code()));
    }
    for (String bad : new String[] {null, "", "x", "U", "uu", "é", "\u0000"}) {
      assertThrows(IllegalArgumentException.class, () -> Operation.of(bad), String.valueOf(bad));
    }
  }
}
