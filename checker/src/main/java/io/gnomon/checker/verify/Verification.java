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
 * @param losses what the run's design allows to be lost and was (the first 200; each kind is counted in {@code
 *     checked}): commits lost by an asynchronous failover, scratch branches a crash emptied, reads on them that can no
 *     longer be replayed
 */
public record Verification(Map<String, Long> violations, List<Violation> witnesses, Map<String, Long> checked,
    List<Violation> losses) {

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
