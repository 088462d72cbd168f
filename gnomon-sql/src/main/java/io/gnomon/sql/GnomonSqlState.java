package io.gnomon.sql;

import java.util.Arrays;
import java.util.Optional;

/**
 * Gnomon's own SQLSTATEs, mirroring the registry table {@code gnomon.error_code} (a test checks that both agree).
 * PostgreSQL's retryable states are listed too, so one translator can mark retryable failures.
 */
public enum GnomonSqlState {
  /** The table is not tracked by Gnomon. */
  TABLE_NOT_TRACKED("GN001", false),
  /** The table is already tracked by Gnomon. */
  TABLE_ALREADY_TRACKED("GN002", false),
  /** The table has no primary key. */
  NO_PRIMARY_KEY("GN003", false),
  /** A view, foreign, temporary, unlogged or partition-child table, or one others inherit from, cannot be tracked. */
  UNSUPPORTED_RELATION("GN004", false),
  /** A column's type has no equality operator. */
  UNSUPPORTED_COLUMN_TYPE("GN005", false),
  /** A schema change on a tracked table was refused. */
  UNSUPPORTED_DDL("GN006", false),
  /** No table has that name. */
  TABLE_NOT_FOUND("GN007", false),
  /** The text is not a Gnomon coordinate. */
  MALFORMED_COORDINATE("GN010", false),
  /** The coordinate or timestamp is later than what the transaction can see. */
  COORDINATE_IN_FUTURE("GN011", false),
  /** The coordinate or timestamp is older than the retained history. */
  COORDINATE_TOO_OLD("GN012", false),
  /** The coordinate was captured before a crash or failover, after the last tick that survived it. */
  COORDINATE_LOST_IN_FAULT("GN013", false),
  /** The installed catalog has another version than this library. */
  CATALOG_VERSION_MISMATCH("GN020", false),
  /** An argument to a Gnomon function is invalid. */
  INVALID_ARGUMENT("GN021", false),
  /** No change-feed consumer has that name. */
  CONSUMER_NOT_FOUND("GN030", false),
  /** A change-feed consumer with that name is already registered. */
  CONSUMER_EXISTS("GN031", false),
  /** The consumer fell behind further than its limit and was expired. */
  CONSUMER_EXPIRED("GN032", false),
  /** The feed position is malformed, belongs to no delivered page, or goes backwards. */
  INVALID_POSITION("GN033", false),
  /** A change-feed consumer follows the branch; unregister it before dropping the branch. */
  BRANCH_FOLLOWED("GN034", false),
  /**
   * Internal to {@code gnomon.merge}: rows a concurrent transaction changed during the merge's writes now conflict; the
   * merge rolls its writes back and records the conflicts.
   */
  MERGE_REPLANNED_CONFLICT("GN035", false),
  /**
   * {@code gnomon.feed_page_c} or {@code gnomon.feed_batch_c} (the C module's change-feed page and batch order) was
   * asked for a table it cannot read: no tracked table has the id, or its history lacks a column of the table.
   */
  FEED_PAGE_C_MISUSE("GN036", false),
  /** A merge input exceeds a configured limit (json: nesting depth or number of nodes). */
  MERGE_LIMIT_EXCEEDED("GN040", false),
  /** A gnomon.* setting has a value Gnomon does not accept ({@code gnomon.settings()} lists what each accepts). */
  INVALID_SETTING("GN041", false),
  /** No branch has that name, or the selected branch was dropped. */
  BRANCH_NOT_FOUND("GN050", false),
  /** A branch with that name already exists. */
  BRANCH_EXISTS("GN051", false),
  /** The branch has child branches; drop them first or ask for a cascade. */
  BRANCH_HAS_CHILDREN("GN052", false),
  /** The scratch branch was emptied by a crash or a failover of the server. */
  BRANCH_LOST("GN053", false),
  /** A branch view was used without selecting a branch. */
  NO_BRANCH_SELECTED("GN054", false),
  /** The merge cannot run: a branch into itself, or tables that cannot be merged. */
  INVALID_MERGE("GN060", false),
  /** No merge strategy has that name. */
  UNKNOWN_STRATEGY("GN061", false),
  /** The merge strategy does not fit the column's type. */
  STRATEGY_TYPE_MISMATCH("GN062", false),
  /** No merge, or no conflict of that merge, matches. */
  MERGE_NOT_FOUND("GN063", false),
  /**
   * The optional C module cannot be loaded (missing library, no superuser, or another interface
   * version).
   */
  C_MODULE_UNAVAILABLE("GN070", false),
  /**
   * The C write trigger fired where Gnomon did not install it, or the table's generated objects are
   * missing.
   */
  C_TRIGGER_MISUSE("GN071", false),
  /**
   * A tracked table lacks its write triggers (for example after a restore without the C module):
   * writes would leave no history.
   */
  TRIGGERS_MISSING("GN072", false),
  /**
   * The C write trigger cannot write a version: no history partition holds the writing
   * transaction's xid.
   */
  C_TRIGGER_INTERNAL("GN073", false);

  private final String sqlState;
  private final boolean retryable;

  GnomonSqlState(String sqlState, boolean retryable) {
    this.sqlState = sqlState;
    this.retryable = retryable;
  }

  /** The five-character SQLSTATE, for example {@code GN001}. */
  public String sqlState() {
    return sqlState;
  }

  /** Whether running the same work again may succeed. */
  public boolean retryable() {
    return retryable;
  }

  /** The Gnomon state with this SQLSTATE, if it is one of Gnomon's. */
  public static Optional<GnomonSqlState> of(String sqlState) {
    return Arrays.stream(values()).filter(s -> s.sqlState.equals(sqlState)).findFirst();
  }

  /**
   * Whether a PostgreSQL SQLSTATE marks a failure worth retrying: serialization failure (40001), deadlock (40P01),
   * lock not available (55P03).
   */
  public static boolean isRetryablePostgresState(String sqlState) {
    return "40001".equals(sqlState) || "40P01".equals(sqlState) || "55P03".equals(sqlState);
  }
}
