package io.gnomon;

/**
 * The outcome of one merge run, as recorded in {@code gnomon.merge}.
 *
 * @param mergeId the run's id, for {@link Merges#conflicts} and {@link Merges#resolve}
 * @param status {@code applied} (written to the target), {@code nothing} (nothing new to merge), {@code conflicts}
 *     (nothing written: resolve them and merge again) or {@code dry_run}
 * @param adds rows inserted into the target (or that would be, for a dry run or with conflicts)
 * @param modifications rows updated in the target
 * @param deletes rows deleted from the target
 * @param conflicts conflicts found (columns, and rows deleted on one side and updated on the other)
 */
public record MergeResult(long mergeId, String status, long adds, long modifications, long deletes, long conflicts) {
  /** Whether the merge wrote to the target (status {@code applied}). */
  public boolean applied() {
    return "applied".equals(status);
  }

  /** Whether conflicts stopped the merge. */
  public boolean hasConflicts() {
    return conflicts > 0;
  }
}
