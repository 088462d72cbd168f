package io.gnomon.testkit;

import io.gnomon.testkit.internal.SettingRules;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * How a throwaway cluster is configured: PostgreSQL parameters written to its configuration file
 * before the first start, and how long to wait for it to accept connections.
 *
 * <p>Parameters not given keep PostgreSQL's defaults. Servers the testkit does not start (an
 * existing server named by {@code GNOMON_JDBC_URL}) keep their own configuration. Build with
 * {@link #builder()}; construction validates every field and reports every problem at once in one
 * {@link IllegalArgumentException}:
 *
 * <pre>{@code
 * ClusterOptions options = ClusterOptions.builder()
 *     .fsync(false)
 *     .synchronousCommit("remote_apply")
 *     .set("work_mem", "16MB")
 *     .build();
 * }</pre>
 *
 * <p>Typed shortcuts exist for the parameters tests tune most; {@link Builder#set(String, String)}
 * takes any other. Known parameters are type-checked (booleans, integers with ranges, memory sizes,
 * enumerations); {@code port}, {@code listen_addresses}, {@code unix_socket_directories}, {@code
 * cluster_name} and the file locations are managed by the testkit and rejected.
 *
 * @param settings parameter names (lower-case) to values, sorted by name; unmodifiable
 * @param startupTimeout how long {@code start()} waits for the server to accept connections
 */
public record ClusterOptions(Map<String, String> settings, Duration startupTimeout) {

  /** Default of {@link #startupTimeout()}: 60 seconds, enough for a loaded CI machine. */
  public static final Duration DEFAULT_STARTUP_TIMEOUT = Duration.ofSeconds(60);

  /**
   * Validates and normalises the options.
   *
   * @param settings parameter names to values; names are lower-cased
   * @param startupTimeout a positive duration
   * @throws IllegalArgumentException listing every problem found
   */
  public ClusterOptions {
    List<String> problems = new ArrayList<>();
    Map<String, String> normalised = new TreeMap<>();
    if (settings == null) {
      problems.add("settings must not be null");
    } else {
      for (Map.Entry<String, String> e : settings.entrySet()) {
        if (e.getKey() == null) {
          problems.add("a setting has a null name");
          continue;
        }
        String name = e.getKey().trim().toLowerCase(Locale.ROOT);
        if (normalised.containsKey(name)) {
          problems.add(name + " is given twice (parameter names are case-insensitive)");
        }
        normalised.put(name, e.getValue());
      }
      problems.addAll(SettingRules.validate(normalised));
    }
    if (startupTimeout == null || startupTimeout.isNegative() || startupTimeout.isZero()) {
      problems.add("startupTimeout must be positive, was " + startupTimeout);
    }
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException(
          "Invalid cluster options:\n  - " + String.join("\n  - ", problems));
    }
    settings = Collections.unmodifiableMap(normalised);
  }

  /**
   * Returns options that change nothing: PostgreSQL's defaults and the default startup timeout.
   *
   * @return the default options
   */
  public static ClusterOptions defaults() {
    return builder().build();
  }

  /**
   * Returns the options of the JVM-wide shared test cluster ({@link TestDatabases#shared()}):
   * {@code fsync=off}, {@code synchronous_commit=off}, {@code max_connections=100}, {@code
   * shared_buffers=128MB}, {@code max_prepared_transactions=10} (two-phase commit), {@code
   * wal_level=replica}, {@code max_wal_senders=5}, and {@code lock_timeout=3min}, so that a test
   * whose own connections block each other on a lock fails with {@code 55P03} instead of hanging
   * (JUnit's timeouts do not interrupt a blocked socket read; tests that wait for a lock on purpose
   * wait seconds). Everything else, including {@code full_page_writes}, keeps PostgreSQL's
   * defaults. Commits are therefore not durable across
   * {@code crash()}: tests of crash recovery should start their own cluster.
   *
   * @return options for fast, disposable test clusters
   */
  public static ClusterOptions forTests() {
    return builder()
        .fsync(false)
        .synchronousCommit("off")
        .maxConnections(100)
        .sharedBuffers("128MB")
        .maxPreparedTransactions(10)
        .walLevel("replica")
        .maxWalSenders(5)
        .set("lock_timeout", "3min")
        .build();
  }

  /**
   * Returns an empty builder: PostgreSQL's defaults and a 60-second startup timeout.
   *
   * @return a new builder
   */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns a builder preloaded with these options, for deriving variants.
   *
   * @return a new builder
   */
  public Builder toBuilder() {
    Builder b = new Builder();
    b.settings.putAll(settings);
    b.startupTimeout = startupTimeout;
    return b;
  }

  /**
   * Returns the value given for a parameter.
   *
   * @param name the parameter name, in any case
   * @return the value, or empty when PostgreSQL's default applies
   */
  public Optional<String> setting(String name) {
    return Optional.ofNullable(settings.get(name.toLowerCase(Locale.ROOT)));
  }

  /**
   * Collects options; {@link #build()} validates them. Not thread-safe. Later calls for the same
   * parameter replace earlier ones.
   */
  public static final class Builder {
    private final Map<String, String> settings = new LinkedHashMap<>();
    private Duration startupTimeout = DEFAULT_STARTUP_TIMEOUT;

    private Builder() {}

    /**
     * Sets any PostgreSQL parameter, as it would appear in {@code postgresql.conf}.
     *
     * @param name the parameter name, such as {@code work_mem}
     * @param value the value, unquoted, such as {@code 16MB}
     * @return this builder
     */
    public Builder set(String name, String value) {
      settings.put(name == null ? null : name.toLowerCase(Locale.ROOT), value);
      return this;
    }

    /**
     * Removes a parameter so PostgreSQL's default applies.
     *
     * @param name the parameter name
     * @return this builder
     */
    public Builder remove(String name) {
      settings.remove(name.toLowerCase(Locale.ROOT));
      return this;
    }

    /**
     * Sets {@code fsync}: whether PostgreSQL forces writes to disk (default on). Off makes tests
     * faster and loses nothing when only PostgreSQL (not the machine) crashes.
     *
     * @param on the value
     * @return this builder
     */
    public Builder fsync(boolean on) {
      return set("fsync", on ? "on" : "off");
    }

    /**
     * Sets {@code full_page_writes} (default on).
     *
     * @param on the value
     * @return this builder
     */
    public Builder fullPageWrites(boolean on) {
      return set("full_page_writes", on ? "on" : "off");
    }

    /**
     * Sets {@code synchronous_commit}: {@code on} (default), {@code off}, {@code local}, {@code
     * remote_write} or {@code remote_apply}. With {@code off}, commits acknowledged just before a
     * {@code crash()} may be lost; with {@code remote_apply} and a synchronous standby, a committed
     * row is visible on the standby when the commit returns.
     *
     * @param level the value
     * @return this builder
     */
    public Builder synchronousCommit(String level) {
      return set("synchronous_commit", level);
    }

    /**
     * Sets {@code shared_buffers}, a memory size such as {@code 128MB} (PostgreSQL's default).
     *
     * @param size the value
     * @return this builder
     */
    public Builder sharedBuffers(String size) {
      return set("shared_buffers", size);
    }

    /**
     * Sets {@code max_wal_size}, a memory size such as {@code 1GB} (PostgreSQL's default).
     *
     * @param size the value
     * @return this builder
     */
    public Builder maxWalSize(String size) {
      return set("max_wal_size", size);
    }

    /**
     * Sets {@code wal_level}: {@code minimal}, {@code replica} (default; needed for standbys) or
     * {@code logical} (needed for logical decoding).
     *
     * @param level the value
     * @return this builder
     */
    public Builder walLevel(String level) {
      return set("wal_level", level);
    }

    /**
     * Sets {@code max_wal_senders} (default 10); a standby needs two while it is created.
     *
     * @param count the value, at least 0
     * @return this builder
     */
    public Builder maxWalSenders(int count) {
      return set("max_wal_senders", Integer.toString(count));
    }

    /**
     * Sets {@code max_connections} (default 100).
     *
     * @param count the value, at least 1
     * @return this builder
     */
    public Builder maxConnections(int count) {
      return set("max_connections", Integer.toString(count));
    }

    /**
     * Sets {@code max_prepared_transactions} (default 0, which disables two-phase commit).
     *
     * @param count the value, at least 0
     * @return this builder
     */
    public Builder maxPreparedTransactions(int count) {
      return set("max_prepared_transactions", Integer.toString(count));
    }

    /**
     * Sets {@code synchronous_standby_names} (default empty). {@code startStandby(true)} manages
     * this parameter itself and overrides the value given here.
     *
     * @param names the value, such as {@code FIRST 1 (s1, s2)}
     * @return this builder
     */
    public Builder synchronousStandbyNames(String names) {
      return set("synchronous_standby_names", names);
    }

    /**
     * Sets how long starting the cluster may take before it fails with the server log's tail
     * (default {@link #DEFAULT_STARTUP_TIMEOUT}). Also bounds standby creation and promotion.
     *
     * @param timeout a positive duration
     * @return this builder
     */
    public Builder startupTimeout(Duration timeout) {
      this.startupTimeout = timeout;
      return this;
    }

    /**
     * Validates everything and returns the options.
     *
     * @return the immutable options
     * @throws IllegalArgumentException listing every problem found
     */
    public ClusterOptions build() {
      return new ClusterOptions(new LinkedHashMap<>(settings), startupTimeout);
    }
  }
}
