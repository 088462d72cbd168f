package io.gnomon.testkit.internal;

import io.gnomon.testkit.ClusterOptions;
import io.gnomon.testkit.PgClusterException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The configuration files of a throwaway cluster. Settings from {@link ClusterOptions} go into
 * {@code gnomon.conf}, included at the end of {@code postgresql.conf}, so that {@code ALTER
 * SYSTEM} (written to {@code postgresql.auto.conf}) still overrides them; {@code pg_hba.conf}
 * trusts local and loopback connections, replication included.
 */
final class ServerConfig {

  static final String FILE = "gnomon.conf";

  private static final String HBA =
      "# Written by the Gnomon testkit: a throwaway cluster trusting local connections.\n"
          + "local   all          all                 trust\n"
          + "host    all          all   127.0.0.1/32  trust\n"
          + "host    all          all   ::1/128       trust\n"
          + "local   replication  all                 trust\n"
          + "host    replication  all   127.0.0.1/32  trust\n"
          + "host    replication  all   ::1/128       trust\n";

  private ServerConfig() {}

  /** Writes the configuration of a freshly initialised data directory. */
  static void writeInitial(Path data, ClusterOptions options, RunAs runAs) {
    StringBuilder conf = new StringBuilder("# Written by the Gnomon testkit from ClusterOptions.\n");
    for (Map.Entry<String, String> e : options.settings().entrySet()) {
      conf.append(e.getKey()).append(" = ").append(quote(e.getValue())).append('\n');
    }
    try {
      Path gnomonConf = data.resolve(FILE);
      Files.writeString(gnomonConf, conf, StandardCharsets.UTF_8);
      runAs.chown(gnomonConf);
      Files.writeString(
          data.resolve("postgresql.conf"),
          "\n# Added by the Gnomon testkit.\ninclude = '" + FILE + "'\n",
          StandardCharsets.UTF_8,
          StandardOpenOption.APPEND);
      Files.writeString(
          data.resolve("pg_hba.conf"),
          HBA,
          StandardCharsets.UTF_8,
          StandardOpenOption.TRUNCATE_EXISTING);
    } catch (IOException e) {
      throw new PgClusterException("Could not configure " + data + ": " + e.getMessage(), e);
    }
  }

  /**
   * Sets or removes a parameter in {@code postgresql.auto.conf}, the file {@code ALTER SYSTEM}
   * writes; works whether or not the server runs (a running server needs a reload to see it).
   *
   * @param value the new value, or null to remove the parameter
   */
  static void setAuto(Path data, String name, String value) {
    Path auto = data.resolve("postgresql.auto.conf");
    try {
      List<String> lines =
          Files.exists(auto)
              ? new ArrayList<>(Files.readAllLines(auto, StandardCharsets.UTF_8))
              : new ArrayList<>();
      lines.removeIf(line -> name.equals(parameterOf(line)));
      if (value != null) {
        lines.add(name + " = " + quote(value));
      }
      Files.write(auto, lines, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new PgClusterException("Could not update " + auto + ": " + e.getMessage(), e);
    }
  }

  private static String parameterOf(String line) {
    String t = line.trim();
    if (t.isEmpty() || t.startsWith("#")) {
      return null;
    }
    int end = 0;
    while (end < t.length() && (Character.isLetterOrDigit(t.charAt(end)) || t.charAt(end) == '_' || t.charAt(end) == '.')) {
      end++;
    }
    return t.substring(0, end).toLowerCase(Locale.ROOT);
  }

  /** Quotes a value for a configuration file: single quotes, with quotes and backslashes escaped. */
  static String quote(String value) {
    return "'" + value.replace("\\", "\\\\").replace("'", "''") + "'";
  }
}
