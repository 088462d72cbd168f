package io.gnomon.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.gnomon.sql.Catalog;
import io.gnomon.testkit.GnomonDatabase;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code ./gnomon install} into a fresh, empty database of the testkit's shared server. */
class InstallCommandIT {
  @RegisterExtension
  GnomonDatabase db = GnomonDatabase.empty();

  @Test
  void installsTheCatalogAndPrintsItsVersion() throws SQLException {
    Cli.Run first = Cli.run("install", "--url", db.jdbcUrl());
    assertEquals(0, first.status(), first.all());
    assertTrue(first.out().contains("Installed the gnomon catalog, version " + Catalog.VERSION), first.all());
    assertEquals(String.valueOf(Catalog.VERSION), one("select gnomon.catalog_version()"));
    assertEquals("t", one("select count(*) > 0 from gnomon.flyway_schema_history where success"));

    Cli.Run again = Cli.run("install", "--url", db.jdbcUrl());
    assertEquals(0, again.status(), again.all());
    assertTrue(again.out().contains("already at version " + Catalog.VERSION + "; nothing to do"), again.all());
  }

  @Test
  void theInstalledCatalogWorks() throws SQLException {
    assertEquals(0, Cli.run("install", "--url", db.jdbcUrl()).status());
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      st.execute("create table t (id int primary key, v text)");
      st.execute("select gnomon.track('public.t')");
    }
    assertEquals("1", one("select count(*) from gnomon.tracked_table"));
  }

  @Test
  void refusesWithoutSuperuserAndSaysWhy() throws SQLException {
    String role = "gnomon_plain_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 16);
    try (Connection c = db.connect();
        Statement st = c.createStatement()) {
      st.execute("create role " + role + " login password 'plain'");
      st.execute("grant create on database \"" + db.name() + "\" to " + role);
    }
    try {
      Cli.Run r = Cli.run("install", "--url", db.jdbcUrl(), "--user", role, "--password", "plain");
      assertEquals(1, r.status(), r.all());
      assertTrue(r.err().contains("needs a superuser"), r.all());
    } finally {
      try (Connection c = db.connect();
          Statement st = c.createStatement()) {
        st.execute("drop owned by " + role);
        st.execute("drop role " + role);
      }
    }
  }

  @Test
  void saysWhenItCannotConnect() {
    Cli.Run r = Cli.run("install", "--url", "jdbc:postgresql://127.0.0.1:1/nowhere?connectTimeout=2");
    assertEquals(1, r.status(), r.all());
    assertTrue(r.err().contains("cannot connect to jdbc:postgresql://127.0.0.1:1/nowhere"), r.all());
  }

  private String one(String sql) throws SQLException {
    try (Connection c = db.connect();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }
}
