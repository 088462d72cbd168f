package io.gnomon.testkit;

import static io.gnomon.testkit.TestSql.exec;
import static io.gnomon.testkit.TestSql.one;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The extension as test classes use it: one database per class, cloned from a template. */
@Timeout(120)
class GnomonDatabaseIT {

  @RegisterExtension
  static GnomonDatabase db =
      GnomonDatabase.fromTemplate(
          "gdit_catalog",
          conn ->
              exec(
                  conn,
                  "create schema gnomon",
                  "create table gnomon.marker(v text)",
                  "insert into gnomon.marker values ('installed')"));

  @Test
  void databaseIsClonedFromTheTemplate() throws Exception {
    try (Connection c = db.connect()) {
      assertEquals("installed", one(c, "select v from gnomon.marker"));
      assertEquals(db.name(), one(c, "select current_database()"));
    }
  }

  @Test
  void databaseIsNamedAfterTheClass() {
    assertTrue(db.name().startsWith("gnomondatabaseit_"), db.name());
  }

  @Test
  void urlAndDataSourceReachTheSameDatabase() throws Exception {
    try (Connection viaUrl = DriverManager.getConnection(db.jdbcUrl());
        Connection viaDataSource = db.dataSource().getConnection()) {
      assertEquals(db.name(), one(viaUrl, "select current_database()"));
      assertEquals(db.name(), one(viaDataSource, "select current_database()"));
    }
    assertTrue(db.server().isRunning());
  }

  @Nested
  class NestedTests {
    @Test
    void shareTheOuterClassDatabase() throws Exception {
      assertTrue(db.name().startsWith("gnomondatabaseit_"), db.name());
      assertEquals("installed", one(db.server(), db.name(), "select v from gnomon.marker"));
    }
  }
}
