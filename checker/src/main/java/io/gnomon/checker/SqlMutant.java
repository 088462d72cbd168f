package io.gnomon.checker;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Deliberately broken variants of Gnomon that {@code ./gnomon check --mutant NAME} runs against, to show that the
 * checker catches each one (exit status 1). They are made inside the checker's throwaway database only, by rewriting
 * the SQL functions Gnomon installed or generated there.
 */
public enum SqlMutant {
  /** The history trigger writes no version for the updates of one transaction in four. */
  TRIGGER_SKIPS_VERSION(true, "the history trigger skips the versions of plain updates in one transaction of four"),
  /** The feed cuts batches by version key instead of by snapshot. */
  FEED_BY_SEQUENCE(true, "the feed puts a version in a batch when its version key is above the largest one visible "
      + "at the previous tick, instead of asking the tick snapshots whether its transaction became visible"),
  /** As-of reads treat transactions in progress at the coordinate as committed. */
  ASOF_IGNORES_IN_PROGRESS(true, "as-of reads treat transactions in progress at the coordinate as committed "
      + "(only ids at or above xmax count as later)"),
  /** A branch read that ignores the branch's cutoff: keys not written on the branch read main as it is now. */
  BRANCH_IGNORES_CUTOFF(true, "a branch read ignores the branch's cutoff: keys not written on the branch read main as "
      + "it is now instead of as of the cutoff"),
  /** A merge that drops one side's change: strategy theirs keeps ours when both sides changed a column. */
  MERGE_DROPS_SIDE(true, "a merge drops one side's change: the strategy theirs keeps ours' value when both sides "
      + "changed a column");

  private final boolean available;
  private final String description;

  SqlMutant(boolean available, String description) {
    this.available = available;
    this.description = description;
  }

  /** The name on the command line, such as {@code trigger-skips-version}. */
  public String cliName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  /** Whether it can be run today (the slots cannot). */
  public boolean available() {
    return available;
  }

  /** What it breaks, in words. */
  public String description() {
    return description;
  }

  /** The mutant called {@code name} on the command line. */
  public static Optional<SqlMutant> byName(String name) {
    return Arrays.stream(values()).filter(m -> m.cliName().equals(name)).findFirst();
  }

  /** The mutants that can be run. */
  public static List<SqlMutant> runnable() {
    return Arrays.stream(values()).filter(SqlMutant::available).toList();
  }
}
