package io.gnomon.checker.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import io.gnomon.merge.ColumnType;
import java.util.List;

/** One generated case: a strategy, a column type and the three values. */
record FuzzCase(String strategy, ColumnType type, Object base, Object ours, Object theirs) {

  FuzzCase with(int slot, Object value) {
    return switch (slot) {
      case 0 -> new FuzzCase(strategy, type, value, ours, theirs);
      case 1 -> new FuzzCase(strategy, type, base, value, theirs);
      default -> new FuzzCase(strategy, type, base, ours, value);
    };
  }

  Object slot(int slot) {
    return slot == 0 ? base : slot == 1 ? ours : theirs;
  }

  /** The case as a reader can paste it into a test. */
  String describe() {
    return "strategy " + strategy + ", column type " + type + "\n    base   = " + show(base) + "\n    ours   = "
        + show(ours) + "\n    theirs = " + show(theirs);
  }

  static String show(Object v) {
    if (v == null) {
      return "NULL";
    }
    if (v instanceof String s) {
      return com.fasterxml.jackson.databind.node.TextNode.valueOf(s).toString();
    }
    if (v instanceof JsonNode j) {
      return j.toString();
    }
    if (v instanceof List<?> l) {
      StringBuilder b = new StringBuilder("[");
      for (int i = 0; i < l.size(); i++) {
        b.append(i == 0 ? "" : ", ").append(show(l.get(i)));
      }
      return b.append(']').toString();
    }
    return v.getClass().getSimpleName() + " " + v;
  }
}
