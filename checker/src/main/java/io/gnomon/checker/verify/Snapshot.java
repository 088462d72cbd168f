package io.gnomon.checker.verify;

import java.util.Arrays;

/** A coordinate's snapshot, for deciding which transactions it saw as committed. */
record Snapshot(long xmin, long xmax, long[] xip) {

  /** Parses {@code v1:xmin:xmax:xip,...}. */
  static Snapshot parse(String coordinate) {
    String[] p = coordinate.split(":", -1);
    if (p.length == 5 && "v2".equals(p[0])) { // v2:incarnation:xmin:xmax:xip
      p = new String[] {"v1", p[2], p[3], p[4]};
    }
    if (p.length != 4 || !"v1".equals(p[0])) {
      throw new IllegalArgumentException("malformed coordinate " + coordinate);
    }
    long[] xip = p[3].isEmpty() ? new long[0] : Arrays.stream(p[3].split(",")).mapToLong(Long::parseLong).toArray();
    return new Snapshot(Long.parseLong(p[1]), Long.parseLong(p[2]), xip);
  }

  /** Whether a transaction that committed is visible: it had committed when the snapshot was taken. */
  boolean sees(long xid) {
    if (xid < xmin) {
      return true;
    }
    if (xid >= xmax) {
      return false;
    }
    return Arrays.binarySearch(xip, xid) < 0;
  }

  /** Whether the transaction was running when the snapshot was taken. */
  boolean inProgress(long xid) {
    return xid >= xmin && xid < xmax && Arrays.binarySearch(xip, xid) >= 0;
  }
}
