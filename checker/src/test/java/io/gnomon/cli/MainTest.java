package io.gnomon.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The command line's dispatch, help and usage errors; no database. */
class MainTest {

  @Test
  void helpListsEveryCommand() {
    for (String help : new String[] {"help", "--help", "-h"}) {
      Cli.Run r = Cli.run(help);
      assertEquals(0, r.status(), help);
      assertTrue(r.out().contains("usage: ./gnomon <command>"), r.out());
      assertTrue(r.out().contains("  demo "), r.out());
      assertTrue(r.out().contains("  install "), r.out());
      assertTrue(r.out().contains("  help "), r.out());
    }
  }

  @Test
  void noArgumentsPrintsHelpAsAUsageError() {
    Cli.Run r = Cli.run();
    assertEquals(2, r.status());
    assertTrue(r.err().contains("commands:"), r.err());
  }

  @Test
  void unknownCommandIsAUsageErrorThatListsTheCommands() {
    Cli.Run r = Cli.run("frobnicate");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("unknown command 'frobnicate'"), r.err());
    assertTrue(r.err().contains("demo, check, install"), r.err());
    assertEquals("", r.out());
  }

  @Test
  void commandHelp() {
    for (String[] args : new String[][] {{"help", "install"}, {"install", "--help"}, {"install", "-h"}}) {
      Cli.Run r = Cli.run(args);
      assertEquals(0, r.status(), String.join(" ", args));
      assertTrue(r.out().startsWith("usage: ./gnomon install --url JDBC_URL"), r.out());
    }
    Cli.Run demo = Cli.run("demo", "--help");
    assertEquals(0, demo.status());
    assertTrue(demo.out().contains("GNOMON_JDBC_URL"), demo.out());
    assertEquals(2, Cli.run("help", "nothing").status());
  }

  @Test
  void installNeedsAPostgresUrl() {
    Cli.Run missing = Cli.run("install");
    assertEquals(2, missing.status());
    assertTrue(missing.err().contains("option --url is required"), missing.err());
    assertTrue(missing.err().contains("usage: ./gnomon install"), missing.err());

    Cli.Run notPostgres = Cli.run("install", "--url", "jdbc:mysql://localhost/app");
    assertEquals(2, notPostgres.status());
    assertTrue(notPostgres.err().contains("must be a PostgreSQL JDBC URL"), notPostgres.err());

    Cli.Run unknown = Cli.run("install", "--url", "jdbc:postgresql://localhost/app", "--force");
    assertEquals(2, unknown.status());
    assertTrue(unknown.err().contains("unknown option --force"), unknown.err());

    Cli.Run dangling = Cli.run("install", "--url");
    assertEquals(2, dangling.status());
    assertTrue(dangling.err().contains("option --url needs a value"), dangling.err());
  }

  @Test
  void demoTakesNoArguments() {
    Cli.Run r = Cli.run("demo", "extra");
    assertEquals(2, r.status());
    assertTrue(r.err().contains("unexpected argument 'extra'"), r.err());
  }

  @Test
  void passwordsAreHiddenInMessages() {
    assertEquals("jdbc:postgresql://h/db?user=u&password=***",
        InstallCommand.withoutPassword("jdbc:postgresql://h/db?user=u&password=secret"));
    assertEquals("jdbc:postgresql://h/db?password=***&user=u",
        InstallCommand.withoutPassword("jdbc:postgresql://h/db?password=secret&user=u"));
  }
}
