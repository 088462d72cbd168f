package io.gnomon.feed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.InvalidArgumentException;
import io.gnomon.feed.internal.Retry;
import java.lang.reflect.RecordComponent;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/** The runner's configuration and its retry rules, without a database. */
class FeedRunnerConfigTest {

  @Test
  void knobsListEveryComponentWithItsDefault() {
    Set<String> components = Arrays.stream(FeedRunnerConfig.class.getRecordComponents())
        .map(RecordComponent::getName).collect(Collectors.toSet());
    assertEquals(components, FeedRunnerConfig.KNOBS.keySet());
    FeedRunnerConfig d = FeedRunnerConfig.defaults();
    assertEquals("1000", FeedRunnerConfig.KNOBS.get("pageSize").split(" — ")[0]);
    assertEquals(1000, d.pageSize());
    assertEquals(Duration.ofMillis(250), d.idleInterval());
    assertEquals(Duration.ofMillis(100), d.initialBackoff());
    assertEquals(Duration.ofSeconds(5), d.maxBackoff());
    assertEquals(20, d.maxRetries());
    assertEquals(d, d.toBuilder().build());
  }

  @Test
  void theKnobTableOfDocsFeedMdListsEveryKnobWithItsDefault() throws Exception {
    String all = java.nio.file.Files.readString(java.nio.file.Path.of("..", "docs", "feed.md"));
    int table = all.indexOf("| knob | default | meaning |");
    assertTrue(table >= 0, "docs/feed.md has no knob table");
    String doc = all.substring(table, all.indexOf("\n## ", table));
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?m)^\\| `(\\w+)` \\| ([^|]+) \\| ([^|]+) \\|$").matcher(doc);
    java.util.Map<String, String> documented = new java.util.TreeMap<>();
    while (m.find()) {
      documented.put(m.group(1), m.group(2).strip() + " — " + m.group(3).strip());
    }
    assertEquals(new java.util.TreeMap<>(FeedRunnerConfig.KNOBS), documented,
        "the knob table of docs/feed.md against FeedRunnerConfig.KNOBS");
  }

  @Test
  void buildReportsEveryProblemAtOnce() {
    InvalidArgumentException e = assertThrows(InvalidArgumentException.class, () -> FeedRunnerConfig.builder()
        .pageSize(0).idleInterval(null).initialBackoff(Duration.ofSeconds(10)).maxBackoff(Duration.ofSeconds(1))
        .maxRetries(-1).build());
    for (String knob : new String[] {"pageSize", "idleInterval", "initialBackoff", "maxRetries"}) {
      assertTrue(e.getMessage().contains(knob), e.getMessage());
    }
  }

  @Test
  void backoffDoublesUpToTheMaximumWithJitter() {
    Duration initial = Duration.ofMillis(100);
    Duration max = Duration.ofSeconds(2);
    for (int attempt = 1; attempt < 12; attempt++) {
      long ceiling = Math.min(100L << (attempt - 1), 2000);
      for (int i = 0; i < 50; i++) {
        long ms = Retry.backoff(attempt, initial, max).toMillis();
        assertTrue(ms >= ceiling / 2 - 1 && ms <= ceiling, "attempt " + attempt + ": " + ms + " ms");
      }
    }
  }

  @Test
  void retriesLostConnectionsAndTransientConflictsOnly() {
    assertTrue(Retry.retryable(new SQLException("gone", "08006")));
    assertTrue(Retry.retryable(new SQLException("shutting down", "57P01")));
    assertTrue(Retry.retryable(new SQLException("crash", "57P02")));
    assertTrue(Retry.retryable(new SQLException("deadlock", "40P01")));
    assertTrue(Retry.retryable(new RuntimeException(new SQLException("serialization", "40001"))));
    assertTrue(Retry.retryable(new PositionConflictException("c", FeedPosition.START, FeedPosition.afterTick(1))));
    assertTrue(!Retry.retryable(new SQLException("syntax", "42601")));
    assertTrue(!Retry.retryable(new IllegalStateException("bug")));
    assertTrue(!Retry.retryable(new io.gnomon.ConsumerNotFoundException("gone", null)));
  }
}
