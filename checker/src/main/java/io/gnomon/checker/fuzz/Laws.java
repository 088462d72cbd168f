package io.gnomon.checker.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import io.gnomon.merge.Column;
import io.gnomon.merge.ColumnType;
import io.gnomon.merge.Conflict;
import io.gnomon.merge.Merge;
import io.gnomon.merge.Resolution;
import io.gnomon.merge.Resolved;
import io.gnomon.merge.Strategy;
import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** Checks one law on one case; a failure is a message, null means the law holds (or does not apply). */
final class Laws {
  private static final Set<String> SYMMETRIC = Set.of("counter", "max", "min", "union", "json", "text", "fail",
      MergeFuzzer.CUSTOM);

  private final Map<String, Strategy> strategies;

  Laws(Map<String, Strategy> strategies) {
    this.strategies = strategies;
  }

  /** Whether the law says anything about this strategy. */
  static boolean applies(Law law, String strategy) {
    return switch (law) {
      case SYMMETRY -> SYMMETRIC.contains(strategy);
      case MIRRORING -> strategy.equals("ours") || strategy.equals("theirs");
      case COUNTER_ARITHMETIC -> strategy.equals("counter");
      default -> true;
    };
  }

  Resolution merge(FuzzCase c, Object b, Object o, Object t) {
    return merge(c.strategy(), c.type(), b, o, t);
  }

  private Resolution merge(String strategy, ColumnType type, Object b, Object o, Object t) {
    return Merge.column(Column.of("c", type), strategies.get(strategy), b, o, t);
  }

  /** Checks a law, catching what the merge throws. */
  String check(FuzzCase c, Law law) {
    return checkAll(c)[law.ordinal()];
  }

  /**
   * Checks every law that applies to the case, merging each combination of inputs once; the failure message of each
   * law by ordinal, null where it holds or does not apply. An exception fails {@link Law#NO_ERROR}.
   */
  String[] checkAll(FuzzCase c) {
    String[] failures = new String[Law.values().length];
    Object b = c.base();
    Object o = c.ours();
    Object t = c.theirs();
    String strategy = c.strategy();
    try {
      failures[Law.IDENTITY.ordinal()] = expect(merge(c, b, b, b), b, "merge(b, b, b)");
      String f = expect(merge(c, b, o, b), o, "merge(b, ours, b)");
      failures[Law.ONE_SIDED.ordinal()] = f != null ? f : expect(merge(c, b, b, t), t, "merge(b, b, theirs)");
      failures[Law.CONVERGENCE.ordinal()] = expect(merge(c, b, o, o), o, "merge(b, ours, ours)");
      Resolution r = merge(c, b, o, t);
      Resolution again = merge(c, b, o, t);
      if (!sameOutcome(r, again, false, true)) {
        failures[Law.DETERMINISM.ordinal()] = "two runs differ: " + show(r) + " then " + show(again);
      }
      if (applies(Law.SYMMETRY, strategy)) {
        Resolution m = merge(c, b, t, o);
        if (!sameOutcome(r, m, strategy.equals("union"), false)) {
          failures[Law.SYMMETRY.ordinal()] =
              "merge(b, ours, theirs) = " + show(r) + " but merge(b, theirs, ours) = " + show(m);
        }
      }
      if (applies(Law.MIRRORING, strategy)) {
        String other = strategy.equals("ours") ? "theirs" : "ours";
        Resolution m = merge(other, c.type(), b, t, o);
        if (!sameOutcome(r, m, false, false)) {
          failures[Law.MIRRORING.ordinal()] =
              strategy + "(b, ours, theirs) = " + show(r) + " but " + other + "(b, theirs, ours) = " + show(m);
        }
      }
      if (applies(Law.COUNTER_ARITHMETIC, strategy)) {
        failures[Law.COUNTER_ARITHMETIC.ordinal()] = counter(c, r);
      }
      failures[Law.NO_LOSS.ordinal()] = noLoss(c, r);
    } catch (RuntimeException e) {
      failures[Law.NO_ERROR.ordinal()] = "threw " + e;
    }
    return failures;
  }

