package io.gnomon.testkit;

import static io.gnomon.testkit.TestSql.databaseExists;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Registered on an instance field, the extension gives each test its own database. */
@Timeout(60)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PerTestDatabaseIT {

  private static String firstTestsDatabase;

  @RegisterExtension GnomonDatabase db = GnomonDatabase.fromTemplate("template0");

  @Test
  @Order(1)
  void first() {
    firstTestsDatabase = db.name();
  }

  @Test
  @Order(2)
  void secondGetsAnotherDatabaseAndTheFirstIsGone() throws Exception {
    assertNotNull(firstTestsDatabase);
    assertFalse(db.name().equals(firstTestsDatabase));
    assertFalse(databaseExists(db.server(), firstTestsDatabase));
  }
}
