package io.gnomon.checker.fuzz;

import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategies;
import io.gnomon.merge.Strategy;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Deliberately broken strategies that the fuzzer must catch ({@code ./gnomon fuzz --mutant NAME}, hidden from the
 * help). Each replaces one built-in strategy.
 */
enum Mutant {
  /** counter forgets theirs' delta: base + (ours − base). */
  COUNTER_DROPS_THEIRS("counter"),
  /** max keeps ours even when theirs is larger. */
  MAX_TAKES_OURS("max"),
  /** union keeps elements that one side removed. */
  UNION_IGNORES_REMOVALS("union"),
  /** json keeps ours whenever both sides changed the document. */
  JSON_OURS_WINS("json"),
  /** text keeps ours whenever both sides changed the text. */
  TEXT_OURS_WINS("text");

  private final String strategy;

  Mutant(String strategy) {
    this.strategy = strategy;
  }

  /** The name on the command line, e.g. {@code counter-drops-theirs}. */
  String cliName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** The strategy this mutant replaces. */
  String strategy() {
    return strategy;
  }

  static Optional<Mutant> byName(String name) {
    for (Mutant m : values()) {
      if (m.cliName().equals(name)) {
        return Optional.of(m);
      }
    }
    return Optional.empty();
  }

  static List<String> names() {
    List<String> names = new ArrayList<>();
    for (Mutant m : values()) {
      names.add(m.cliName());
    }
    return names;
  }

  /** The broken strategy. */
  Strategy broken() {
    Strategy real = Strategies.byName(strategy).orElseThrow();
    return new Strategy() {
      @Override
      public String name() {
        return real.name();
      }

      @Override
      public boolean supports(ColumnType type) {
        return real.supports(type);
      }

      @Override
      public Resolution resolve(Column column, Object base, Object ours, Object theirs) {
        return switch (Mutant.this) {
          case COUNTER_DROPS_THEIRS -> real.resolve(column, base, ours, base == null ? 0L : base);
          case MAX_TAKES_OURS -> new Resolved(ours == null ? theirs : ours);
          case UNION_IGNORES_REMOVALS -> real.resolve(column, null, ours, theirs);
          case JSON_OURS_WINS, TEXT_OURS_WINS -> new Resolved(ours);
        };
      }
    };
  }
}
