package io.gnomon.feed;

import io.gnomon.InvalidArgumentException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * How a {@link FeedRunner} runs: one immutable value, built and validated by {@link Builder#build()}, which reports
 * every problem at once. {@link #KNOBS} lists every knob with its default and meaning.
 *
 * @param pageSize the most events per page
 * @param idleInterval how long to wait after a page without events before polling again
 * @param initialBackoff the wait before the first retry of a retryable failure; doubled at each further retry
 * @param maxBackoff the longest wait between retries
 * @param maxRetries how many retryable failures in a row the runner retries before it gives up (0: none)
 */
public record FeedRunnerConfig(
    int pageSize, Duration idleInterval, Duration initialBackoff, Duration maxBackoff, int maxRetries) {

  /** Every knob: name → "default — meaning". */
  public static final Map<String, String> KNOBS =
      Map.of(
          "pageSize", "1000 — the most events per page; a transaction larger than a page is split across pages",
          "idleInterval", "250ms — how long to wait after a page without events before polling again",
          "initialBackoff", "100ms — the wait before the first retry of a retryable failure, doubled at each retry",
          "maxBackoff", "5s — the longest wait between two retries",
          "maxRetries", "20 — retryable failures in a row before the runner gives up and stops (0: never retry)");

  /** The defaults of {@link #KNOBS}. */
  public static FeedRunnerConfig defaults() {
    return builder().build();
  }

  /** A builder with every default set. */
  public static Builder builder() {
    return new Builder();
  }

  /** A builder starting from this configuration. */
  public Builder toBuilder() {
    return new Builder()
        .pageSize(pageSize)
        .idleInterval(idleInterval)
        .initialBackoff(initialBackoff)
        .maxBackoff(maxBackoff)
        .maxRetries(maxRetries);
  }

  /** Builds a {@link FeedRunnerConfig}. */
  public static final class Builder {
    private int pageSize = 1000;
    private Duration idleInterval = Duration.ofMillis(250);
    private Duration initialBackoff = Duration.ofMillis(100);
    private Duration maxBackoff = Duration.ofSeconds(5);
    private int maxRetries = 20;

    private Builder() {}

    /** The most events per page, 1 to 1,000,000. */
    public Builder pageSize(int pageSize) {
      this.pageSize = pageSize;
      return this;
    }

    /** How long to wait after a page without events, 1 ms to 1 hour. */
    public Builder idleInterval(Duration idleInterval) {
      this.idleInterval = idleInterval;
      return this;
    }

    /** The wait before the first retry, 1 ms to {@code maxBackoff}. */
    public Builder initialBackoff(Duration initialBackoff) {
      this.initialBackoff = initialBackoff;
      return this;
    }

    /** The longest wait between retries, at most 1 hour. */
    public Builder maxBackoff(Duration maxBackoff) {
      this.maxBackoff = maxBackoff;
      return this;
    }

    /** Retryable failures in a row before giving up; 0 or more. */
    public Builder maxRetries(int maxRetries) {
      this.maxRetries = maxRetries;
      return this;
    }

    /**
     * Validates every field and builds the configuration.
     *
     * @throws InvalidArgumentException listing every problem found
     */
    public FeedRunnerConfig build() {
      List<String> problems = new ArrayList<>();
      if (pageSize < 1 || pageSize > 1_000_000) {
        problems.add("pageSize must be between 1 and 1000000, got " + pageSize);
      }
      if (!between(idleInterval, Duration.ofMillis(1), Duration.ofHours(1))) {
        problems.add("idleInterval must be between 1ms and 1h, got " + idleInterval);
      }
      if (!between(maxBackoff, Duration.ofMillis(1), Duration.ofHours(1))) {
        problems.add("maxBackoff must be between 1ms and 1h, got " + maxBackoff);
      }
      if (!between(initialBackoff, Duration.ofMillis(1), maxBackoff == null ? Duration.ofHours(1) : maxBackoff)) {
        problems.add("initialBackoff must be between 1ms and maxBackoff, got " + initialBackoff);
      }
      if (maxRetries < 0) {
        problems.add("maxRetries must be 0 or more, got " + maxRetries);
      }
      if (!problems.isEmpty()) {
        throw new InvalidArgumentException(
            "invalid feed runner configuration:\n  - " + String.join("\n  - ", problems), null);
      }
      return new FeedRunnerConfig(pageSize, idleInterval, initialBackoff, maxBackoff, maxRetries);
    }

    private static boolean between(Duration d, Duration min, Duration max) {
      return d != null && d.compareTo(min) >= 0 && d.compareTo(max) <= 0;
    }
  }
}
