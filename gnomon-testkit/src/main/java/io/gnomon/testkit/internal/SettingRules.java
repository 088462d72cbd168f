package io.gnomon.testkit.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Validation of PostgreSQL configuration parameters given to a throwaway cluster: the name's shape,
 * typed checks for the parameters the testkit knows, and parameters it manages itself.
 */
public final class SettingRules {

  private static final Pattern NAME =
      Pattern.compile("[a-z_][a-z0-9_]*(\\.[a-z_][a-z0-9_$]*)?");
  private static final Pattern MEMORY = Pattern.compile("[0-9]+\\s*(B|kB|MB|GB|TB)?");
  private static final Set<String> BOOLEANS =
      Set.of("on", "off", "true", "false", "yes", "no", "1", "0");

  /** Parameters the testkit sets on the command line of every cluster; users cannot set them. */
  static final Set<String> MANAGED =
      Set.of(
          "port",
          "listen_addresses",
          "unix_socket_directories",
          "data_directory",
          "config_file",
          "hba_file",
          "ident_file",
          "external_pid_file",
          "cluster_name");

  private enum Kind {
    BOOL,
    INT,
    MEMORY,
    ENUM,
    TEXT
  }

  private record Rule(Kind kind, long min, long max, Set<String> values) {
    static Rule bool() {
      return new Rule(Kind.BOOL, 0, 0, Set.of());
    }

    static Rule integer(long min, long max) {
      return new Rule(Kind.INT, min, max, Set.of());
    }

    static Rule memory() {
      return new Rule(Kind.MEMORY, 0, 0, Set.of());
    }

    static Rule oneOf(String... values) {
      return new Rule(Kind.ENUM, 0, 0, Set.of(values));
    }

    static Rule text() {
      return new Rule(Kind.TEXT, 0, 0, Set.of());
    }
  }

  private static final long MAX_BACKENDS = 262_143;

  private static final Map<String, Rule> KNOWN =
      Map.ofEntries(
          Map.entry("fsync", Rule.bool()),
          Map.entry(
              "synchronous_commit",
              Rule.oneOf("on", "off", "local", "remote_write", "remote_apply")),
          Map.entry("full_page_writes", Rule.bool()),
          Map.entry("shared_buffers", Rule.memory()),
          Map.entry("max_wal_size", Rule.memory()),
          Map.entry("min_wal_size", Rule.memory()),
          Map.entry("wal_keep_size", Rule.memory()),
          Map.entry("work_mem", Rule.memory()),
          Map.entry("maintenance_work_mem", Rule.memory()),
          Map.entry("wal_level", Rule.oneOf("minimal", "replica", "logical")),
          Map.entry("max_wal_senders", Rule.integer(0, MAX_BACKENDS)),
          Map.entry("max_replication_slots", Rule.integer(0, MAX_BACKENDS)),
          Map.entry("max_connections", Rule.integer(1, MAX_BACKENDS)),
          Map.entry("max_prepared_transactions", Rule.integer(0, MAX_BACKENDS)),
          Map.entry("max_locks_per_transaction", Rule.integer(10, Integer.MAX_VALUE)),
          Map.entry("synchronous_standby_names", Rule.text()),
          Map.entry("hot_standby", Rule.bool()),
          Map.entry("shared_preload_libraries", Rule.text()));

  private SettingRules() {}

  /**
   * Checks every setting and returns every problem found, in a stable order.
   *
   * @param settings parameter names (already lower-case) and values
   * @return human-readable problems; empty when all settings are acceptable
   */
  public static List<String> validate(Map<String, String> settings) {
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, String> e : settings.entrySet()) {
      String name = e.getKey();
      String value = e.getValue();
      if (name == null || !NAME.matcher(name).matches()) {
        problems.add(
            "setting name '" + name + "' is not a PostgreSQL parameter name (letters, digits, _)");
        continue;
      }
      if (MANAGED.contains(name)) {
        problems.add(name + " is managed by the testkit and cannot be set");
        continue;
      }
      if (value == null) {
        problems.add(name + " has no value");
        continue;
      }
      if (value.chars().anyMatch(ch -> ch == '\n' || ch == '\r' || ch == 0)) {
        problems.add(name + " contains a line break or NUL character");
        continue;
      }
      Rule rule = KNOWN.get(name);
      if (rule != null) {
        String problem = check(name, value, rule);
        if (problem != null) {
          problems.add(problem);
        }
      }
    }
    String walLevel = settings.getOrDefault("wal_level", "replica");
    String senders = settings.getOrDefault("max_wal_senders", "10");
    if ("minimal".equalsIgnoreCase(walLevel.trim()) && !"0".equals(senders.trim())) {
      problems.add(
          "wal_level=minimal requires max_wal_senders=0 (PostgreSQL refuses to start otherwise)");
    }
    return problems;
  }

  private static String check(String name, String value, Rule rule) {
    String v = value.trim();
    switch (rule.kind()) {
      case BOOL:
        return BOOLEANS.contains(v.toLowerCase(Locale.ROOT))
            ? null
            : name + "='" + value + "' is not a boolean (on/off)";
      case INT:
        try {
          long n = Long.parseLong(v);
          return n >= rule.min() && n <= rule.max()
              ? null
              : name + "=" + n + " is outside " + rule.min() + ".." + rule.max();
        } catch (NumberFormatException ex) {
          return name + "='" + value + "' is not an integer";
        }
      case MEMORY:
        return MEMORY.matcher(v).matches()
            ? null
            : name + "='" + value + "' is not a memory size such as 128MB (units B, kB, MB, GB, TB)";
      case ENUM:
        return rule.values().contains(v.toLowerCase(Locale.ROOT))
            ? null
            : name + "='" + value + "' is not one of " + new java.util.TreeSet<>(rule.values());
      case TEXT:
      default:
        return null;
    }
  }
}
