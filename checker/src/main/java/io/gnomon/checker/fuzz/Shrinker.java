package io.gnomon.checker.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.gnomon.merge.ColumnType;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Greedy shrinking of a failing case: tries smaller values for base, ours and theirs one at a time (numbers toward
 * zero, fewer lines, elements or keys) and keeps each change under which the same law still fails. Every candidate is
 * strictly smaller, so it ends; a step budget bounds it anyway.
 */
final class Shrinker {
  private static final int MAX_STEPS = 2_000;

  private Shrinker() {}

  static FuzzCase shrink(FuzzCase failing, Law law, Laws laws) {
    FuzzCase current = failing;
    int steps = 0;
    boolean improved = true;
    while (improved && steps < MAX_STEPS) {
      improved = false;
      search:
      for (int slot = 0; slot < 3; slot++) {
        for (Object candidate : candidates(current.slot(slot), current.type())) {
          if (++steps > MAX_STEPS) {
            break search;
          }
          FuzzCase next = current.with(slot, candidate);
          if (laws.check(next, law) != null) {
            current = next;
            improved = true;
            break search;
          }
        }
      }
    }
    return current;
  }

  static List<Object> candidates(Object v, ColumnType type) {
    List<Object> out = new ArrayList<>();
    if (v instanceof Long l) {
      if (l != 0) {
        out.add(0L);
        if (l / 2 != 0) {
          out.add(l / 2);
        }
        out.add(l - Long.signum(l));
      }
    } else if (v instanceof BigDecimal d) {
      if (d.signum() != 0) {
        out.add(BigDecimal.ZERO.setScale(d.scale()));
        BigDecimal half = d.divide(BigDecimal.valueOf(2), d.scale(), RoundingMode.DOWN);
        if (half.compareTo(d) != 0) {
          out.add(half);
        }
        BigDecimal whole = d.setScale(0, RoundingMode.DOWN).setScale(d.scale());
        if (whole.compareTo(d) != 0) {
          out.add(whole);
        }
      }
    } else if (v instanceof String s) {
      List<String> lines = TextOracle.lines(s);
      for (int i = 0; i < lines.size(); i++) {
        List<String> fewer = new ArrayList<>(lines);
        fewer.remove(i);
        out.add(String.join("", fewer));
      }
      if (lines.size() == 1 && s.length() > 1) {
        out.add(s.substring(1));
      }
    } else if (v instanceof List<?> l) {
      for (int i = 0; i < l.size(); i++) {
        List<Object> fewer = new ArrayList<>(l);
        fewer.remove(i);
        out.add(fewer);
      }
    } else if (v instanceof ObjectNode o) {
      for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        ObjectNode fewer = o.deepCopy();
        fewer.remove(k);
        out.add(fewer);
      }
      for (Iterator<String> it = o.fieldNames(); it.hasNext(); ) {
        String k = it.next();
        JsonNode child = o.get(k);
        if (child.isContainerNode()) {
          for (Object smaller : candidates(child, type)) {
            ObjectNode copy = o.deepCopy();
            copy.set(k, (JsonNode) smaller);
            out.add(copy);
          }
          if (child.size() > 0) {
            ObjectNode copy = o.deepCopy();
            copy.set(k, IntNode.valueOf(0));
            out.add(copy);
          }
        }
      }
    } else if (v instanceof ArrayNode a) {
      for (int i = 0; i < a.size(); i++) {
        ArrayNode fewer = a.deepCopy();
        fewer.remove(i);
        out.add(fewer);
      }
    }
    return out;
  }
}
