package io.gnomon.internal;

import io.gnomon.BranchExistsException;
import io.gnomon.BranchFollowedException;
import io.gnomon.BranchHasChildrenException;
import io.gnomon.BranchLostException;
import io.gnomon.BranchNotFoundException;
import io.gnomon.CModuleUnavailableException;
import io.gnomon.CTriggerInternalException;
import io.gnomon.CTriggerMisuseException;
import io.gnomon.ConsumerExistsException;
import io.gnomon.ConsumerExpiredException;
import io.gnomon.ConsumerNotFoundException;
import io.gnomon.CoordinateInFutureException;
import io.gnomon.CoordinateLostException;
import io.gnomon.InvalidPositionException;
import io.gnomon.CoordinateTooOldException;
import io.gnomon.GnomonException;
import io.gnomon.InvalidArgumentException;
import io.gnomon.MalformedCoordinateException;
import io.gnomon.MergeException;
import io.gnomon.NoBranchSelectedException;
import io.gnomon.NoPrimaryKeyException;
import io.gnomon.TableAlreadyTrackedException;
import io.gnomon.TableNotFoundException;
import io.gnomon.TableNotTrackedException;
import io.gnomon.UnsupportedColumnTypeException;
import io.gnomon.UnsupportedDdlException;
import io.gnomon.UnsupportedRelationException;
import io.gnomon.WriteTriggersMissingException;
import io.gnomon.merge.MergeLimitExceededException;
import io.gnomon.sql.GnomonSqlState;
import java.sql.SQLException;
import org.postgresql.util.PSQLException;
import org.postgresql.util.ServerErrorMessage;

/** The one translator from SQLSTATEs to Gnomon's exceptions. */
public final class Errors {
  private Errors() {}

  /** Translates a database error into the Gnomon exception named for its condition. */
  public static GnomonException translate(String doing, SQLException e) {
    String state = e.getSQLState();
    String message = describe(e);
    if (state == null) {
      return new GnomonException(doing + ": " + message, null, e);
    }
    return GnomonSqlState.of(state)
        .<GnomonException>map(
            s ->
                switch (s) {
                  case TABLE_NOT_TRACKED -> new TableNotTrackedException(message, e);
                  case TABLE_ALREADY_TRACKED -> new TableAlreadyTrackedException(message, e);
                  case NO_PRIMARY_KEY -> new NoPrimaryKeyException(message, e);
                  case UNSUPPORTED_RELATION -> new UnsupportedRelationException(message, e);
                  case UNSUPPORTED_COLUMN_TYPE -> new UnsupportedColumnTypeException(message, e);
                  case UNSUPPORTED_DDL -> new UnsupportedDdlException(message, e);
                  case TABLE_NOT_FOUND -> new TableNotFoundException(message, e);
                  case MALFORMED_COORDINATE -> new MalformedCoordinateException(message, e);
                  case COORDINATE_IN_FUTURE -> new CoordinateInFutureException(message, e);
                  case COORDINATE_TOO_OLD -> new CoordinateTooOldException(message, e);
                  case COORDINATE_LOST_IN_FAULT -> new CoordinateLostException(message, e);
                  case INVALID_ARGUMENT -> new InvalidArgumentException(message, e);
                  case CATALOG_VERSION_MISMATCH, INVALID_SETTING, FEED_PAGE_C_MISUSE -> new GnomonException(message, state, e);
                  case C_MODULE_UNAVAILABLE -> new CModuleUnavailableException(message, e);
                  case C_TRIGGER_MISUSE -> new CTriggerMisuseException(message, e);
                  case TRIGGERS_MISSING -> new WriteTriggersMissingException(message, e);
                  case C_TRIGGER_INTERNAL -> new CTriggerInternalException(message, e);
                  case CONSUMER_NOT_FOUND -> new ConsumerNotFoundException(message, e);
                  case CONSUMER_EXISTS -> new ConsumerExistsException(message, e);
                  case CONSUMER_EXPIRED -> new ConsumerExpiredException(message, e);
                  case INVALID_POSITION -> new InvalidPositionException(message, e);
                  case BRANCH_FOLLOWED -> new BranchFollowedException(message, e);
                  case BRANCH_NOT_FOUND -> new BranchNotFoundException(message, e);
                  case BRANCH_EXISTS -> new BranchExistsException(message, e);
                  case BRANCH_HAS_CHILDREN -> new BranchHasChildrenException(message, e);
                  case BRANCH_LOST -> new BranchLostException(message, e);
                  case NO_BRANCH_SELECTED -> new NoBranchSelectedException(message, e);
                  case INVALID_MERGE, UNKNOWN_STRATEGY, STRATEGY_TYPE_MISMATCH, MERGE_NOT_FOUND, MERGE_REPLANNED_CONFLICT -> new MergeException(message, state, e);
                  case MERGE_LIMIT_EXCEEDED -> new MergeLimitExceededException(message, e);
                })
        .orElseGet(() -> new GnomonException(doing + ": " + message + " [SQLSTATE " + state + "]", state, e));
  }

  /** The server's message with its detail and hint, on one line each. */
  static String describe(SQLException e) {
    if (e instanceof PSQLException p && p.getServerErrorMessage() != null) {
      ServerErrorMessage m = p.getServerErrorMessage();
      StringBuilder b = new StringBuilder(String.valueOf(m.getMessage()));
      if (m.getDetail() != null) {
        b.append("\n  Detail: ").append(m.getDetail());
      }
      if (m.getHint() != null) {
        b.append("\n  Hint: ").append(m.getHint());
      }
      return b.toString();
    }
    return String.valueOf(e.getMessage());
  }
}
