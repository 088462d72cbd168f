package io.gnomon.cli;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Gnomon's command line, run by {@code ./gnomon}: {@code ./gnomon <command> [options]}. It dispatches to one {@link
 * Command} per subcommand; exit status 0 is success, 1 a failure the command explained, 2 a command line that could
 * not be understood.
 */
public final class Main {
  /** How the user runs us; shown in usage lines. */
  static final String PROGRAM = "./gnomon";

  private static final List<Command> COMMANDS = List.of(new DemoCommand(), new CheckCommand(), new InstallCommand(), new FuzzCommand());

  private Main() {}

  /** Runs a command and exits with its status. */
  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /**
   * Runs a command line and returns its exit status, printing to {@code out} and {@code err}; never calls {@link
   * System#exit}.
   */
  public static int run(String[] args, PrintStream out, PrintStream err) {
    quietLibraries();
    if (args.length == 0) {
      err.print(help());
      return Command.USAGE;
    }
    String name = args[0];
    List<String> rest = List.of(args).subList(1, args.length);
    if (isHelp(name)) {
      if (rest.isEmpty()) {
        out.print(help());
        return Command.OK;
      }
      Optional<Command> topic = find(rest.get(0));
      if (topic.isEmpty()) {
        return unknown(rest.get(0), err);
      }
      out.print(topic.get().usage());
      return Command.OK;
    }
    Optional<Command> found = find(name);
    if (found.isEmpty()) {
      return unknown(name, err);
    }
    Command command = found.get();
    if (rest.contains("--help") || rest.contains("-h")) {
      out.print(command.usage());
      return Command.OK;
    }
    try {
      return command.run(rest, out, err);
    } catch (UsageException e) {
      err.println(PROGRAM + " " + name + ": " + e.getMessage());
      err.println();
      err.print(command.usage());
      return Command.USAGE;
    }
  }

  /** The general help: what Gnomon is, and every command with its one-line summary. */
  static String help() {
    StringBuilder b = new StringBuilder();
    b.append("Gnomon: versioned PostgreSQL tables, readable as of any past point.\n\n");
    b.append("usage: ").append(PROGRAM).append(" <command> [options]\n\n");
    b.append("commands:\n");
    for (Command c : COMMANDS) {
      b.append(String.format("  %-9s %s%n", c.name(), c.summary()));
    }
    b.append(String.format("  %-9s %s%n", "help", "Show this help, or one command's: " + PROGRAM + " help <command>"));
    b.append("\nStart with ").append(PROGRAM).append(" demo. Documentation: README.md and docs/ in the repository.\n");
    return b.toString();
  }

  private static int unknown(String name, PrintStream err) {
    err.println(PROGRAM + ": unknown command '" + name + "'");
    err.println("Commands: " + String.join(", ", names()) + ". Run " + PROGRAM + " help for what each does.");
    return Command.USAGE;
  }

  private static List<String> names() {
    return COMMANDS.stream().map(Command::name).toList();
  }

  private static Optional<Command> find(String name) {
    return COMMANDS.stream().filter(c -> c.name().equals(name)).findFirst();
  }

  private static boolean isHelp(String arg) {
    return Arrays.asList("help", "--help", "-h").contains(arg);
  }

  /**
   * Libraries log through slf4j-simple: the command line shows only their warnings, and only Flyway's errors (it warns
   * that the catalog's own {@code create schema if not exists} found the schema Flyway had just created). jOOQ's
   * banner is off. A {@code -D} on the command line overrides each.
   */
  private static void quietLibraries() {
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
        System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
    System.setProperty("org.slf4j.simpleLogger.log.org.flywaydb",
        System.getProperty("org.slf4j.simpleLogger.log.org.flywaydb", "error"));
    System.setProperty("org.jooq.no-logo", System.getProperty("org.jooq.no-logo", "true"));
    System.setProperty("org.jooq.no-tips", System.getProperty("org.jooq.no-tips", "true"));
  }
}
