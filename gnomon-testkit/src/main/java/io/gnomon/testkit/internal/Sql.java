package io.gnomon.testkit.internal;

import java.nio.charset.StandardCharsets;

/** Quoting and checking of names in the few statements the testkit issues. */
public final class Sql {

  /** PostgreSQL's identifier limit, in bytes ({@code NAMEDATALEN - 1}). */
  public static final int MAX_IDENTIFIER_BYTES = 63;

  private Sql() {}

  /**
   * Quotes an identifier for SQL text.
   *
   * @param identifier any identifier
   * @return the identifier in double quotes, with embedded quotes doubled
   */
  public static String quoteIdent(String identifier) {
    return '"' + identifier.replace("\"", "\"\"") + '"';
  }

  /**
   * Quotes a string literal for SQL text (standard_conforming_strings is on since PostgreSQL 9.1).
   *
   * @param value any text
   * @return the text in single quotes, with embedded quotes doubled
   */
  public static String literal(String value) {
    return '\'' + value.replace("'", "''") + '\'';
  }

  /**
   * Checks a database name given by a caller.
   *
   * @param what what the name is, for the message ("database", "template")
   * @param name the name
   * @return the name
   * @throws IllegalArgumentException if it is null, blank, too long or contains NUL
   */
  public static String checkDatabaseName(String what, String name) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException(what + " name must not be null or blank");
    }
    if (name.indexOf('\0') >= 0) {
      throw new IllegalArgumentException(what + " name must not contain NUL: " + name);
    }
    if (name.getBytes(StandardCharsets.UTF_8).length > MAX_IDENTIFIER_BYTES) {
      throw new IllegalArgumentException(
          what
              + " name '"
              + name
              + "' is longer than PostgreSQL's limit of "
              + MAX_IDENTIFIER_BYTES
              + " bytes");
    }
    return name;
  }
}
