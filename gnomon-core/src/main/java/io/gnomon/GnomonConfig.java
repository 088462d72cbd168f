package io.gnomon;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Gnomon's configuration: one immutable value, built and validated by {@link Builder#build()}, which reports every
 * problem at once. {@link #KNOBS} lists every knob with its default and meaning (the docs table is tested against
 * it).
 *
 * @param dataSource where the tracked tables and the {@code gnomon} catalog live
 * @param tickInterval how often the ticker records a coordinate
 * @param maintainInterval how often the ticker runs {@code gnomon.maintain()}
 * @param checkCatalog whether {@link Gnomon#open(GnomonConfig)} checks the catalog version
 */
public record GnomonConfig(DataSource dataSource, Duration tickInterval, Duration maintainInterval, boolean checkCatalog) {

  /** Every knob: name → "default — meaning". */
  public static final Map<String, String> KNOBS =
      Map.of(
          "dataSource", "(required) — the database holding the tracked tables and the gnomon catalog",
          "tickInterval", "1s — how often the ticker records a coordinate (the resolution of reads as of a time)",
          "maintainInterval", "60s — how often the ticker runs gnomon.maintain() (history partitions ahead)",
          "checkCatalog", "true — refuse to open against a catalog of another version");

  /** A builder with every default set. */
  public static Builder builder() {
    return new Builder();
  }

  /** A configuration with defaults for everything but the data source. */
  public static GnomonConfig of(DataSource dataSource) {
    return builder().dataSource(dataSource).build();
  }

  /** Builds a {@link GnomonConfig}. */
  public static final class Builder {
    private DataSource dataSource;
    private Duration tickInterval = Duration.ofSeconds(1);
    private Duration maintainInterval = Duration.ofSeconds(60);
    private boolean checkCatalog = true;

    private Builder() {}

    /** The database; required. */
    public Builder dataSource(DataSource dataSource) {
      this.dataSource = dataSource;
      return this;
    }

    /** How often the ticker records a coordinate; between 10 ms and 1 hour. */
    public Builder tickInterval(Duration tickInterval) {
      this.tickInterval = tickInterval;
      return this;
    }

    /** How often the ticker runs {@code gnomon.maintain()}; at least the tick interval. */
    public Builder maintainInterval(Duration maintainInterval) {
      this.maintainInterval = maintainInterval;
      return this;
    }

    /** Whether to check the catalog version when opening. */
    public Builder checkCatalog(boolean checkCatalog) {
      this.checkCatalog = checkCatalog;
      return this;
    }

    /**
     * Validates every field and builds the configuration.
     *
     * @throws InvalidArgumentException listing every problem found
     */
    public GnomonConfig build() {
      List<String> problems = new ArrayList<>();
      if (dataSource == null) {
        problems.add("dataSource is required: pass the DataSource of the database to version");
      }
      if (tickInterval == null
          || tickInterval.compareTo(Duration.ofMillis(10)) < 0
          || tickInterval.compareTo(Duration.ofHours(1)) > 0) {
        problems.add("tickInterval must be between 10ms and 1h, got " + tickInterval);
      }
      if (maintainInterval == null || (tickInterval != null && maintainInterval.compareTo(tickInterval) < 0)) {
        problems.add("maintainInterval must be at least tickInterval, got " + maintainInterval);
      }
      if (!problems.isEmpty()) {
        throw new InvalidArgumentException("invalid Gnomon configuration:\n  - " + String.join("\n  - ", problems), null);
      }
      return new GnomonConfig(dataSource, tickInterval, maintainInterval, checkCatalog);
    }
  }
}
