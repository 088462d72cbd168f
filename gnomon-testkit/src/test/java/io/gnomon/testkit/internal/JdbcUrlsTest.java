package io.gnomon.testkit.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class JdbcUrlsTest {

  @Test
  void replacesTheDatabaseAndKeepsParameters() {
    JdbcUrls.Parts p = JdbcUrls.parse("jdbc:postgresql://db:5433/app?user=u&password=p&ssl=true");
    assertEquals("jdbc:postgresql://db:5433", p.hosts());
    assertEquals("app", p.database());
    assertEquals(
        "jdbc:postgresql://db:5433/other?user=u&password=p&ssl=true", p.withDatabase("other"));
  }

  @Test
  void handlesMissingDatabaseAndParameters() {
    assertEquals(
        "jdbc:postgresql://h/x", JdbcUrls.parse("jdbc:postgresql://h").withDatabase("x"));
    assertEquals(
        "jdbc:postgresql://h:1,g:2/x?user=u",
        JdbcUrls.parse("jdbc:postgresql://h:1,g:2/?user=u").withDatabase("x"));
  }

  @Test
  void encodesDatabaseNames() {
    assertEquals(
        "jdbc:postgresql://127.0.0.1:5/a+b%2Fc?user=postgres",
        JdbcUrls.of("127.0.0.1", 5, "a b/c", "postgres"));
  }

  @Test
  void rejectsOtherFormsWithoutLeakingPasswords() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> JdbcUrls.parse("jdbc:mysql://h/db?password=secret"));
    assertFalse(e.getMessage().contains("secret"), e.getMessage());
    assertTrue(e.getMessage().contains("password=***"), e.getMessage());
  }

  @Test
  void redactsPasswords() {
    assertEquals(
        "jdbc:postgresql://h/d?user=u&password=***&x=1",
        JdbcUrls.redact("jdbc:postgresql://h/d?user=u&password=hunter2&x=1"));
  }
}
