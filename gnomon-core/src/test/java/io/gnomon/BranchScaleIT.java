package io.gnomon;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * Creating a branch is a catalog row: 20,000 branches created one after another, each in its own transaction, at a
 * flat rate (the last thousand cost about what the first thousand did), and each costs at most 600 bytes of catalog.
 */
class BranchScaleIT extends GnomonIT {
  private static final int BRANCHES = 20_000;
  private static final int CHUNK = 1_000;

  @Test
  void twentyThousandBranchesAreCreatedAtAFlatRate() throws Exception {
    sql("create table t (id int primary key, v int)", "insert into t select g, g from generate_series(1, 1000) g");
    gnomon().track("public.t");
    long[] chunkNanos = new long[BRANCHES / CHUNK];
    try (Connection c = connect();
        PreparedStatement ps = c.prepareStatement("select gnomon.branch_create(?, case when ? then 'main' else ? end)")) {
      for (int i = 0; i < BRANCHES; i++) {
        long start = System.nanoTime();
        ps.setString(1, "b" + i);
        // every tenth branch is a child of the one before it, so nesting grows too
        ps.setBoolean(2, i % 10 != 9);
        ps.setString(3, "b" + (i - 1));
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
        }
        chunkNanos[i / CHUNK] += System.nanoTime() - start;
      }
    }
    long[] sorted = chunkNanos.clone();
    Arrays.sort(sorted);
    double median = sorted[sorted.length / 2];
    double first = (chunkNanos[0] + chunkNanos[1] + chunkNanos[2]) / 3.0;
    double last = (chunkNanos[chunkNanos.length - 1] + chunkNanos[chunkNanos.length - 2] + chunkNanos[chunkNanos.length - 3]) / 3.0;
    System.out.printf("BranchScaleIT: %d branches; per 1000: first %.0f ms, median %.0f ms, last %.0f ms%n",
        BRANCHES, first / 1e6, median / 1e6, last / 1e6);
    // flat: the last chunks cost no more than twice the first ones (a tree or list that grew would show here)
    assertTrue(last < 2.0 * Math.max(first, median), "creation slowed down as branches accumulated: " + Arrays.toString(chunkNanos));
    assertEquals(String.valueOf(BRANCHES), one("select count(*) from gnomon.branch"));
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("vacuum analyze gnomon.branch");
      try (ResultSet rs = st.executeQuery("select pg_total_relation_size('gnomon.branch') / count(*) from gnomon.branch")) {
        rs.next();
        long perBranch = rs.getLong(1);
        System.out.println("BranchScaleIT: catalog bytes per branch (table, indexes, TOAST) = " + perBranch);
        assertTrue(perBranch <= 600, "a branch costs " + perBranch + " bytes of catalog");
      }
    }
    // reading and writing a branch among 20,000 still works
    try (Connection c = connect();
        Statement st = c.createStatement()) {
      st.execute("select gnomon.branch_use('b19999')");
      assertEquals(1, st.executeUpdate("update t set v = 0 where id = 1"));
      try (ResultSet rs = st.executeQuery("select v from t where id = 1")) {
        rs.next();
        assertEquals(0, rs.getInt(1));
      }
    }
  }
}
