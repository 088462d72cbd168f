package io.gnomon.cli;

import java.io.PrintStream;
import java.util.List;

/**
 * One subcommand of {@code ./gnomon}. {@link Main} finds it by {@link #name()}, lists it in the help with {@link
 * #summary()}, and runs it with the arguments that follow its name.
 */
interface Command {
  /** Exit status of a command that did its job. */
  int OK = 0;

  /** Exit status of a command that ran and failed; it has said why on standard error. */
  int FAILED = 1;

  /** Exit status of a command line that could not be understood. */
  int USAGE = 2;

  /** The name typed after {@code ./gnomon}, for example {@code demo}. */
  String name();

  /** One line for the list of commands. */
  String summary();

  /** The full help of the command: its synopsis, what it does, its options. */
  String usage();

  /**
   * Runs the command.
   *
   * @param args the arguments after the command's name
   * @param out where results go
   * @param err where failures go
   * @return the exit status: {@link #OK} or {@link #FAILED}
   * @throws UsageException when the arguments cannot be understood ({@link Main} prints the usage and exits with
   *     {@link #USAGE})
   */
  int run(List<String> args, PrintStream out, PrintStream err) throws UsageException;
}
