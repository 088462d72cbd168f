package io.gnomon.cli;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The options of one command: {@code --name value} or {@code --name=value} for options that take a value, {@code
 * --name} for flags. Anything else is a {@link UsageException} that names the offending argument.
 */
final class Options {
  private final Map<String, String> values;

  private Options(Map<String, String> values) {
    this.values = values;
  }

  /**
   * Parses the arguments of a command.
   *
   * @param args the arguments after the command's name
   * @param valued the names (without {@code --}) of options that take a value
   * @param flags the names of options that take none
   */
  static Options parse(List<String> args, Set<String> valued, Set<String> flags) throws UsageException {
    Map<String, String> values = new LinkedHashMap<>();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (!arg.startsWith("--") || arg.length() == 2) {
        throw new UsageException("unexpected argument '" + arg + "'");
      }
      String name = arg.substring(2);
      String value = null;
      int eq = name.indexOf('=');
      if (eq >= 0) {
        value = name.substring(eq + 1);
        name = name.substring(0, eq);
      }
      if (flags.contains(name)) {
        if (value != null) {
          throw new UsageException("option --" + name + " takes no value");
        }
        value = "true";
      } else if (valued.contains(name)) {
        if (value == null) {
          if (i + 1 >= args.size()) {
            throw new UsageException("option --" + name + " needs a value");
          }
          value = args.get(++i);
        }
      } else {
        throw new UsageException("unknown option --" + name);
      }
      if (values.put(name, value) != null) {
        throw new UsageException("option --" + name + " is given twice");
      }
    }
    return new Options(values);
  }

  /** The value of an option, if given. */
  Optional<String> get(String name) {
    return Optional.ofNullable(values.get(name));
  }

  /** The value of an option that must be given. */
  String require(String name) throws UsageException {
    String value = values.get(name);
    if (value == null || value.isBlank()) {
      throw new UsageException("option --" + name + " is required");
    }
    return value;
  }

  /** Whether a flag was given. */
  boolean has(String name) {
    return values.containsKey(name);
  }
}
