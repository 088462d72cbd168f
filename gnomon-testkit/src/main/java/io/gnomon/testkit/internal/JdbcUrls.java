package io.gnomon.testkit.internal;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Building and taking apart PostgreSQL JDBC URLs. */
public final class JdbcUrls {

  private static final String PREFIX = "jdbc:postgresql://";
  private static final Pattern PASSWORD = Pattern.compile("(?i)(password=)[^&]*");

  /**
   * A URL split at the database name: {@code jdbc:postgresql://HOSTS} + {@code /DATABASE} + {@code
   * ?QUERY}.
   *
   * @param hosts everything up to the database, including {@code jdbc:postgresql://}
   * @param database the URL-encoded database name, possibly empty
   * @param query the parameters without {@code ?}, possibly empty
   */
  public record Parts(String hosts, String database, String query) {

    /**
     * Returns the same URL naming another database.
     *
     * @param name the database name, not encoded
     * @return the URL
     */
    public String withDatabase(String name) {
      return hosts + "/" + encode(name) + (query.isEmpty() ? "" : "?" + query);
    }
  }

  private JdbcUrls() {}

  /**
   * Splits a URL of the form {@code jdbc:postgresql://host[:port][,...][/database][?params]}.
   *
   * @param url the URL
   * @return its parts
   * @throws IllegalArgumentException for any other form
   */
  public static Parts parse(String url) {
    if (url == null || !url.startsWith(PREFIX)) {
      throw new IllegalArgumentException(
          "'"
              + redact(url)
              + "' is not a PostgreSQL JDBC URL of the form"
              + " jdbc:postgresql://host:port/database?user=...&password=...");
    }
    String rest = url.substring(PREFIX.length());
    int q = rest.indexOf('?');
    String query = q >= 0 ? rest.substring(q + 1) : "";
    String beforeQuery = q >= 0 ? rest.substring(0, q) : rest;
    int slash = beforeQuery.indexOf('/');
    String hosts = slash >= 0 ? beforeQuery.substring(0, slash) : beforeQuery;
    String database = slash >= 0 ? beforeQuery.substring(slash + 1) : "";
    if (hosts.isEmpty()) {
      throw new IllegalArgumentException("'" + redact(url) + "' names no host");
    }
    return new Parts(PREFIX + hosts, database, query);
  }

  /**
   * Builds the URL of a throwaway cluster's database.
   *
   * @param host the host
   * @param port the port
   * @param database the database name, not encoded
   * @param user the user
   * @return the URL
   */
  public static String of(String host, int port, String database, String user) {
    return PREFIX + host + ":" + port + "/" + encode(database) + "?user=" + encode(user);
  }

  /**
   * Masks any password in a URL for messages and logs.
   *
   * @param url a URL, or null
   * @return the URL with {@code password=***}
   */
  public static String redact(String url) {
    if (url == null) {
      return "null";
    }
    Matcher m = PASSWORD.matcher(url);
    return m.replaceAll("$1***");
  }

  static String encode(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }
}
