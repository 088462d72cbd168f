package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class GnomonConfigTest {

  @Test
  void everyProblemIsReportedAtOnce() {
    InvalidArgumentException e =
        assertThrows(
            InvalidArgumentException.class,
            () -> GnomonConfig.builder().tickInterval(Duration.ofMillis(1)).maintainInterval(Duration.ZERO).build());
    assertTrue(e.getMessage().contains("dataSource"), e.getMessage());
    assertTrue(e.getMessage().contains("tickInterval"), e.getMessage());
    assertTrue(e.getMessage().contains("maintainInterval"), e.getMessage());
  }

  @Test
  void theKnobListNamesEveryField() {
    Set<String> fields =
        Arrays.stream(GnomonConfig.class.getRecordComponents()).map(RecordComponent::getName).collect(Collectors.toSet());
    assertEquals(fields, GnomonConfig.KNOBS.keySet());
  }
}
