package io.gnomon;

import java.time.OffsetDateTime;

/**
 * A branch, as {@code gnomon.branches()} lists it.
 *
 * @param name the branch's name
 * @param id Gnomon's id for it: positive for logged branches, negative for scratch ones
 * @param parent the parent branch's name, or {@code "main"}
 * @param cutoff the coordinate on the parent the branch starts from
 * @param kind logged (durable) or scratch (unlogged, emptied by a crash)
 * @param intact false when a crash or failover emptied the scratch branch (or a scratch ancestor): drop it
 * @param depth 1 for a branch of main, 2 for a branch of such a branch, and so on
 * @param createdAt when it was created
 */
public record Branch(
    String name, int id, String parent, Coordinate cutoff, Kind kind, boolean intact, int depth, OffsetDateTime createdAt) {

  /** How a branch stores its rows. */
  public enum Kind {
    /** In logged tables: durable, replicated, like the tracked tables themselves. */
    LOGGED,
    /** In unlogged tables: cheaper writes, but a crash or failover empties it (it is then marked not intact). */
    SCRATCH
  }
}
