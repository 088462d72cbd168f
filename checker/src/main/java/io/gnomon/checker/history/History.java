package io.gnomon.checker.history;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** A history read back: its ops, its transactions by number, and the faults. */
public final class History {
  private final List<Op> ops;
  private final Map<Long, Txn> txns = new LinkedHashMap<>();
  private final List<Op> faults = new ArrayList<>();
  private final List<Op> branches = new ArrayList<>();

  private History(List<Op> ops) {
    this.ops = ops.stream().sorted(Comparator.comparingLong(Op::id)).toList();
    for (Op op : this.ops) {
      if ("fault".equals(op.op())) {
        faults.add(op);
      } else if ("branch".equals(op.op())) {
        branches.add(op);
      } else if (op.txn() > 0) {
        txns.computeIfAbsent(op.txn(), Txn::new).add(op);
      }
    }
  }

  /** The history of these ops (in any order; they are sorted by number). */
  public static History of(List<Op> ops) {
    return new History(ops);
  }

  /** Every op by number. */
  public List<Op> ops() {
    return ops;
  }

  /** Every transaction, in the order of their first op. */
  public Iterable<Txn> txns() {
    return txns.values();
  }

  /** How many transactions. */
  public int txnCount() {
    return txns.size();
  }

  /** The transaction numbered {@code no}, or null. */
  public Txn txn(long no) {
    return txns.get(no);
  }

  /** The branches created during the run, in order: {@code br} its name, {@code kind} its parent, {@code coord} its
   * cutoff. */
  public List<Op> branches() {
    return branches;
  }

  /** The faults, in order (a start op and an end op for each). */
  public List<Op> faults() {
    return faults;
  }
}
