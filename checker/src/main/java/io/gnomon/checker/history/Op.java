package io.gnomon.checker.history;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * One line of the history file: an operation a session ran, with what it saw or wrote and how it ended, or a fault
 * the checker injected. Fields that do not apply are null and left out of the JSON.
 *
 * @param id the operation's number, unique and increasing in the order operations were logged
 * @param t milliseconds since the run started, when the operation ended
 * @param s the session (0 for the fault injector)
 * @param txn the transaction's number (0 for a fault)
 * @param iso the isolation level: {@code rc}, {@code rr} or {@code ser}
 * @param op what was done: {@code begin}, {@code read}, {@code insert}, {@code update}, {@code delete}, {@code
 *     rekey}, {@code savepoint}, {@code rollback_to}, {@code release}, {@code commit}, {@code rollback}, {@code
 *     abort}, {@code fault}
 * @param tbl the table's number (1 for {@code ck_t1})
 * @param coord a read's coordinate, captured by the statement that read
 * @param lo a read's lowest key
 * @param hi a read's highest key
 * @param rows the rows a read returned, or a write's rows ({@code [id, v]}: new values; a delete's old ones)
 * @param from a rekey's old key
 * @param sn how many rows the same statement changed in the untracked shadow table
 * @param sp a savepoint's name
 * @param outcome {@code ok}, {@code failed} or {@code unknown} (the connection was lost while committing)
 * @param err a failure's SQLSTATE and message
 * @param us the latency in microseconds (of the whole transaction on its end)
 * @param xid a writing transaction's 64-bit id, on its {@code begin}
 * @param kind a fault's kind: {@code kill}, {@code restart}, {@code failover}
 * @param detail a fault's details
 * @param phase a fault's phase: {@code start} when it is injected, {@code end} when the server serves again
 * @param br the branch a transaction works on (null: main); for a {@code branch} op, the branch created (its parent
 *     in {@code kind}, its cutoff in {@code coord}, {@code scratch} in {@code detail} for a scratch branch); for a
 *     merge into a branch, that branch
 * @param target a {@code merge}'s target ({@code main} or a branch; its source is in {@code kind})
 * @param strategy a {@code merge}'s strategy for the value column and its delete-against-update rule, as {@code
 *     strategy/rule}
 * @param merge a {@code merge}'s id in {@code gnomon.merge}
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Op(
    long id,
    long t,
    int s,
    long txn,
    String iso,
    String op,
    Integer tbl,
    String coord,
    Integer lo,
    Integer hi,
    List<long[]> rows,
    Long from,
    Integer sn,
    String sp,
    String outcome,
    String err,
    Long us,
    String xid,
    String kind,
    String detail,
    String phase,
    String br,
    String target,
    String strategy,
    Long merge) {

  /** Whether this is a write statement. */
  @com.fasterxml.jackson.annotation.JsonIgnore
  public boolean isWrite() {
    return switch (op) {
      case "insert", "update", "delete", "rekey", "merge_write" -> true;
      default -> false;
    };
  }

  /** Whether this {@code branch} op forked a scratch branch. */
  @com.fasterxml.jackson.annotation.JsonIgnore
  public boolean scratch() {
    return "branch".equals(op) && "scratch".equals(detail);
  }

  /** Whether it ended well. */
  @com.fasterxml.jackson.annotation.JsonIgnore
  public boolean ok() {
    return "ok".equals(outcome);
  }

  /** A builder for the many optional fields. */
  public static Builder of(String op) {
    return new Builder(op);
  }

  /** Collects the fields of an {@link Op}; the log assigns {@code id} and {@code t}. */
  public static final class Builder {
    private final String op;
    private int s;
    private long txn;
    private String iso;
    private Integer tbl;
    private String coord;
    private Integer lo;
    private Integer hi;
    private List<long[]> rows;
    private Long from;
    private Integer sn;
    private String sp;
    private String outcome;
    private String err;
    private Long us;
    private String xid;
    private String kind;
    private String detail;
    private String phase;
    private String br;
    private String target;
    private String strategy;
    private Long merge;

    private Builder(String op) {
      this.op = op;
    }

    public Builder session(int session, long txnNo, String isolation) {
      this.s = session;
      this.txn = txnNo;
      this.iso = isolation;
      return this;
    }

    public Builder branch(String name) {
      this.br = name;
      return this;
    }

    /** A branch's creation: its parent and its cutoff coordinate. */
    public Builder forked(String parent, String cutoff) {
      this.kind = parent;
      this.coord = cutoff;
      return this;
    }

    /** A scratch branch's creation. */
    public Builder scratch() {
      this.detail = "scratch";
      return this;
    }

    /** A merge: source into target with a strategy ({@code strategy/rule}), its id and status. */
    public Builder merge(String source, String into, String strategyAndRule, Long id, String status) {
      this.kind = source;
      this.target = into;
      this.strategy = strategyAndRule;
      this.merge = id;
      this.detail = status;
      return this;
    }

    public Builder table(int table) {
      this.tbl = table;
      return this;
    }

    public Builder read(String coordinate, int low, int high) {
      this.coord = coordinate;
      this.lo = low;
      this.hi = high;
      return this;
    }

    public Builder rows(List<long[]> r) {
      this.rows = r;
      return this;
    }

    public Builder from(long key) {
      this.from = key;
      return this;
    }

    public Builder shadow(int n) {
      this.sn = n;
      return this;
    }

    public Builder savepoint(String name) {
      this.sp = name;
      return this;
    }

    public Builder outcome(String o) {
      this.outcome = o;
      return this;
    }

    public Builder error(String e) {
      this.err = e;
      return this;
    }

    public Builder micros(long m) {
      this.us = m;
      return this;
    }

    public Builder xid(String x) {
      this.xid = x;
      return this;
    }

    public Builder fault(String k, String p, String d) {
      this.kind = k;
      this.phase = p;
      this.detail = d;
      return this;
    }

    /** The op with its number and time. */
    public Op build(long id, long t) {
      return new Op(id, t, s, txn, iso, op, tbl, coord, lo, hi, rows, from, sn, sp, outcome, err, us, xid, kind,
          detail, phase, br, target, strategy, merge);
    }
  }
}
