package io.gnomon.checker.report;

import io.gnomon.checker.history.History;
import io.gnomon.checker.history.Op;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Per-second series of a history, for the plots: transactions ending per second by outcome, and commit latency
 * percentiles; and the faults as intervals.
 */
final class Series {
  /** A fault from its start to the moment the server served again. */
  record Fault(double from, double to, String kind, String detail) {}

  final int seconds;
  final double[] committed;
  final double[] failed;
  final double[] unknown;
  final double[] p50;
  final double[] p95;
  final double[] max;
  final List<Fault> faults = new ArrayList<>();

  Series(History h) {
    long last = h.ops().isEmpty() ? 0 : h.ops().get(h.ops().size() - 1).t();
    seconds = (int) (last / 1000) + 1;
    committed = new double[seconds];
    failed = new double[seconds];
    unknown = new double[seconds];
    p50 = new double[seconds];
    p95 = new double[seconds];
    max = new double[seconds];
    List<List<Double>> lat = new ArrayList<>();
    for (int i = 0; i < seconds; i++) {
      lat.add(new ArrayList<>());
    }
    Op open = null;
    for (Op op : h.ops()) {
      int s = (int) (op.t() / 1000);
      switch (op.op()) {
        case "commit" -> {
          switch (op.outcome()) {
            case "ok" -> {
              committed[s]++;
              if (op.us() != null) {
                lat.get(s).add(op.us() / 1000.0);
              }
            }
            case "unknown" -> unknown[s]++;
            default -> failed[s]++;
          }
        }
        case "rollback", "abort" -> failed[s]++;
        case "fault" -> {
          if ("start".equals(op.phase())) {
            open = op;
          } else if (open != null) {
            faults.add(new Fault(open.t() / 1000.0, op.t() / 1000.0, op.kind(), op.detail()));
            open = null;
          }
        }
        default -> { }
      }
    }
    if (open != null) {
      faults.add(new Fault(open.t() / 1000.0, last / 1000.0, open.kind(), open.detail()));
    }
    for (int i = 0; i < seconds; i++) {
      double[] l = lat.get(i).stream().mapToDouble(Double::doubleValue).sorted().toArray();
      if (l.length > 0) {
        p50[i] = l[(int) Math.floor((l.length - 1) * 0.5)];
        p95[i] = l[(int) Math.floor((l.length - 1) * 0.95)];
        max[i] = l[l.length - 1];
      }
    }
  }

  static double top(double[]... series) {
    return Arrays.stream(series).flatMapToDouble(Arrays::stream).max().orElse(1);
  }
}
