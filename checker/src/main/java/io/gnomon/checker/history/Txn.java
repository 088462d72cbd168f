package io.gnomon.checker.history;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * One transaction of the history: its ops in order and what follows from them: how the client saw it end, the
 * changes it kept, and, for each read, its own changes that the read had to see on top of the coordinate.
 */
public final class Txn {
  /** How the client saw a transaction end. */
  public enum Reported {
    /** COMMIT returned: the commit was acknowledged. */
    ACKNOWLEDGED,
    /** The connection was lost while COMMIT was under way: committed or not, only the server knows. */
    UNKNOWN,
    /** Rolled back, or failed before or at COMMIT with an error from the server. */
    ABORTED
  }

  private final long no;
  private final List<Op> ops = new ArrayList<>();
  private List<Write> writes;
  private Map<Long, Map<Long, Long>> overlays;

  Txn(long no) {
    this.no = no;
  }

  void add(Op op) {
    ops.add(op);
  }

  /** The transaction's number. */
  public long no() {
    return no;
  }

  /** Its ops, in order. */
  public List<Op> ops() {
    return ops;
  }

  /** Its session. */
  public int session() {
    return ops.get(0).s();
  }

  /** The branch it worked on, or null for main. */
  public String branch() {
    return ops.get(0).br();
  }

  /** Its isolation level. */
  public String isolation() {
    return ops.get(0).iso();
  }

  /** The 64-bit id of a writing transaction, as logged at its begin; null for read-only ones. */
  public Long xid() {
    for (Op op : ops) {
      if ("begin".equals(op.op()) && op.xid() != null) {
        return Long.parseLong(op.xid());
      }
    }
    return null;
  }

  /** How the client saw it end. */
  public Reported reported() {
    Op last = ops.get(ops.size() - 1);
    if ("commit".equals(last.op())) {
      return switch (last.outcome()) {
        case "ok" -> Reported.ACKNOWLEDGED;
        case "unknown" -> Reported.UNKNOWN;
        default -> Reported.ABORTED;
      };
    }
    return Reported.ABORTED;
  }

  /** The end op (commit, rollback or abort), or null when the log ends inside the transaction. */
  public Op end() {
    Op last = ops.get(ops.size() - 1);
    return switch (last.op()) {
      case "commit", "rollback", "abort" -> last;
      default -> null;
    };
  }

  /** The row changes it kept, in statement order: what its versions must be if it committed. */
  public List<Write> writes() {
    derive();
    return writes;
  }

  /**
   * The transaction's own kept changes to a read's table at the time of the read, which the read saw on top of its
   * coordinate: key to value, null for a deleted key. Empty when it had changed nothing there.
   */
  public Map<Long, Long> overlay(Op read) {
    derive();
    return overlays.getOrDefault(read.id(), Map.of());
  }

  private void derive() {
    if (writes != null) {
      return;
    }
    List<Write> kept = new ArrayList<>();
    List<String> names = new ArrayList<>();
    List<Integer> marks = new ArrayList<>();
    Map<Long, Map<Long, Long>> byRead = new HashMap<>();
    for (Op op : ops) {
      switch (op.op()) {
        case "savepoint" -> {
          if (op.ok()) {
            names.add(op.sp());
            marks.add(kept.size());
          }
        }
        case "rollback_to", "release" -> {
          int at = names.lastIndexOf(op.sp());
          if (op.ok() && at >= 0) {
            if ("rollback_to".equals(op.op())) {
              kept.subList(marks.get(at), kept.size()).clear();
              keep(names, at + 1);
              keep(marks, at + 1);
            } else {
              keep(names, at);
              keep(marks, at);
            }
          }
        }
        case "read" -> {
          if (op.ok()) {
            Map<Long, Long> mine = new HashMap<>();
            for (Write w : kept) {
              if (w.tbl() == op.tbl()) {
                mine.put(w.key(), w.value());
              }
            }
            if (!mine.isEmpty()) {
              byRead.put(op.id(), mine);
            }
          }
        }
        default -> {
          if (op.isWrite() && op.ok() && op.rows() != null) {
            for (long[] r : op.rows()) {
              switch (op.op()) {
                case "insert" -> kept.add(new Write(op.tbl(), r[0], 'I', r[1], op.id()));
                case "update" -> kept.add(new Write(op.tbl(), r[0], 'U', r[1], op.id()));
                case "delete" -> kept.add(new Write(op.tbl(), r[0], 'D', null, op.id()));
                case "merge_write" -> kept.add(new Write(op.tbl(), r[0], "IUD".charAt((int) r[2]),
                    r[2] == 2 ? null : r[1], op.id()));
                case "rekey" -> {
                  kept.add(new Write(op.tbl(), op.from(), 'D', null, op.id()));
                  kept.add(new Write(op.tbl(), r[0], 'I', r[1], op.id()));
                }
                default -> throw new IllegalStateException(op.op());
              }
            }
          }
        }
      }
    }
    writes = List.copyOf(kept);
    overlays = byRead;
  }

  private static <T> void keep(List<T> list, int size) {
    list.subList(size, list.size()).clear();
  }
}
