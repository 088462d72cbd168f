package io.gnomon.sql;

import java.sql.Connection;

/**
 * The template database of gnomon-sql's integration tests: an empty database with the catalog installed, built once
 * per JVM by the testkit and cloned for each test class that needs a catalog.
 */
final class CatalogTemplate {
  /** The template's name. */
  static final String NAME = "gnomon_sql_catalog";

  private CatalogTemplate() {}

  /** Fills the template: installs the catalog through the testkit's connection. */
  static void install(Connection connection) {
    Catalog.install(connection);
  }
}
