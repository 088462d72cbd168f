package io.gnomon.checker.verify;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The verifier's result.
 *
 * @param violations how many violations of each kind
 * @param witnesses the first few violations of each kind, with their witnesses
 * @param checked what was checked, and how many: {@code reads replayed}, {@code feed events checked}, ...
 */
public record Verification(Map<String, Long> violations, List<Violation> witnesses, Map<String, Long> checked) {

  /** Whether nothing was violated. */
  public boolean valid() {
    return violations.isEmpty();
  }

  /** The violations by kind, sorted by kind. */
  public Map<String, Long> byKind() {
    return new TreeMap<>(violations);
  }

  /** The first witness of a kind, if any. */
  public Violation first(String kind) {
    return witnesses.stream().filter(v -> v.kind().equals(kind)).findFirst().orElse(null);
  }
}
