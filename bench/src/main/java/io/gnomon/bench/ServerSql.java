package io.gnomon.bench;

/**
 * Server-side loops the write-read group installs in schema {@code bench} of both databases: each
 * times itself with {@code clock_timestamp()} and returns microseconds per iteration. Keys follow
 * {@code 1 + (i * 7919) mod rows}, a permutation of the table's keys, so both sides touch the same
 * rows in the same order.
 */
final class ServerSql {
  private ServerSql() {}

  static String key(String i, int rows) {
    return "1 + ((" + i + ")::bigint * 7919 % " + rows + ")::int";
  }

  /** Single-row UPDATEs, each committed: a procedure with COMMIT in the loop. */
  static String updateLoop(int rows) {
    return "create or replace procedure bench.update_loop(n int, first int, inout us double precision default null)\n"
        + "language plpgsql as $$\n"
        + "declare t0 timestamptz := clock_timestamp();\n"
        + "begin\n"
        + "  for i in 0..n-1 loop\n"
        + "    update public.pgbench_accounts set abalance = abalance + 1 where aid = " + key("first + i", rows) + ";\n"
        + "    commit;\n"
        + "  end loop;\n"
        + "  us := extract(epoch from clock_timestamp() - t0) * 1e6 / n;\n"
        + "end $$";
  }

  /** Point reads, as of a coordinate or of the live table, with a given plan_cache_mode. */
  static String readLoop(int rows) {
    return readLoop(rows, "bench.read_loop", "gnomon_t.pgbench_accounts_as_of");
  }

  /** The same loop, named {@code name}, reading as of the coordinate through the function {@code asOf}. */
  static String readLoop(int rows, String name, String asOf) {
    return "create or replace function " + name + "(c text, n int, mode text, past boolean) returns double precision\n"
        + "language plpgsql as $$\n"
        + "declare t0 timestamptz; v int;\n"
        + "begin\n"
        + "  perform set_config('plan_cache_mode', mode, true);\n"
        + "  t0 := clock_timestamp();\n"
        + "  if past then\n"
        + "    for i in 0..n-1 loop\n"
        + "      select abalance into v from " + asOf + "(c) where aid = " + key("i", rows) + ";\n"
        + "    end loop;\n"
        + "  else\n"
        + "    for i in 0..n-1 loop\n"
        + "      select abalance into v from public.pgbench_accounts where aid = " + key("i", rows) + ";\n"
        + "    end loop;\n"
        + "  end if;\n"
        + "  return extract(epoch from clock_timestamp() - t0) * 1e6 / n;\n"
        + "end $$";
  }
}
