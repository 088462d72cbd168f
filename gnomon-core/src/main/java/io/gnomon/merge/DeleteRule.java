package io.gnomon.merge;

/** What {@link RowMerger} does when one side deleted a row and the other updated it. */
public enum DeleteRule {
  /** Report a row-level conflict (the default). */
  CONFLICT,
  /** The delete wins: the row is gone. */
  DELETE_WINS,
  /** The update wins: the row stays, with the updating side's values. */
  UPDATE_WINS
}
