package io.gnomon.checker.verify;

import io.gnomon.checker.history.Op;
import io.gnomon.checker.history.Txn;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A merge loses nothing. For every merge (a branch into main, main into a branch, a branch into another), each key's
 * result (the target read in the merge's own transaction, after it) is what the three-way rule gives from the base
 * (read at the base point Gnomon recorded for the merge), ours (the target before the merge) and theirs (the source),
 * all read in that transaction, with the strategy and delete-against-update rule the merge ran with: a key the source
 * did not change keeps ours; a one-sided change wins; equal changes converge; both sides changed the value: the
 * strategy decides ({@code theirs}, {@code ours}, {@code max}, {@code counter}: base + both deltas) or, for {@code
 * fail}, it is a conflict; a delete against an update: the rule decides ({@code delete_wins}, {@code update_wins}) or,
 * for {@code conflict}, it is a conflict. The conflicts Gnomon reports must be exactly the rule's; a merge with
 * conflicts must change nothing; a merge run again after the conflicts were resolved takes each resolution ({@code
 * ours}, {@code theirs}, {@code base}, or a value).
 */
final class MergeCheck {
  private MergeCheck() {}

  /** What the rule gives for a key: a value (null: no row), or a conflict of a kind. */
  record Expected(Long value, int conflict) {
    static final int NONE = -1;
    static final int COLUMN = 0;
    static final int DELETE_VS_UPDATE = 1;
    static final int UPDATE_VS_DELETE = 2;

    static Expected of(Long v) {
      return new Expected(v, NONE);
    }
  }

  /** One gnomon.merge call in a merge transaction, with what was read after it. */
  private static final class Block {
    final Op merge;
    final Map<Integer, Map<Long, Long>> base = new TreeMap<>();
    final Map<Integer, Map<Long, Long>> result = new TreeMap<>();
    final Map<Integer, Map<Long, Long>> conflicts = new TreeMap<>(); // key → kind
    final Map<Integer, Map<Long, long[]>> resolutions = new TreeMap<>(); // declared after it: key → [choice, value]

    Block(Op merge) {
      this.merge = merge;
    }
  }

  static void run(Context c, Findings f) {
    long keys = 0;
    long merges = 0;
    long conflicts = 0;
    long resolved = 0;
    for (Txn t : c.o.history().txns()) {
      Map<Integer, Map<Long, Long>> ours = new TreeMap<>();
      Map<Integer, Map<Long, Long>> theirs = new TreeMap<>();
      List<Block> blocks = new ArrayList<>();
      for (Op op : t.ops()) {
        Block b = blocks.isEmpty() ? null : blocks.get(blocks.size() - 1);
        switch (op.op()) {
          case "merge" -> blocks.add(new Block(op));
          case "merge_ours" -> ours.put(op.tbl(), map(op.rows()));
          case "merge_theirs" -> theirs.put(op.tbl(), map(op.rows()));
          case "merge_base" -> b.base.put(op.tbl(), map(op.rows()));
          case "merge_result" -> b.result.put(op.tbl(), map(op.rows()));
          case "merge_conflicts" -> b.conflicts.put(op.tbl(), map(op.rows()));
          case "merge_resolve" -> {
            Map<Long, long[]> r = b.resolutions.computeIfAbsent(op.tbl(), x -> new HashMap<>());
            for (long[] row : op.rows()) {
              r.put(row[0], new long[] {row[1], row[2]});
            }
          }
          default -> {
            // the transaction's other ops
          }
        }
      }
      Block previous = null;
      for (Block b : blocks) {
        Map<Integer, Map<Long, long[]>> declared = previous == null ? Map.of() : previous.resolutions;
        previous = b;
        if (b.result.size() < ours.size()) {
          continue; // the merge failed before it was read back
        }
        merges++;
        String[] sr = b.merge.strategy().split("/");
        boolean stopped = b.merge.detail() != null && b.merge.detail().startsWith("conflicts");
        for (int tbl : ours.keySet()) {
          Map<Long, Long> base = b.base.getOrDefault(tbl, Map.of());
          Map<Long, Long> o = ours.get(tbl);
          Map<Long, Long> th = theirs.getOrDefault(tbl, Map.of());
          Map<Long, Long> result = b.result.get(tbl);
          Map<Long, Long> reported = b.conflicts.getOrDefault(tbl, Map.of());
          Map<Long, long[]> resolutions = declared.getOrDefault(tbl, Map.of());
          conflicts += reported.size();
          TreeSet<Long> all = new TreeSet<>();
          for (Map<Long, Long> side : List.of(base, o, th, result)) {
            all.addAll(side.keySet());
          }
          for (long k : all) {
            keys++;
            Long bv = base.get(k);
            Long ov = o.get(k);
            Long tv = th.get(k);
            Expected e = expected(bv, ov, tv, sr[0], sr[1]);
            long[] resolution = resolutions.get(k);
            if (e.conflict() != Expected.NONE && resolution != null) {
              resolved++;
              e = resolve(e, bv, ov, tv, resolution);
            }
            Long got = result.get(k);
            String what = c.name(t) + " merged " + b.merge.kind() + " into " + b.merge.target() + " (merge "
                + b.merge.merge() + ", strategy " + sr[0] + ", rule " + sr[1] + ": " + b.merge.detail() + "): key "
                + k + " of " + Context.table(tbl) + " was " + show(bv) + " at the base, " + show(ov) + " in the target, "
                + show(tv) + " in the source";
            Long kind = reported.get(k);
            if (e.conflict() != Expected.NONE && (kind == null || kind != e.conflict())) {
              Expected x = e;
              f.violation("merge-conflict-missed", () -> what + ", so the merge must report a " + kind(x.conflict())
                  + " conflict, but it reported " + (kind == null ? "none" : "a " + kind(kind.intValue()) + " one"));
            } else if (e.conflict() == Expected.NONE && kind != null) {
              Expected x = e;
              f.violation("merge-conflict-spurious", () -> what + ", so the merge must leave " + show(x.value())
                  + " without a conflict, but it reported a " + kind(kind.intValue()) + " conflict");
            }
            if (stopped) {
              if (!Objects.equals(got, ov)) {
                f.violation("merge-changed-on-conflict", () -> what + "; the merge reported conflicts, so it must "
                    + "change nothing, but the target holds " + show(got) + " after it");
              }
            } else if (e.conflict() == Expected.NONE && !Objects.equals(e.value(), got)) {
              Expected x = e;
              String lost = Objects.equals(got, ov) && !Objects.equals(tv, bv) ? "the source's change"
                  : Objects.equals(got, tv) && !Objects.equals(ov, bv) ? "the target's change" : "a change";
              f.violation("merge-lost-change", () -> what + (resolution == null ? "" : ", resolved with "
                  + List.of("ours", "theirs", "base", "value " + resolution[1]).get((int) resolution[0]))
                  + ", so the merge must leave " + show(x.value()) + ", but the target holds " + show(got)
                  + " after it: " + lost + " was lost, and no conflict was reported");
            }
          }
        }
      }
    }
    f.checked("merges checked", merges);
    f.checked("keys of merges checked against the three-way rule", keys);
    f.checked("merge conflicts reported", conflicts);
    f.checked("merge conflicts resolved and merged again", resolved);
  }

  /** The three-way rule for a table {@code (id, v)}: null is an absent row. */
  static Expected expected(Long base, Long ours, Long theirs, String strategy, String rule) {
    if (Objects.equals(theirs, base)) {
      return Expected.of(ours); // the source did not change the key
    }
    if (base == null) {
      return ours == null || ours.equals(theirs) ? Expected.of(theirs) : column(null, ours, theirs, strategy);
    }
    if (theirs == null) { // the source deleted the row
      if (ours == null || ours.equals(base)) {
        return Expected.of(null);
      }
      return switch (rule) {
        case "delete_wins" -> Expected.of(null);
        case "update_wins" -> Expected.of(ours);
        default -> new Expected(null, Expected.DELETE_VS_UPDATE);
      };
    }
    if (ours == null) { // the target deleted the row, the source updated it
      return switch (rule) {
        case "delete_wins" -> Expected.of(null);
        case "update_wins" -> Expected.of(theirs);
        default -> new Expected(null, Expected.UPDATE_VS_DELETE);
      };
    }
    return ours.equals(theirs) ? Expected.of(ours) : column(base, ours, theirs, strategy);
  }

  /** The value column, both rows present (base null for two inserts): the per-column rule, then the strategy. */
  private static Expected column(Long base, long ours, long theirs, String strategy) {
    if (Objects.equals(base, ours)) {
      return Expected.of(theirs);
    }
    long b = base == null ? 0 : base;
    return switch (strategy) {
      case "theirs" -> Expected.of(theirs);
      case "ours" -> Expected.of(ours);
      case "max" -> Expected.of(Math.max(ours, theirs));
      case "counter" -> Expected.of(b + (ours - b) + (theirs - b));
      default -> new Expected(null, Expected.COLUMN);
    };
  }

  /** A declared resolution: {@code [choice (0 ours, 1 theirs, 2 base, 3 value), value]}. */
  private static Expected resolve(Expected e, Long base, Long ours, Long theirs, long[] r) {
    return Expected.of(switch ((int) r[0]) {
      case 0 -> ours;
      case 1 -> theirs;
      case 2 -> base;
      default -> r[1];
    });
  }

  private static String kind(int k) {
    return List.of("column", "delete_vs_update", "update_vs_delete").get(k);
  }

  private static Map<Long, Long> map(List<long[]> rows) {
    Map<Long, Long> out = new TreeMap<>();
    for (long[] r : rows) {
      out.put(r[0], r[1]);
    }
    return out;
  }

  private static String show(Long v) {
    return v == null ? "absent" : "v=" + v;
  }
}
