package io.gnomon.merge;

/**
 * Options of the {@code json} strategy. The limits bound the cost of a merge on hostile input: a value nested deeper
 * than {@code maxDepth}, or three values with more than {@code maxNodes} nodes together, make the merge throw {@link
 * MergeLimitExceededException} instead of running long or overflowing the stack.
 *
 * @param maxDepth the deepest nesting allowed (a scalar has depth 0, {@code {"a":1}} depth 1); default 64
 * @param maxNodes the most JSON nodes (objects, arrays, scalars) of base, ours and theirs together; default 100,000
 * @param arraysAsSets false (the default): arrays are values, so two different changes to one array conflict; true:
 *     arrays merge like the {@code union} strategy (elements compared as JSON values)
 */
public record JsonOptions(int maxDepth, int maxNodes, boolean arraysAsSets) {
  /** The default deepest nesting. */
  public static final int DEFAULT_MAX_DEPTH = 64;

  /** The default largest number of nodes. */
  public static final int DEFAULT_MAX_NODES = 100_000;

  /** Checks that both limits are positive. */
  public JsonOptions {
    if (maxDepth < 1 || maxNodes < 1) {
      throw new IllegalArgumentException(
          "json merge limits must be positive: maxDepth=" + maxDepth + ", maxNodes=" + maxNodes);
    }
  }

  /** The defaults: depth 64, 100,000 nodes, arrays as values. */
  public static JsonOptions defaults() {
    return new JsonOptions(DEFAULT_MAX_DEPTH, DEFAULT_MAX_NODES, false);
  }

  /** These options with other limits. */
  public JsonOptions withLimits(int maxDepth, int maxNodes) {
    return new JsonOptions(maxDepth, maxNodes, arraysAsSets);
  }

  /** These options with arrays merged as sets ({@code true}) or as values. */
  public JsonOptions withArraysAsSets(boolean arraysAsSets) {
    return new JsonOptions(maxDepth, maxNodes, arraysAsSets);
  }
}