  private static String expect(Resolution r, Object expected, String what) {
    if (r instanceof Resolved v && Merge.same(v.value(), expected)) {
      return null;
    }
    return what + " should be " + FuzzCase.show(expected) + " but is " + show(r);
  }

  /** Both conflicts (with the same reason when {@code strict}), or both resolved to the same value. */
  private static boolean sameOutcome(Resolution r1, Resolution r2, boolean asMultiset, boolean strict) {
    if (r1 instanceof Conflict c1) {
      return r2 instanceof Conflict c2 && (!strict || c1.equals(c2));
    }
    if (!(r2 instanceof Resolved v2)) {
      return false;
    }
    Object a = ((Resolved) r1).value();
    if (asMultiset && a instanceof List<?> x && v2.value() instanceof List<?> y) {
      return counts(x).equals(counts(y));
    }
    return Merge.same(a, v2.value());
  }

  private String counter(FuzzCase c, Resolution r) {
    Object b = c.base();
    Object o = c.ours();
    Object t = c.theirs();
    if (Merge.same(o, b) || Merge.same(t, b) || Merge.same(o, t)) {
      return null; // the per-column rule, not the counter, answers
    }
    if (o == null || t == null) {
      return r instanceof Conflict ? null : "a NULL side must conflict, got " + show(r);
    }
    BigDecimal exact = dec(o).add(dec(t)).subtract(b == null ? BigDecimal.ZERO : dec(b));
    ColumnType type = c.type();
    boolean fits;
    if (type.isInteger()) {
      BigInteger i = exact.toBigIntegerExact();
      fits = i.compareTo(BigInteger.valueOf(type.minValue())) >= 0
          && i.compareTo(BigInteger.valueOf(type.maxValue())) <= 0;
    } else if (type.precision() > 0) {
      BigDecimal s = exact.signum() == 0 ? BigDecimal.ZERO : exact.stripTrailingZeros();
      fits = s.scale() <= type.scale()
          && s.abs().compareTo(BigDecimal.TEN.pow(type.precision() - type.scale())) < 0;
    } else {
      fits = true;
    }
    if (fits) {
      return r instanceof Resolved v && v.value() instanceof Number n && dec(n).compareTo(exact) == 0 ? null
          : "expected " + exact.toPlainString() + " (fits " + type + ") but got " + show(r);
    }
    return r instanceof Conflict ? null : "expected a conflict: " + exact.toPlainString() + " does not fit " + type
        + ", but got " + show(r);
  }

  private String noLoss(FuzzCase c, Resolution r) {
    Object b = c.base();
    Object o = c.ours();
    Object t = c.theirs();
    if (r instanceof Conflict k) {
      if (!"c".equals(k.column()) || !Merge.same(k.base(), b) || !Merge.same(k.ours(), o)
          || !Merge.same(k.theirs(), t) || !c.strategy().equals(k.strategy())) {
        return "the conflict does not report the column, strategy and inputs: " + k;
      }
    }
    if (Merge.same(o, b) || Merge.same(t, b) || Merge.same(o, t)) {
      return null; // one-sided and convergence cover these
    }
    Object v = r instanceof Resolved x ? x.value() : null;
    switch (c.strategy()) {
      case "fail":
        return r instanceof Conflict ? null : "fail must conflict when both sides changed, got " + show(r);
      case "ours":
        return expect(r, o, "ours");
      case "theirs":
        return expect(r, t, "theirs");
      case "max":
      case "min": {
        if (r instanceof Conflict) {
          return "max/min never conflict, got " + show(r);
        }
        if (!Merge.same(v, o) && !Merge.same(v, t)) {
          return "the result " + FuzzCase.show(v) + " is neither side's value";
        }
        int sign = c.strategy().equals("max") ? 1 : -1;
        for (Object side : new Object[] {o, t}) {
          if (side != null && (v == null || compare(side, v) * sign > 0)) {
            return c.strategy() + " lost " + FuzzCase.show(side) + ": the result is " + FuzzCase.show(v);
          }
        }
        return null;
      }
      case "union":
        return r instanceof Resolved && o != null && t != null ? union(b, o, t, v) : null;
      case "json":
        return json(b, o, t, r);
      case "text":
        return TextOracle.check(b, o, t, r);
      default:
        return null;
    }
  }

