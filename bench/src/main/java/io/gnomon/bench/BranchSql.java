package io.gnomon.bench;

/**
 * Server-side loops the branches group installs in schema {@code bench}: each times itself with {@code
 * clock_timestamp()} and returns microseconds per iteration. A branch id of {@code null} runs the same loop on main
 * (the tracked table itself), so both sides of a pair go through one function of one shape; a branch id runs it on
 * the branch view {@code gnomon_b_public.pgbench_accounts} with {@code gnomon.branch} set, as
 * {@code gnomon.branch_use} does. Keys follow {@link ServerSql#key}.
 */
final class BranchSql {
  static final String VIEW = "gnomon_b_public.pgbench_accounts";

  private BranchSql() {}

  /** Point reads on main or on a branch (plan cached by the loop, as a prepared statement's would be). */
  static String readLoop(int rows) {
    return "create or replace function bench.branch_read_loop(branch int, n int) returns double precision\n"
        + "language plpgsql as $$\n"
        + "declare t0 timestamptz; v int;\n"
        + "begin\n"
        + "  perform set_config('gnomon.branch', coalesce(branch::text, ''), true);\n"
        + "  t0 := clock_timestamp();\n"
        + "  if branch is null then\n"
        + "    for i in 0..n-1 loop\n"
        + "      select abalance into v from public.pgbench_accounts where aid = " + ServerSql.key("i", rows) + ";\n"
        + "    end loop;\n"
        + "  else\n"
        + "    for i in 0..n-1 loop\n"
        + "      select abalance into v from " + VIEW + " where aid = " + ServerSql.key("i", rows) + ";\n"
        + "    end loop;\n"
        + "  end if;\n"
        + "  return extract(epoch from clock_timestamp() - t0) * 1e6 / n;\n"
        + "end $$";
  }

  /** Single-row UPDATEs on main or on a branch, each committed. */
  static String updateLoop(int rows) {
    return "create or replace procedure bench.branch_update_loop(branch int, n int, first int,"
        + " inout us double precision default null)\n"
        + "language plpgsql as $$\n"
        + "declare t0 timestamptz;\n"
        + "begin\n"
        + "  perform set_config('gnomon.branch', coalesce(branch::text, ''), false);\n"
        + "  t0 := clock_timestamp();\n"
        + "  for i in 0..n-1 loop\n"
        + "    if branch is null then\n"
        + "      update public.pgbench_accounts set abalance = abalance + 1 where aid = " + ServerSql.key("first + i", rows)
        + ";\n"
        + "    else\n"
        + "      update " + VIEW + " set abalance = abalance + 1 where aid = " + ServerSql.key("first + i", rows) + ";\n"
        + "    end if;\n"
        + "    commit;\n"
        + "  end loop;\n"
        + "  us := extract(epoch from clock_timestamp() - t0) * 1e6 / n;\n"
        + "end $$";
  }

  /** The table a committed single-row INSERT goes to: a key and a unique name, like a branch's catalog row. */
  static final String INSERT_TABLE =
      "create table bench.insert_commit (id bigint generated always as identity primary key, name text not null unique,"
          + " created_at timestamptz not null default clock_timestamp())";

  /** n branches created from main (gnomon.branch_create), or n single-row INSERTs, each committed. */
  static String createLoop() {
    return "create or replace procedure bench.create_loop(n int, prefix text, branches boolean,"
        + " inout us double precision default null)\n"
        + "language plpgsql as $$\n"
        + "declare t0 timestamptz := clock_timestamp();\n"
        + "begin\n"
        + "  for i in 0..n-1 loop\n"
        + "    if branches then\n"
        + "      perform gnomon.branch_create(prefix || i);\n"
        + "    else\n"
        + "      insert into bench.insert_commit (name) values (prefix || i);\n"
        + "    end if;\n"
        + "    commit;\n"
        + "  end loop;\n"
        + "  us := extract(epoch from clock_timestamp() - t0) * 1e6 / n;\n"
        + "end $$";
  }

  /** Writes {@code abalance + 1} on a branch for the keys {@code aid % modulus = remainder}, one UPDATE per key. */
  static String writeOnBranch(int branch, int modulus, int remainder, int rows) {
    return "do $$ begin\n"
        + "  perform set_config('gnomon.branch', '" + branch + "', true);\n"
        + "  for k in " + (remainder == 0 ? modulus : remainder) + ".." + rows + " by " + modulus + " loop\n"
        + "    update " + VIEW + " set abalance = abalance + 1 where aid = k;\n"
        + "  end loop;\n"
        + "end $$";
  }
}