  private static String union(Object b, Object o, Object t, Object v) {
    Map<Object, Integer> bc = b == null ? Map.of() : counts((List<?>) b);
    Map<Object, Integer> oc = counts((List<?>) o);
    Map<Object, Integer> tc = counts((List<?>) t);
    Map<Object, Integer> rc = counts((List<?>) v);
    Set<Object> all = new LinkedHashSet<>(bc.keySet());
    all.addAll(oc.keySet());
    all.addAll(tc.keySet());
    all.addAll(rc.keySet());
    for (Object e : all) {
      int bn = bc.getOrDefault(e, 0);
      int on = oc.getOrDefault(e, 0);
      int tn = tc.getOrDefault(e, 0);
      int rn = rc.getOrDefault(e, 0);
      boolean ok;
      if (on == bn) {
        ok = rn == tn;
      } else if (tn == bn) {
        ok = rn == on;
      } else if (on > bn && tn > bn) {
        ok = rn >= Math.max(on, tn);
      } else if (on < bn && tn < bn) {
        ok = rn <= Math.min(on, tn);
      } else {
        ok = rn == on + tn - bn;
      }
      if (!ok) {
        return "element " + e + ": base has " + bn + ", ours " + on + ", theirs " + tn + ", the result " + rn;
      }
    }
    return null;
  }

  /** Over objects: every key changed on one side only has that side's value; a conflict needs a key both changed. */
  private static String json(Object b, Object o, Object t, Resolution r) {
    if (!(o instanceof JsonNode on && on.isObject() && t instanceof JsonNode tn && tn.isObject())) {
      return null;
    }
    JsonNode bn = b instanceof JsonNode x && x.isObject() ? x : b == null ? EMPTY : null;
    if (bn == null) {
      return null;
    }
    Set<String> keys = new LinkedHashSet<>();
    bn.fieldNames().forEachRemaining(keys::add);
    on.fieldNames().forEachRemaining(keys::add);
    tn.fieldNames().forEachRemaining(keys::add);
    boolean bothChangedSomeKey = false;
    for (String k : keys) {
      JsonNode bv = bn.get(k);
      JsonNode ov = on.get(k);
      JsonNode tv = tn.get(k);
      JsonNode expected;
      if (same(ov, bv)) {
        expected = tv;
      } else if (same(tv, bv) || same(ov, tv)) {
        expected = ov;
      } else {
        bothChangedSomeKey = true;
        continue;
      }
      if (r instanceof Resolved v && !same(((JsonNode) v.value()).get(k), expected)) {
        return "key " + k + " changed on one side only (to " + (expected == null ? "absent" : expected)
            + ") but the result has " + ((JsonNode) v.value()).get(k);
      }
    }
    if (r instanceof Conflict && !bothChangedSomeKey) {
      return "a conflict although no key was changed differently on both sides: " + show(r);
    }
    return null;
  }

  private static final JsonNode EMPTY = com.fasterxml.jackson.databind.node.JsonNodeFactory.instance.objectNode();

  private static boolean same(JsonNode a, JsonNode b) {
    return a == null ? b == null : b != null && Merge.same(a, b);
  }

  private static int compare(Object a, Object b) {
    if (a instanceof Number x && b instanceof Number y) {
      return dec(x).compareTo(dec(y));
    }
    return ((String) a).compareTo((String) b);
  }

  private static BigDecimal dec(Object n) {
    return n instanceof BigDecimal d ? d : BigDecimal.valueOf(((Number) n).longValue());
  }

  static Map<Object, Integer> counts(List<?> l) {
    Map<Object, Integer> m = new HashMap<>();
    for (Object e : l) {
      Object k = e instanceof BigDecimal d ? (d.signum() == 0 ? BigDecimal.ZERO : d.stripTrailingZeros()) : e;
      m.merge(k, 1, Integer::sum);
    }
    return m;
  }

  static String show(Resolution r) {
    if (r instanceof Resolved v) {
      return FuzzCase.show(v.value());
    }
    Conflict c = (Conflict) r;
    return "conflict (" + c.reason() + ")";
  }
}
