-- Branches: named copy-on-write lines of history, forked from main or from another branch at a coordinate.
--
-- Storage, per tracked table (created by gnomon.install_branch_objects):
--   gnomon_t.<t>_b   the rows written on branches: one row per (branch, key), updated in place, a tombstone
--                    (g_del) for a key deleted on the branch; g_cxid is the transaction that created the row, g_xid
--                    the last one that wrote it. Range-partitioned on the branch id: logged branches (ids > 0) in a
--                    logged partition, scratch branches (ids < 0) in an unlogged one.
--   gnomon_t.<t>_bh  the branch rows' history: the image from before each write ('U'), or 'I' when the write
--                    created the branch row; partitioned the same way.
-- Reads: gnomon_t.<t>_at(point) is the table at a gnomon.point; the view gnomon_b_<schema>.<table> is the table on
-- the branch selected by gnomon.branch_use(), and its INSTEAD OF trigger writes to the branch.

-- The schema holding the branch views of a user schema's tracked tables.
create or replace function gnomon.branch_schema(schema_name name) returns name
language sql immutable strict as $$ select gnomon.object_name('gnomon_b_' || schema_name, '') $$;
comment on function gnomon.branch_schema(name) is 'The schema of the branch views of a schema''s tracked tables: gnomon_b_<schema>.';

-- A branch's point: the levels it reads through (chain, nearest first), the snapshot each is read at (snaps: null for
-- the branch itself, now) and main's snapshot. The one reading of the catalog row's chain, snaps and main_snap: a
-- branch of main stores them null (catalog version 12: they would be {branch_id}, {null} and its cutoff), a branch of a
-- branch stores them. A SQL function of one expression, inlined where it is used, so that a read names the row's
-- columns (the C module's load_point, gnomon-c/src/branch.c, reads the row the same way).
create or replace function gnomon.branch_point(b gnomon.branch) returns gnomon.point
language sql immutable parallel safe as $$
  select (coalesce(b.chain, array[b.branch_id]), coalesce(b.snaps, array[null::pg_snapshot]),
          coalesce(b.main_snap, b.cutoff))::gnomon.point
$$;
comment on function gnomon.branch_point(gnomon.branch) is
  'A branch''s point, now: the levels it reads through (nearest first), the snapshot of each, and main''s snapshot (a branch of main stores none of them: {id}, {null}, its cutoff).';

-- A branch by name (GN050 when there is none).
create or replace function gnomon.find_branch(branch_name text) returns gnomon.branch
language plpgsql stable set plan_cache_mode = force_custom_plan as $$
declare
  b gnomon.branch;
begin
  select * into b from gnomon.branch x where x.branch_name = find_branch.branch_name;
  if not found then
    raise exception using errcode = 'GN050', message = format('branch %L does not exist', branch_name),
      hint = 'List the branches with select * from gnomon.branches();';
  end if;
  return b;
end $$;
comment on function gnomon.find_branch(text) is 'The catalog row of a branch (GN050 when no branch has that name).';

-- Whether a branch's rows are all there: false for a scratch branch (or a scratch ancestor) emptied by a crash.
-- (PL/pgSQL, not SQL: the branch view calls it only for a chain with a scratch level, so it must not be inlined
-- into the view's plan.) It is called twice per write on a scratch branch: by the branch view, under the caller's
-- search_path, and by the write trigger, under its own (pg_catalog, pg_temp). A cached plan made under another
-- search_path is planned again, so without a search_path of its own its statement was re-planned on every call
-- (74 µs of server CPU per call, which made an update of a scratch branch cost 2.3 to 2.9 times a logged branch's); and
-- a loop over the chain's levels with one probe of gnomon.scratch_alive per scratch level, where one statement over
-- unnest(chain) with a subquery kept choosing a new custom plan.
create or replace function gnomon.branch_intact(b gnomon.branch) returns boolean
language plpgsql stable set search_path = pg_catalog, pg_temp as $$
declare
  id integer;
begin
  foreach id in array (gnomon.branch_point(b)).chain loop
    if id < 0 and not exists (select 1 from gnomon.scratch_alive a where a.branch_id = id) then
      return false;
    end if;
  end loop;
  return true;
end $$;
comment on function gnomon.branch_intact(gnomon.branch) is 'False when the branch, or a scratch branch it reads through, lost its rows in a crash or failover.';

create or replace function gnomon.check_intact(b gnomon.branch) returns gnomon.branch
language plpgsql stable as $$
begin
  if b.branch_id > 0 and b.parent_id is null then return b; end if;  -- logged, forked from main
  if not gnomon.branch_intact(b) then
    raise exception using errcode = 'GN053',
      message = format('scratch branch %L lost its rows in a crash or failover of the server', b.branch_name),
      detail = 'Scratch branches are unlogged: PostgreSQL empties them after a crash, and a standby never has them.',
      hint = format('Drop it (select gnomon.branch_drop(%L)) and create it again; use a logged branch for work that must survive.', b.branch_name);
  end if;
  return b;
end $$;
comment on function gnomon.check_intact(gnomon.branch) is 'Internal: the branch, or GN053 when it lost its rows.';

-- A snapshot parsed from a coordinate and checked not to be in the caller's future (GN010, GN011).
create or replace function gnomon.past_snapshot(coordinate text) returns pg_snapshot
language plpgsql stable as $$
declare
  snap pg_snapshot := gnomon.parse_coordinate(coordinate);
  cur pg_snapshot := pg_current_snapshot();
begin
  if coordinate is null then
    raise exception using errcode = 'GN021', message = 'coordinate is null',
      hint = 'Pass a value returned by gnomon.coordinate() or gnomon.coordinate_at(timestamp), or omit it for now.';
  end if;
  if pg_snapshot_xmax(snap) > pg_snapshot_xmax(cur)
     or exists (select 1 from pg_snapshot_xip(cur) x where x < pg_snapshot_xmax(snap) and pg_visible_in_snapshot(x, snap)) then
    raise exception using errcode = 'GN011',
      message = format('coordinate %s is in the future of this transaction', coordinate),
      hint = 'Use a coordinate captured before this transaction''s snapshot.';
  end if;
  return snap;
end $$;
comment on function gnomon.past_snapshot(text) is 'Parses a coordinate and checks it is not in the caller''s future (GN010, GN011).';

-- Whether branch views read through the C module's gnomon.branch_pick_c (gnomon.use_c_module(true) with a library
-- that has it).
create or replace function gnomon.branch_c_enabled() returns boolean
language sql stable as $$ select pg_catalog.to_regprocedure('gnomon.branch_pick_c(integer, integer, integer, bigint, boolean, "any")') is not null $$;
comment on function gnomon.branch_c_enabled() is 'Whether branch views read through the optional C module (gnomon.branch_pick_c).';

-- Called by gnomon.use_c_module: creates (or drops) gnomon.branch_pick_c from the library and regenerates every
-- tracked table's branch view functions to use it (or the SQL read). A library without the function (an older
-- build) leaves the SQL read in place. Returns whether the C read is now enabled.
create or replace function gnomon.branch_use_c(enable boolean, library text) returns boolean
language plpgsql as $$
begin
  if enable then
    -- the planner support function loads the library while a read is planned, and with it the module's planner hook,
    -- which keeps the read's scans plain index scans (gnomon-c/src/branch.c); an older build without it: no hook
    begin
      execute format('create or replace function gnomon.branch_pick_support(internal) returns internal language c strict as %L, %L',
                     library, 'gnomon_branch_pick_support');
      comment on function gnomon.branch_pick_support(internal) is
        'Internal (the optional C module): gnomon.branch_pick_c''s planner support function; it loads the module, whose planner hook keeps the branch read''s scans plain index scans.';
    exception when undefined_function then
      drop function if exists gnomon.branch_pick_support(internal) cascade;
    end;
    -- the scratch-partition bound of the C read in one C call; an older build without it: the same bound in SQL
    begin
      execute format('create or replace function gnomon.branch_floor_c() returns integer language c stable parallel safe as %L, %L',
                     library, 'gnomon_branch_floor');
      comment on function gnomon.branch_floor_c() is
        'Internal (the optional C module): the lowest branch id the selected branch may read (least(1, its id)); the C branch read''s partition bound.';
    exception when undefined_function then
      drop function if exists gnomon.branch_floor_c();
    end;
    -- the branch-history arm's upper bound (none for a branch of main); an older build without it: the arm always runs
    begin
      execute format('create or replace function gnomon.branch_hist_bound_c(upper boolean) returns integer language c stable strict parallel safe as %L, %L',
                     library, 'gnomon_branch_hist_bound');
      comment on function gnomon.branch_hist_bound_c(boolean) is
        'Internal (the optional C module): the lower or upper bound of the branch ids whose branch history the C read of the selected branch may need (1 and 0, none, for a branch of main).';
    exception when undefined_function then
      drop function if exists gnomon.branch_hist_bound_c(boolean);
    end;
    begin
      execute format('create or replace function gnomon.branch_pick_c(table_id integer, place integer, branch integer, id bigint, '
                     'no_row boolean, variadic key "any") returns boolean language c stable cost 1000 %s as %L, %L',
                     case when pg_catalog.to_regprocedure('gnomon.branch_pick_support(internal)') is not null
                          then 'support gnomon.branch_pick_support' else '' end, library, 'gnomon_branch_pick');
      comment on function gnomon.branch_pick_c(integer, integer, integer, bigint, boolean, "any") is
        'Internal (the optional C module): whether a row of a branch view''s read holds its key''s state on the selected branch.';
    exception when undefined_function then
      raise notice 'the Gnomon C module % has no branch read (gnomon_branch_pick): branch views keep the SQL read', library;
      return false;
    end;
  elsif not gnomon.branch_c_enabled() then
    return false;
  end if;
  if not enable then
    drop function gnomon.branch_pick_c(integer, integer, integer, bigint, boolean, "any");
    drop function if exists gnomon.branch_pick_support(internal);
    drop function if exists gnomon.branch_floor_c();
    drop function if exists gnomon.branch_hist_bound_c(boolean);
  end if;
  perform gnomon.install_branch_create(case when enable then library end);
  perform gnomon.install_branch_objects(t.table_id) from gnomon.tracked_table t order by t.table_id;
  return enable;
end $$;
comment on function gnomon.branch_use_c(boolean, text) is
  'Internal: switches branch views between the C module''s read (gnomon.branch_pick_c) and the SQL read; called by gnomon.use_c_module.';

-- Raised by gnomon.branch_create for a bad argument (GN021); called only when an argument is bad.
create or replace function gnomon.bad_branch_argument(branch_name text, scratch boolean) returns text
language plpgsql immutable as $$
begin
  if scratch is null then
    raise exception using errcode = 'GN021', message = 'scratch is null', hint = 'Pass true for a scratch (unlogged) branch, false for a logged one.';
  end if;
  raise exception using errcode = 'GN021', message = format('invalid branch name %L', left(branch_name, 210)),
    hint = 'A branch name has 1 to 200 characters, no control characters, and is not ''main''.';
end $$;
comment on function gnomon.bad_branch_argument(text, boolean) is 'Internal: GN021 for a bad branch name or a null scratch flag.';

-- Creates a branch: a catalog row, no copy. parent is 'main' or a branch's name; at is a coordinate on the parent
-- (null: now); a scratch branch is unlogged (cheaper writes; emptied by a crash).
-- A branch of main, now, is a few PL/pgSQL assignments and one INSERT of plain parameters: the arguments are
-- checked here (gnomon.branch has no CHECK constraint of its own: this function and branch_rename are its only
-- writers, and PostgreSQL would re-read and re-plan each constraint on every INSERT), the name's unique index decides
-- whether the name is taken (no pre-check, whose plan, cached per session, could go stale as branches pile up; no
-- exception block, which would cost a subtransaction per create).
-- This is gnomon.branch_create_sql; gnomon.branch_create is the same body (gnomon.install_branch_create), or, with the
-- optional C module enabled, a C function that creates a logged branch of main, now, itself and calls this one for
-- every other case (gnomon-c/src/branch_create.c).
-- Run as the catalog's owner, so that a role given the catalog's writes (gnomon.grant_catalog_writes) needs no
-- ownership of gnomon_t: regenerating every table's branch objects when the first scratch branch is created or the last
-- one dropped, and deleting the rows of dropped branches. Both touch nothing a caller chooses: the first regenerates
-- what the catalog says, the second deletes only rows of branch ids that have no catalog row any more.
create or replace function gnomon.refresh_branch_objects() returns void
language plpgsql security definer set search_path = pg_catalog, pg_temp set client_min_messages = warning as $$
begin
  perform gnomon.install_branch_objects(t.table_id) from gnomon.tracked_table t order by t.table_id;
end $$;
comment on function gnomon.refresh_branch_objects() is
  'Internal: regenerates every tracked table''s branch objects (as the catalog''s owner); called when the first scratch branch is created and the last one dropped.';
revoke execute on function gnomon.refresh_branch_objects() from public;

create or replace function gnomon.branch_rows_drop(ids integer[]) returns void
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
declare
  tt gnomon.tracked_table;
  gone integer[];
begin
  select array_agg(i) into gone from unnest(ids) i where not exists (select 1 from gnomon.branch x where x.branch_id = i);
  if gone is null then
    return;
  end if;
  for tt in select * from gnomon.tracked_table loop
    execute format('delete from gnomon_t.%I where g_branch = any ($1)', gnomon.object_name(tt.base_name, '_b')) using gone;
    execute format('delete from gnomon_t.%I where g_branch = any ($1)', gnomon.object_name(tt.base_name, '_bh')) using gone;
  end loop;
end $$;
comment on function gnomon.branch_rows_drop(integer[]) is
  'Internal: deletes the rows of dropped branches (ids without a catalog row) from every tracked table''s branch tables, as the catalog''s owner; called by gnomon.branch_drop.';
revoke execute on function gnomon.branch_rows_drop(integer[]) from public;

create or replace function gnomon.branch_create_sql(branch_name text, parent text default 'main', at text default null,
                                                    scratch boolean default false) returns integer
language plpgsql as $$
declare
  p gnomon.branch;
  pp gnomon.point;
  cut pg_snapshot;
  id integer;
begin
  if scratch is null or branch_name is null or length(branch_name) not between 1 and 200 or branch_name = 'main'
     or branch_name ~ '[[:cntrl:]]' then
    perform gnomon.bad_branch_argument(branch_name, scratch);
  end if;
  if parent is not null and parent <> 'main' then
    -- a share lock on the parent's row: it cannot be dropped while this branch is created from it
    select * into p from gnomon.branch x where x.branch_name = parent for key share;
    if not found then
      raise exception using errcode = 'GN050', message = format('parent branch %L does not exist', parent),
        hint = 'Name an existing branch, or ''main''.';
    end if;
    p := gnomon.check_intact(p);
    if p.branch_id < 0 and not scratch then
      raise exception using errcode = 'GN021',
        message = format('a logged branch cannot fork from scratch branch %L', parent),
        hint = 'A crash empties the scratch parent, which would leave the logged branch without its base: create it as a scratch branch too.';
    end if;
    cut := case when at is null then pg_current_snapshot() else gnomon.past_snapshot(at) end;
    if not pg_visible_in_snapshot(p.created_xid, cut) then
      raise exception using errcode = 'GN012',
        message = format('coordinate %s is older than branch %L', at, parent),
        detail = format('Branch %L was created at %s.', parent, p.created_at),
        hint = 'Fork at a coordinate captured after the parent branch was created.';
    end if;
  elsif at is not null then
    cut := gnomon.past_snapshot(at);
  else
    cut := pg_current_snapshot();
  end if;
  -- ids come from a sequence starting at 1: never 0
  id := case when scratch then -nextval('gnomon.branch_seq') else nextval('gnomon.branch_seq') end;
  -- a branch of main stores no point (gnomon.branch_point: {id}, {null}, its cutoff); a branch of a branch stores its
  -- own level in front of its parent's point, the parent's levels read at this branch's cutoff
  if p.branch_id is not null then
    pp := gnomon.branch_point(p);
    pp := (id || pp.chain, array[null::pg_snapshot, cut] || pp.snaps[2:], pp.main_snap)::gnomon.point;
  end if;
  insert into gnomon.branch (branch_id, branch_name, parent_id, cutoff, chain, snaps, main_snap, created_xid)
  values (id, branch_name, p.branch_id, cut, pp.chain, pp.snaps, pp.main_snap, pg_current_xact_id())
  on conflict on constraint branch_branch_name_key do nothing;
  if not found then
    raise exception using errcode = 'GN051', message = format('branch %L already exists', branch_name),
      hint = 'Choose another name, or drop the existing branch first.';
  end if;
  if scratch then
    insert into gnomon.scratch_alive values (id);
    -- the first scratch branch: reads must look at the unlogged partitions from now on
    if not exists (select 1 from gnomon.branch x where x.branch_id < 0 and x.branch_id <> id) then
      perform gnomon.refresh_branch_objects();
    end if;
  end if;
  return id;
end $$;
comment on function gnomon.branch_create_sql(text, text, text, boolean) is
  'Internal: gnomon.branch_create in PL/pgSQL (what the C module''s gnomon.branch_create calls for all but a logged branch of main, now).';

-- (Re)creates gnomon.branch_create: the body of gnomon.branch_create_sql (library null), or the C module's function
-- from library (a logged branch of main, now, without PL/pgSQL or the executor; the rest through branch_create_sql).
-- A library without it (an older build) leaves the PL/pgSQL function. Returns whether the C function is in place.
create or replace function gnomon.install_branch_create(library text) returns boolean
language plpgsql as $$
begin
  if library is not null then
    begin
      execute format('create or replace function gnomon.branch_create(branch_name text, parent text default ''main'', '
                     'at text default null, scratch boolean default false) returns integer language c as %L, %L',
                     library, 'gnomon_branch_create');
      return true;
    exception when undefined_function then
      raise notice 'the Gnomon C module % has no gnomon_branch_create: gnomon.branch_create stays in PL/pgSQL', library;
    end;
  end if;
  execute format('create or replace function gnomon.branch_create(branch_name text, parent text default ''main'', '
                 'at text default null, scratch boolean default false) returns integer language plpgsql as %L',
                 (select f.prosrc from pg_proc f where f.oid = 'gnomon.branch_create_sql(text, text, text, boolean)'::regprocedure));
  return false;
end $$;
comment on function gnomon.install_branch_create(text) is
  'Internal: (re)creates gnomon.branch_create, in PL/pgSQL or (library) from the C module; called by gnomon.use_c_module.';

select gnomon.install_branch_create(
  (select f.probin from pg_proc f where f.oid = pg_catalog.to_regprocedure('gnomon.branch_pick_c(integer, integer, integer, bigint, boolean, "any")')));
comment on function gnomon.branch_create(text, text, text, boolean) is
  'Creates a branch of main or of a branch, at now or at a coordinate, logged or scratch; a catalog row, O(1). Returns its id.';

-- gnomon.branch's two CHECK constraints from V3 (branch_id <> 0, the name's rules) are enforced by its only writers,
-- branch_create and branch_rename, with the same rules and a clearer error (GN021); as constraints they cost every
-- create about a third of its instructions (PostgreSQL rebuilds each constraint's expression per INSERT).
alter table gnomon.branch drop constraint if exists branch_branch_id_check,
                          drop constraint if exists branch_branch_name_check;

-- Drops a branch and its rows in every table; a branch with children only when cascade (children first).
create or replace function gnomon.branch_drop(branch_name text, cascade boolean default false) returns integer
language plpgsql as $$
declare
  b gnomon.branch;
  ids integer[];
begin
  if branch_name = 'main' then
    raise exception using errcode = 'GN021', message = 'main cannot be dropped: it is the tables themselves, not a branch',
      hint = 'To stop versioning a table, untrack it: select gnomon.untrack(''schema.table'');';
  end if;
  b := gnomon.find_branch(branch_name);
  -- writers hold this lock shared while they write to the branch: none is half-way through a write now
  perform pg_advisory_xact_lock(7387, b.branch_id);
  with recursive d(id, depth) as (
      select b.branch_id, 0
    union all
      select x.branch_id, d.depth + 1 from gnomon.branch x join d on x.parent_id = d.id
  )
  select array_agg(id order by depth desc, id) into ids from d;
  if array_length(ids, 1) > 1 and not coalesce(cascade, false) then
    raise exception using errcode = 'GN052',
      message = format('branch %L has %s descendant branch(es): %s', branch_name, array_length(ids, 1) - 1,
                       (select string_agg(quote_literal(x.branch_name), ', ' order by x.branch_id)
                          from gnomon.branch x where x.branch_id = any (ids) and x.branch_id <> b.branch_id)),
      hint = format('Drop them first, or drop them all: select gnomon.branch_drop(%L, cascade => true);', branch_name);
  end if;
  -- a consumer following one of them would lose the writes it has not read yet
  if exists (select 1 from gnomon.consumer k where k.branch_id = any (ids)) then
    raise exception using errcode = 'GN034',
      message = format('branch %L is followed by feed consumers: %s', branch_name,
                       (select string_agg(quote_literal(k.consumer_name), ', ' order by k.consumer_name)
                          from gnomon.consumer k where k.branch_id = any (ids))),
      hint = 'Unregister them first (gnomon.feed_unregister), so none of them misses changes silently.';
  end if;
  -- the catalog rows first (the caller's privilege on gnomon.branch decides), then their rows in every table
  delete from gnomon.scratch_alive where branch_id = any (ids);
  delete from gnomon.branch x where x.branch_id = any (ids);
  perform gnomon.branch_rows_drop(ids);
  -- the last scratch branch gone: reads skip the unlogged partitions again
  if exists (select 1 from unnest(ids) i where i < 0) and not exists (select 1 from gnomon.branch x where x.branch_id < 0) then
    perform gnomon.refresh_branch_objects();
  end if;
  return array_length(ids, 1);
end $$;
comment on function gnomon.branch_drop(text, boolean) is
  'Drops a branch and the rows written on it; with cascade, its descendants too (else GN052). Returns how many branches were dropped.';

create or replace function gnomon.branch_rename(branch_name text, new_name text) returns void
language plpgsql as $$
declare
  b gnomon.branch;
begin
  if branch_name = 'main' then
    raise exception using errcode = 'GN021', message = 'main cannot be renamed', hint = 'Rename branches only.';
  end if;
  b := gnomon.find_branch(branch_name);
  if new_name is null or length(new_name) not between 1 and 200 or new_name = 'main' or new_name ~ '[[:cntrl:]]' then
    raise exception using errcode = 'GN021', message = format('invalid branch name %L', left(new_name, 210)),
      hint = 'A branch name has 1 to 200 characters, no control characters, and is not ''main''.';
  end if;
  if exists (select 1 from gnomon.branch x where x.branch_name = new_name and x.branch_id <> b.branch_id) then
    raise exception using errcode = 'GN051', message = format('branch %L already exists', new_name),
      hint = 'Choose another name.';
  end if;
  update gnomon.branch x set branch_name = new_name where x.branch_id = b.branch_id;
end $$;
comment on function gnomon.branch_rename(text, text) is 'Renames a branch; sessions that selected it stay on it (they hold its id).';

-- Every branch: name, parent, cutoff, kind, whether its rows are intact, depth, creation time.
create or replace function gnomon.branches()
returns table (branch_name text, branch_id integer, parent text, cutoff text, kind text, intact boolean,
               depth integer, created_at timestamptz)
language sql stable as $$
  select b.branch_name, b.branch_id, coalesce(p.branch_name, 'main'), gnomon.coordinate_text(b.cutoff::text),
         case when b.branch_id < 0 then 'scratch' else 'logged' end, gnomon.branch_intact(b),
         cardinality((gnomon.branch_point(b)).chain), b.created_at
    from gnomon.branch b left join gnomon.branch p on p.branch_id = b.parent_id
   order by b.branch_name collate "default"
$$;
comment on function gnomon.branches() is 'Lists the branches: name, id, parent, cutoff coordinate, kind (logged or scratch), intact, depth, creation time.';

-- What a branch holds, per tracked table: rows written (tombstones included), deletes, versions, bytes.
create or replace function gnomon.branch_describe(branch_name text)
returns table (table_name text, rows_written bigint, rows_deleted bigint, versions bigint, bytes bigint)
language plpgsql stable as $$
declare
  b gnomon.branch := gnomon.find_branch(branch_name);
  tt gnomon.tracked_table;
begin
  for tt in select * from gnomon.tracked_table order by schema_name, table_name loop
    return query execute format(
      'select %L::text, count(*), count(*) filter (where b.g_del), '
      '(select count(*) from gnomon_t.%I h where h.g_branch = $1), '
      'coalesce(sum(pg_column_size(b.*)), 0)::bigint + (select coalesce(sum(pg_column_size(h.*)), 0)::bigint from gnomon_t.%I h where h.g_branch = $1) '
      'from gnomon_t.%I b where b.g_branch = $1',
      format('%I.%I', tt.schema_name, tt.table_name), gnomon.object_name(tt.base_name, '_bh'),
      gnomon.object_name(tt.base_name, '_bh'), gnomon.object_name(tt.base_name, '_b')) using b.branch_id;
  end loop;
end $$;
comment on function gnomon.branch_describe(text) is 'Per tracked table, what a branch holds: rows written (tombstones included), rows deleted, versions and bytes.';

-- Selects the branch that the branch views (gnomon_b_<schema>.<table>) read and write, and puts their schemas in
-- front of search_path so unqualified table names resolve to them. 'main' (or null) goes back to main.
-- local: only until the end of the current transaction (like set local).
create or replace function gnomon.branch_use(branch_name text, local boolean default false) returns integer
language plpgsql as $$
declare
  b gnomon.branch;
  -- the path without branch schemas: what the user has now, changes made while on a branch included
  base_path text := (select coalesce(string_agg(trim(e), ', ' order by o), '')
                       from unnest(string_to_array(current_setting('search_path'), ',')) with ordinality u(e, o)
                      where trim(both '"' from trim(e)) not like 'gnomon\_b\_%');
  path text;
begin
  if branch_name is null or branch_name = 'main' then
    perform set_config('gnomon.branch', '', local);
    perform set_config('search_path', base_path, local);
    return null;
  end if;
  b := gnomon.check_intact(gnomon.find_branch(branch_name));
  -- each schema of the path gets its branch schema in front of the path, in the same order ($user: the user's)
  select string_agg(quote_ident(gnomon.branch_schema(s.n)), ', ' order by s.o) into path
    from (select replace(trim(both '"' from trim(e)), '$user', current_user) as n, min(o) as o
            from unnest(string_to_array(base_path, ',')) with ordinality u(e, o) group by 1) s
   where trim(s.n) <> '' and to_regnamespace(quote_ident(gnomon.branch_schema(s.n))) is not null;
  perform set_config('search_path', concat_ws(', ', path, nullif(base_path, '')), local);
  perform set_config('gnomon.branch', b.branch_id::text, local);
  return b.branch_id;
end $$;
comment on function gnomon.branch_use(text, boolean) is
  'Selects the branch that branch views read and write (''main'' goes back), and puts the branch schemas first in search_path; local: until the transaction ends.';

-- The id in the setting gnomon.branch (which gnomon.branch_use writes), the one reading of it in SQL: null when no
-- branch is selected, and also when the setting holds no branch id (set by hand: 'abc', '1.5', a number beyond
-- integer), so that the reads and writes that use it find no branch and call gnomon.current_branch(), which says what
-- is wrong (GN041), where a plain cast raised a bare 22P02. A SQL function of one expression, inlined where it is used;
-- the pattern is tested before the cast (a nested CASE, whose order PostgreSQL keeps).
create or replace function gnomon.selected_branch_id() returns integer
language sql stable parallel safe as $$
  select case when current_setting('gnomon.branch', true) ~ '^\s*[-+]?0*[0-9]{1,10}\s*$'
              then case when current_setting('gnomon.branch', true)::bigint between -2147483648 and 2147483647
                        then current_setting('gnomon.branch', true)::integer end end
$$;
comment on function gnomon.selected_branch_id() is
  'The branch id in the setting gnomon.branch; null when none is selected or the setting holds no branch id (gnomon.current_branch() then raises).';

-- The selected branch (GN054 when none, GN041 when gnomon.branch holds no branch id, GN050 when it was dropped, GN053
-- when a crash emptied it).
create or replace function gnomon.current_branch() returns gnomon.branch
language plpgsql stable set plan_cache_mode = force_custom_plan as $$
declare
  s text := current_setting('gnomon.branch', true);
  id integer := gnomon.selected_branch_id();
  b gnomon.branch;
begin
  if s is null or s = '' then
    raise exception using errcode = 'GN054', message = 'no branch is selected',
      hint = 'Select one first: select gnomon.branch_use(''my_branch''); the tables themselves are main.';
  end if;
  if id is null then
    raise exception using errcode = 'GN041',
      message = format('setting gnomon.branch has the value %L, which is not a branch id', s),
      detail = 'gnomon.branch holds the id of the selected branch, as gnomon.branch_use() writes it (empty for main); '
               || 'it is not meant to be set by hand.',
      hint = 'Select a branch by name: select gnomon.branch_use(''my_branch''); or go back to main: '
             || 'select gnomon.branch_use(''main''); (reset gnomon.branch; clears it too).';
  end if;
  select * into b from gnomon.branch x where x.branch_id = id;
  if not found then
    raise exception using errcode = 'GN050', message = format('the selected branch (id %s) was dropped', s),
      hint = 'Select another branch with gnomon.branch_use(...), or go back to main: select gnomon.branch_use(''main'');';
  end if;
  return gnomon.check_intact(b);
end $$;
comment on function gnomon.current_branch() is 'The branch selected by gnomon.branch_use() (GN054 when none, GN041 when gnomon.branch holds no branch id, GN050 when it was dropped, GN053 when it lost its rows).';

create or replace function gnomon.current_point() returns gnomon.point
language sql stable as $$ select gnomon.branch_point(b) from gnomon.current_branch() b $$;
comment on function gnomon.current_point() is 'The point of the selected branch, now.';

-- The point to read: main or a branch, now (coordinate null) or as of a coordinate on it.
create or replace function gnomon.point(branch_name text default 'main', coordinate text default null) returns gnomon.point
language plpgsql stable as $$
declare
  b gnomon.branch;
  p gnomon.point;
  snap pg_snapshot;
begin
  if coordinate is not null then
    snap := gnomon.past_snapshot(coordinate);
  end if;
  if branch_name is null or branch_name = 'main' then
    return ('{}'::integer[], '{}'::pg_snapshot[], snap)::gnomon.point;
  end if;
  b := gnomon.check_intact(gnomon.find_branch(branch_name));
  p := gnomon.branch_point(b);
  if snap is null then
    return p;
  end if;
  if not pg_visible_in_snapshot(b.created_xid, snap) then
    raise exception using errcode = 'GN012',
      message = format('coordinate %s is older than branch %L', coordinate, branch_name),
      detail = format('The branch was created at %s.', b.created_at),
      hint = 'Read the branch as of a coordinate captured after it was created, or read its parent.';
  end if;
  return (p.chain, snap || p.snaps[2:], p.main_snap)::gnomon.point;
end $$;
comment on function gnomon.point(text, text) is 'A point to read or diff: main or a branch, now or as of a coordinate (GN050, GN010, GN011, GN012).';

-- The point a branch starts from: its parent at its cutoff.
create or replace function gnomon.parent_point(b gnomon.branch) returns gnomon.point
language sql immutable as $$
  select ((s.p).chain[2:], (s.p).snaps[2:], (s.p).main_snap)::gnomon.point from (select gnomon.branch_point(b) as p) s
$$;
comment on function gnomon.parent_point(gnomon.branch) is 'Internal: the point a branch starts from (its parent at its cutoff).';

-- Raised by a read of a table at a point whose main snapshot predates the table's tracking.
create or replace function gnomon.point_too_old(table_id integer, p gnomon.point) returns boolean
language plpgsql stable as $$
declare
  tt gnomon.tracked_table;
begin
  select * into tt from gnomon.tracked_table t where t.table_id = point_too_old.table_id;
  raise exception using errcode = 'GN012',
    message = format('%I.%I has no history at the point read (main as of snapshot %s): it was tracked later',
                     tt.schema_name, tt.table_name, p.main_snap),
    detail = format('The table was tracked at %s; Gnomon has no history before that, so neither a coordinate captured '
                    || 'earlier nor a branch forked earlier can read or diff it.', tt.tracked_at),
    hint = 'Read or diff it as of a coordinate captured after it was tracked, now, or on a branch forked after that.';
end $$;
comment on function gnomon.point_too_old(integer, gnomon.point) is 'Internal: GN012 for a read at a point older than the table''s tracking.';

-- Keys whose state differs between two points of one table, with the operation and the old and new row images.
create or replace function gnomon.diff(table_name text, from_point gnomon.point, to_point gnomon.point)
returns table (op text, key jsonb, old jsonb, new jsonb)
language plpgsql stable as $$
declare
  tt gnomon.tracked_table := gnomon.tracked(table_name);
begin
  if from_point is null or to_point is null then
    raise exception using errcode = 'GN021', message = 'a diff needs two points',
      hint = 'Pass gnomon.point(branch, coordinate) for each side; gnomon.point() is main now.';
  end if;
  return query execute format('select * from gnomon_t.%I($1, $2)', gnomon.object_name(tt.base_name, '_diff'))
    using from_point, to_point;
end $$;
comment on function gnomon.diff(text, gnomon.point, gnomon.point) is
  'The keys of a table whose state differs between two points (gnomon.point(branch, coordinate)): op, key, old and new images as jsonb.';

-- The NOT NULL and CHECK constraints of a tracked table hold on its branches at write time: copied onto its branch
-- table (a tombstone is exempt), under the same names (NOT NULL as <column>_not_null). Called when the branch objects
-- are installed and by gnomon.follow_table_change on every ALTER TABLE of the table, so a constraint added, changed or
-- dropped after tracking is added, changed or dropped on branches too. One added while branches hold rows is NOT
-- VALID there: the rows already written are not checked (they meet the constraint when a merge writes them to main),
-- new writes are.
create or replace function gnomon.sync_branch_constraints(p_table_id integer) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  bt text;
  c record;
  has_rows boolean;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  bt := format('gnomon_t.%I', gnomon.object_name(tt.base_name, '_b'));
  for c in
    with want as (
      select gnomon.object_name(a.attname, '_not_null') as name, format('(g_del OR (%I IS NOT NULL))', a.attname) as def
        from pg_attribute a
       where a.attrelid = tt.relid and a.attnum > 0 and not a.attisdropped and a.attnotnull
         and not a.attname = any (tt.key_columns)
      union all
      select k.conname, format('(g_del OR %s)', pg_get_expr(k.conbin, k.conrelid))
        from pg_constraint k where k.conrelid = tt.relid and k.contype = 'c'),
    have as (
      select k.conname as name, pg_get_expr(k.conbin, k.conrelid) as def
        from pg_constraint k where k.conrelid = bt::regclass and k.contype = 'c')
    -- (the definitions compare as PostgreSQL prints them, so the copy of an unchanged constraint is left alone)
    select h.name as drop_name, w.name as add_name, w.def
      from want w full join have h on h.name = w.name
     where h.def is distinct from w.def
  loop
    if c.drop_name is not null then
      execute format('alter table %s drop constraint %I', bt, c.drop_name);
    end if;
    if c.add_name is not null then
      if has_rows is null then
        execute format('select exists (select from %s)', bt) into has_rows;
      end if;
      execute format('alter table %s add constraint %I check %s%s', bt, c.add_name, c.def,
                     case when has_rows then ' not valid' else '' end);
    end if;
  end loop;
end $$;
comment on function gnomon.sync_branch_constraints(integer) is
  'Internal: copies a tracked table''s NOT NULL and CHECK constraints onto its branch table (added, changed or dropped as the table''s are).';

-- (Re)creates the branch objects of a tracked table: its branch tables (when missing), the read function, the
-- diff function, and the branch view with its write trigger.
create or replace function gnomon.install_branch_objects(p_table_id integer) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  tab text; hist text; bt name; bh name; bschema name; vname text;
  cols text; keys text; bcols text; hcols_def text;
  at_body text; trg_body text; diff_body text; keys_body text;
  s_cols text; ret_cols text; rb name; rh name; h_cols text; b_cols text; img_b text; img_h text; img_l text;
  beq_l text; beq_x text; keys_b text; keys_x text; keys_a text; key_args text; hkey_params text;
  bimg name; too_old text; floor_c text; hist_c boolean;
  old_cols text; new_cols text; cur_cols text; old_keys text; new_keys text; ceq_old text; ceq_new text; aeq_new text;
  set_new text; set_del text; key_changed text; key_json text;
  con record; d record;
  c pg_class;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  select * into c from pg_class where oid = tt.relid;
  tab  := format('%I.%I', tt.schema_name, tt.table_name);
  hist := format('gnomon_t.%I', tt.history_table);
  bt := gnomon.object_name(tt.base_name, '_b');
  bh := gnomon.object_name(tt.base_name, '_bh');
  bschema := gnomon.branch_schema(tt.schema_name);
  vname := format('%I.%I', bschema, tt.table_name);

  select string_agg(format('%I', x->>'name'), ', ' order by (x->>'attnum')::int),
         string_agg(format('%I %s%s', x->>'name', x->>'storetype', coalesce(' collate ' || (x->>'collation'), '')), ', ' order by (x->>'attnum')::int),
         string_agg(format(case when x->>'type' = x->>'storetype' then '%s' else '%s::%s' end,
                           format(case when (x->>'name') = any (tt.key_columns) then 's.%I' else '(s.g_img).%I' end, x->>'name'), x->>'type'),
                    ', ' order by (x->>'attnum')::int),
         string_agg(format('%s.%I', case when (x->>'name') = any (tt.key_columns) then 'b' else 'h' end, x->>'name'), ', ' order by (x->>'attnum')::int),
         string_agg(format('b.%I', x->>'name'), ', ' order by (x->>'attnum')::int),
         string_agg(format('old.%I', x->>'name'), ', ' order by (x->>'attnum')::int),
         string_agg(format('new.%I', x->>'name'), ', ' order by (x->>'attnum')::int),
         string_agg(format('cur.%I', x->>'name'), ', ' order by (x->>'attnum')::int),
         string_agg(format('%1$I = new.%1$I', x->>'name'), ', ' order by (x->>'attnum')::int),
         coalesce(string_agg(format('%1$I = null', x->>'name'), ', ' order by (x->>'attnum')::int)
                    filter (where not (x->>'name') = any (tt.key_columns)), '')
    into cols, hcols_def, s_cols, h_cols, b_cols, old_cols, new_cols, cur_cols, set_new, set_del
    from jsonb_array_elements(tt.columns) x;
  select string_agg(format('%I %s', x->>'name', x->>'type'), ', ' order by (x->>'attnum')::int)
    into ret_cols
    from jsonb_array_elements(tt.columns) x;
  select string_agg(format('%I', k), ', ' order by o),
         string_agg(format('b.%1$I = l.%1$I', k), ' and ' order by o),
         string_agg(format('b.%1$I = h.%1$I', k), ' and ' order by o),
         string_agg(format('b.%I', k), ', ' order by o),
         string_agg(format('x.%I', k), ', ' order by o),
         string_agg(format('a.%I', k), ', ' order by o),
         string_agg(format('old.%I', k), ', ' order by o),
         string_agg(format('new.%I', k), ', ' order by o),
         string_agg(format('c.%1$I = old.%1$I', k), ' and ' order by o),
         string_agg(format('c.%1$I = new.%1$I', k), ' and ' order by o),
         string_agg(format('a.%1$I = new.%1$I', k), ' and ' order by o),
         string_agg(format('old.%1$I is distinct from new.%1$I', k), ' or ' order by o),
         string_agg(format('%L, k.%I', k, k), ', ' order by o),
         string_agg(format('h.%I = $%s', k, o + 1), ' and ' order by o)
    into keys, beq_l, beq_x, keys_b, keys_x, keys_a, old_keys, new_keys, ceq_old, ceq_new, aeq_new, key_changed, key_json,
         hkey_params
    from unnest(tt.key_columns) with ordinality u(k, o);
  select string_agg(x->>'storetype', ', ' order by o) into key_args
    from unnest(tt.key_columns) with ordinality u(k, o) join jsonb_array_elements(tt.columns) x on x->>'name' = u.k;
  bimg := gnomon.object_name(tt.base_name, '_bimg');

  -- the branch tables, created once (gnomon.follow_table_change adds columns to them)
  if to_regclass(format('gnomon_t.%I', bt)) is null then
    execute format('create table gnomon_t.%I (g_branch integer not null, g_del boolean not null, g_xid xid8 not null, '
                   'g_cxid xid8 not null, %s, primary key (%s, g_branch)) partition by range (g_branch)', bt, hcols_def, keys);
    -- reads probe a key across the levels of a chain (the primary key, key first); drops and diffs scan a branch
    -- (the index below)
    execute format('create table gnomon_t.%I partition of gnomon_t.%I for values from (1) to (maxvalue)', gnomon.object_name(bt, '_l'), bt);
    execute format('create unlogged table gnomon_t.%I partition of gnomon_t.%I for values from (minvalue) to (0)', gnomon.object_name(bt, '_s'), bt);
    execute format('comment on table gnomon_t.%I is %L', bt,
                   format('Rows of %s written on branches, one per (branch, key); g_del marks a delete. Written by the branch views.', tab));
    execute format('create table gnomon_t.%I (g_branch integer not null, g_vid bigint not null, g_xid xid8 not null, '
                   'g_op "char" not null, g_del boolean, %s) partition by range (g_branch)', bh, hcols_def);
    execute format('create table gnomon_t.%I partition of gnomon_t.%I for values from (1) to (maxvalue)', gnomon.object_name(bh, '_l'), bh);
    execute format('create unlogged table gnomon_t.%I partition of gnomon_t.%I for values from (minvalue) to (0)', gnomon.object_name(bh, '_s'), bh);
    execute format('create index on gnomon_t.%I (%s, g_branch, g_vid)', bh, keys);
    execute format('create index on gnomon_t.%I (g_branch)', bh);
    execute format('comment on table gnomon_t.%I is %L', bh,
                   format('History of the branch rows of %s: the image from before each write. Written by the branch views.', tab));
  end if;
  -- constraints that hold on branches at write time: NOT NULL and CHECK (see gnomon.sync_branch_constraints)
  perform gnomon.sync_branch_constraints(p_table_id);
  -- Drops and diffs scan one branch: an index on (g_branch, key). It was (g_branch) alone, which deduplication keeps to a
  -- few pages: planned while the table was empty (the write trigger's generic plan, kept for the session), it won
  -- over the primary key, and every later probe by key in that session read the whole branch (a 10,000-row UPDATE
  -- through the view after a first one of 2,000 took 5-9 s instead of 0.3 s). Older installations are upgraded here.
  if not exists (select 1 from pg_index i
                  where i.indrelid = format('gnomon_t.%I', bt)::regclass and not i.indisprimary
                    and i.indnatts = 1 + cardinality(tt.key_columns)
                    and i.indkey[0] = (select attnum from pg_attribute where attrelid = i.indrelid and attname = 'g_branch')) then
    execute format('create index on gnomon_t.%I (g_branch, %s)', bt, keys);
  end if;
  for con in select ci.relname from pg_index i join pg_class ci on ci.oid = i.indexrelid
              where i.indrelid = format('gnomon_t.%I', bt)::regclass and not i.indisprimary and i.indnatts = 1
                and i.indkey[0] = (select attnum from pg_attribute where attrelid = i.indrelid and attname = 'g_branch') loop
    execute format('drop index gnomon_t.%I', con.relname);
  end loop;

  -- The table at a point: per key, the state at the nearest branch level that held the key at that level's
  -- snapshot (the live branch row when the snapshot saw its last write, else the image from before the first
  -- write it did not see); keys no level held read main as of the point's main snapshot, like an as-of read.
  -- One DISTINCT ON over three arms — the branch rows of every level of the chain (one probe of the branch table's
  -- key-first primary key: g_branch = any (chain)), main's versions the main snapshot does not see, and main's live
  -- rows — ordered per key by level (the branch levels, nearest first, then main's history, then main's live row)
  -- and, within main's history, by version: the first row per key is the key's state at the point (a tombstone, or
  -- main's insert after the snapshot, hides the key). A query on the key columns (a point read through the branch
  -- view, a merge's or a diff's per-key read) has its condition pushed into every arm, so it is a few index probes
  -- and a sort of a few rows, whatever the depth; there is no anti-join and no sub-plan to rebuild per point.
  -- Reads go to the logged partitions only while no scratch branch exists (gnomon.branch_create and branch_drop
  -- reinstall when the first scratch branch comes or the last one goes): fewer relations in every branch read.
  if exists (select 1 from gnomon.branch x where x.branch_id < 0) then
    rb := bt; rh := bh;
  else
    rb := gnomon.object_name(bt, '_l'); rh := gnomon.object_name(bh, '_l');
  end if;
  -- The image of a branch row at a snapshot that did not see its last write: the history row of the first write the
  -- snapshot did not see (an ancestor level read at a child's cutoff, written after it). PL/pgSQL, so that the read
  -- calls it only for such a row and its plan is cached per session: the read's own plan starts no node for it.
  execute format('create or replace function gnomon_t.%I(g_branch integer, %s, snap pg_snapshot) returns gnomon_t.%I '
                 'language plpgsql stable as %L', bimg, key_args, bh, format($b$
declare
  r gnomon_t.%1$I;
begin
  select h.* into r from gnomon_t.%2$I h
   where h.g_branch = $1 and %3$s and h.g_xid >= pg_snapshot_xmin($%4$s) and not pg_visible_in_snapshot(h.g_xid, $%4$s)
   order by h.g_vid limit 1;
  return r;
end $b$, bh, rh, hkey_params, cardinality(tt.key_columns) + 2));
  execute format('comment on function gnomon_t.%I(integer, %s, pg_snapshot) is %L', bimg, key_args,
                 format('The image of a branch row of %s at a snapshot that did not see its last write (behind the branch reads). Generated by gnomon.track().', tab));
  -- a point whose main snapshot is older than the table's tracking: GN012 (checked with the point, in the catalog probe
  -- for the branch view, so the plan has no node for it)
  too_old := format('(($p).main_snap is null or pg_visible_in_snapshot(%L::xid8, ($p).main_snap) or gnomon.point_too_old(%s, $p))',
                    tt.track_xid::text, tt.table_id);
  -- Each arm carries the key columns and the row's image as one value of the branch history's row type (g_del and
  -- the table's columns; the history's own columns null): one expression per arm instead of one per column, so the
  -- plan has no projection of its own per arm and the columns are taken apart once, at the end.
  select string_agg(case a.attname when 'g_del' then 'b.g_del' else case when x is null then 'null' else format('b.%I', a.attname) end end, ', ' order by a.attnum),
         string_agg(case a.attname when 'g_del' then 'h.g_op = ''I''' else case when x is null then 'null' else format('h.%I', a.attname) end end, ', ' order by a.attnum),
         string_agg(case a.attname when 'g_del' then 'false' else case when x is null then 'null'
                         when x->>'type' = x->>'storetype' then format('l.%I', a.attname) else format('l.%I::%s', a.attname, x->>'storetype') end end, ', ' order by a.attnum)
    into img_b, img_h, img_l
    from pg_attribute a left join jsonb_array_elements(tt.columns) x on x->>'name' = a.attname::text
   where a.attrelid = format('gnomon_t.%I', bh)::regclass and a.attnum > 0 and not a.attisdropped;
  at_body := format($b$
  select %3$s
    from (select (s.q).chain as chain, (s.q).snaps as snaps, (s.q).main_snap as msnap from %%SRC%% s) r
   cross join lateral (
     select distinct on (%4$s) a.* from (
       -- a branch row, or its image from the branch history when the level's snapshot did not see its last write
       select array_position(r.chain, b.g_branch) as g_lvl, 0::bigint as g_sub, %5$s,
              case when l.snap is not null and not pg_visible_in_snapshot(b.g_xid, l.snap) then gnomon_t.%6$I(b.g_branch, %5$s, l.snap)
                   else row(%7$s)::gnomon_t.%8$I end as g_img
         from gnomon_t.%9$I b
        cross join lateral (select r.snaps[array_position(r.chain, b.g_branch)] as snap) l
        where b.g_branch = any (r.chain) and (l.snap is null or pg_visible_in_snapshot(b.g_cxid, l.snap)) %%PRUNE_B%%
       union all
       -- main's versions the main snapshot does not see: the first holds the key's image at the snapshot (none
       -- when it is the key's insert)
       select 2147483646, h.g_vid, %10$s, row(%11$s)::gnomon_t.%8$I
         from %12$s h
        where %%MSNAP%% h.g_xid >= pg_snapshot_xmin(r.msnap) and not pg_visible_in_snapshot(h.g_xid, r.msnap)
       union all
       select 2147483647, 0::bigint, %13$s, row(%14$s)::gnomon_t.%8$I from %15$s l
     ) a
     order by %4$s, a.g_lvl, a.g_sub
   ) s
   where not (s.g_img).g_del
$b$, tt.track_xid::text, tt.table_id, s_cols, keys_a, keys_b, bimg, img_b, bh, rb,
     (select string_agg(format('h.%I', k), ', ' order by o) from unnest(tt.key_columns) with ordinality u(k, o)), img_h, hist,
     (select string_agg(format('l.%I', k), ', ' order by o) from unnest(tt.key_columns) with ordinality u(k, o)), img_l, tab);
  -- it returns the table's columns, not its row type: the branch view then does not depend on the table, so a
  -- refused schema change reaches the DDL guard (GN006) instead of failing on the view
  -- a changed column list (ADD COLUMN) changes the return type: then drop and recreate (the view is recreated below)
  -- (compared as names and type oids: a function's result keeps no type modifier, so comparing the text of
  -- numeric(6,2) with numeric saw a change on every call, and the cascade dropped the users' views on the branch view
  -- and the grants given on it)
  if exists (select 1 from pg_proc f where f.oid = to_regprocedure(format('gnomon_t.%I(gnomon.point)', gnomon.object_name(tt.base_name, '_at')))
              and (select array_agg(row(a.n, a.t)::text order by a.o) from unnest(f.proargnames, f.proallargtypes, f.proargmodes)
                                                                         with ordinality a(n, t, m, o) where a.m = 't')
                  is distinct from
                  (select array_agg(row(x->>'name', (x->>'type')::regtype::oid)::text order by (x->>'attnum')::int)
                     from jsonb_array_elements(tt.columns) x)) then
    execute format('drop function gnomon_t.%I(gnomon.point) cascade', gnomon.object_name(tt.base_name, '_at'));
    execute format('drop function if exists gnomon_t.%I() cascade', gnomon.object_name(tt.base_name, '_cur'));
  end if;
  execute format('create or replace function gnomon_t.%I(p gnomon.point) returns table (%s) language sql stable as %L',
                 gnomon.object_name(tt.base_name, '_at'), ret_cols,
                 replace(replace(replace(at_body, '%SRC%', format('(select p as q where %s offset 0)', replace(too_old, '$p', 'p'))),
                                 '%PRUNE_B%', ''), '%MSNAP%', 'r.msnap is not null and'));
  -- the selected branch now: its point straight from the catalog (one probe of its primary key) when every level is
  -- logged or every scratch level still has its rows (gnomon.branch_intact, called only for a chain with a scratch
  -- level); else gnomon.current_point(), which raises GN054 (none selected), GN050 (dropped) or GN053 (lost)
  execute format('create or replace function gnomon_t.%I() returns table (%s) language sql stable as %L',
                 gnomon.object_name(tt.base_name, '_cur'), ret_cols,
                 replace(replace(replace(at_body,
                         -- while a scratch branch exists the reads name the partitioned branch tables: a logged
                         -- branch's chain has only logged levels (ids > 0), a scratch branch's levels have ids at
                         -- least its own (ancestors were created first), so this bound, computed once when the
                         -- statement starts, leaves the other partition out of the plan (initial pruning) instead
                         -- of starting and probing it on every read
                         '%PRUNE_B%', case when rb = bt then 'and b.g_branch >= least(1, gnomon.selected_branch_id())' else '' end),
                         -- a branch's main snapshot is never null: no test of it (a Result node fewer)
                         '%MSNAP%', ''),
                         '%SRC%', '(select coalesce((select gnomon.branch_point(b) from gnomon.branch b '
                                          'where b.branch_id = gnomon.selected_branch_id() '
                                          'and (0 < all ((gnomon.branch_point(b)).chain) or gnomon.branch_intact(b)) and ' || replace(too_old, '$p', 'gnomon.branch_point(b)')
                                          || '), gnomon.current_point()) as q offset 0)'));
  -- With the C module's branch read enabled (gnomon.branch_c_enabled()), the view reads through
  -- gnomon.branch_pick_c instead: one UNION ALL of main's live rows, the branch rows, the branch history and main's
  -- history, each row kept when the C function, resolving the key with direct index probes, says that place holds the
  -- key's state at the selected branch's point (gnomon-c/src/branch.c). The arms have no conditions of their own (a
  -- tombstone, a history row whose image is no row, and main's insert version are passed with g_norow, never picked
  -- though they still decide the key), so PostgreSQL flattens the union and pushes the key condition and the pick into
  -- each scan: a point read starts four index scans and an Append, and no sort, unique, nested loop or catalog init
  -- plan. (The arms' extra columns are named g_*, like the SQL read's: a table column named g_place, g_prune, g_hprune, g_br,
  -- g_id or g_norow would clash.)
  if gnomon.branch_c_enabled() then
    floor_c := case when pg_catalog.to_regprocedure('gnomon.branch_floor_c()') is not null then 'gnomon.branch_floor_c()'
                    else 'least(1, gnomon.selected_branch_id())' end;
    hist_c := pg_catalog.to_regprocedure('gnomon.branch_hist_bound_c(boolean)') is not null;
    execute format('create or replace function gnomon_t.%I() returns table (%s) language sql stable as %L',
                   gnomon.object_name(tt.base_name, '_cur'), ret_cols, format($b$
  select %1$s from (
    select 0 as g_place, null::integer as g_prune, null::integer as g_hprune, 0 as g_br, 0::bigint as g_id, false as g_norow, %2$s from %3$s l
    union all
    select 1, b.g_branch, null::integer, b.g_branch, 0::bigint, b.g_del, %4$s from gnomon_t.%5$I b
    union all
    select 2, null::integer, h.g_branch, h.g_branch, h.g_vid, h.g_del is not false, %6$s from gnomon_t.%7$I h
    union all
    select 3, null::integer, null::integer, 0, h.g_vid, h.g_op = 'I', %6$s from %8$s h
  ) u
  where gnomon.branch_pick_c(%9$s, u.g_place, u.g_br, u.g_id, u.g_norow, %10$s) %11$s %12$s
$b$,
      (select string_agg(format('u.%I', x->>'name'), ', ' order by (x->>'attnum')::int) from jsonb_array_elements(tt.columns) x),
      (select string_agg(format('l.%I', x->>'name'), ', ' order by (x->>'attnum')::int) from jsonb_array_elements(tt.columns) x),
      tab,
      (select string_agg(format(case when x->>'type' = x->>'storetype' then 'b.%I' else 'b.%I::%s' end, x->>'name', x->>'type'), ', ' order by (x->>'attnum')::int)
         from jsonb_array_elements(tt.columns) x),
      rb,
      (select string_agg(format(case when x->>'type' = x->>'storetype' then 'h.%I' else 'h.%I::%s' end, x->>'name', x->>'type'), ', ' order by (x->>'attnum')::int)
         from jsonb_array_elements(tt.columns) x),
      case when hist_c then bh else rh end, hist, tt.table_id,
      (select string_agg(format(case when x->>'type' = x->>'storetype' then 'u.%I' else 'u.%I::%s' end, x->>'name', x->>'storetype'), ', ' order by o)
         from unnest(tt.key_columns) with ordinality k(k, o) join jsonb_array_elements(tt.columns) x on x->>'name' = k.k),
      -- while a scratch branch exists (the arms name the partitioned branch tables): the partition the selected
      -- branch cannot read is left out when the statement starts, as in the SQL read above, by a bound on g_branch
      -- that gnomon.branch_floor_c() computes (least(1, the selected branch's id); one C call, where the same bound in
      -- SQL, kept for a catalog re-installed over a library enabled before it had the function, is five)
      -- (g_prune is null in the arms of main: the condition folds to true there when the statement is planned, so it
      -- adds no node to them; in the branch arms it is not an index condition: a condition of an arm's own would keep
      -- PostgreSQL from flattening the union, a sub-query scan and an append more per branch arm)
      case when rb = bt then format('and (u.g_prune is null or u.g_prune >= %s)', floor_c) else '' end,
      -- the branch-history arm: a branch of main (one level) never reads it (its own level is read as it is), so
      -- with gnomon.branch_hist_bound_c it names the partitioned branch history, bounded by two values that select
      -- no partition for a branch of main (1 and 0): the arm is left out when the statement starts, one index scan
      -- fewer; deeper branches read it as before (g_hprune, like g_prune, is null in the other arms, where the
      -- condition folds to true)
      case when hist_c then 'and (u.g_hprune is null or u.g_hprune between gnomon.branch_hist_bound_c(false) and gnomon.branch_hist_bound_c(true))'
           when rb = bt then format('and (u.g_hprune is null or u.g_hprune >= %s)', floor_c) else '' end));
  end if;
  execute format('comment on function gnomon_t.%I(gnomon.point) is %L', gnomon.object_name(tt.base_name, '_at'),
                 format('Rows of %s at a point: main or a branch, now or as of a coordinate (gnomon.point(branch, coordinate)). Generated by gnomon.track().', tab));

  -- The keys that may differ between two points: those written on a branch level the two points do not read alike,
  -- and main's versions that one main snapshot sees and the other does not. The diff reads each at both points;
  -- a merge reads them set-based (gnomon.merge_prepare).
  keys_body := format($b$
  with pa as materialized (select (s.q).chain as chain, (s.q).snaps as snaps, coalesce((s.q).main_snap, pg_current_snapshot()) as msnap
                             from (select $1 as q offset 0) s),
       pb as materialized (select (s.q).chain as chain, (s.q).snaps as snaps, coalesce((s.q).main_snap, pg_current_snapshot()) as msnap
                             from (select $2 as q offset 0) s),
       la as materialized (select u.id, coalesce(u.snap, pg_current_snapshot())::text as snap
                             from pa cross join lateral unnest(pa.chain, pa.snaps) u(id, snap)),
       lb as materialized (select u.id, coalesce(u.snap, pg_current_snapshot())::text as snap
                             from pb cross join lateral unnest(pb.chain, pb.snaps) u(id, snap))
  -- a level only one point reads: every key written on it; a level both read at different snapshots: the
  -- keys whose last write one of them does not see (a row whose last write both see reads alike at both)
  select %1$s from la join gnomon_t.%2$I b on b.g_branch = la.id left join lb on lb.id = la.id
   where lb.id is null
      or (lb.snap <> la.snap and not (pg_visible_in_snapshot(b.g_xid, la.snap::pg_snapshot)
                                      and pg_visible_in_snapshot(b.g_xid, lb.snap::pg_snapshot)))
  union
  select %1$s from lb join gnomon_t.%2$I b on b.g_branch = lb.id
   where not exists (select 1 from la where la.id = lb.id)
  union
  -- (main read at the same snapshot by both points, as by a branch at two moments, or by a branch and main at its
  -- cutoff: no version of main differs. Tested once, as an init plan, so that the history is not scanned then)
  select %3$s from %4$s x, pa, pb
   where (select a.msnap::text <> b.msnap::text from pa a, pb b)
     and x.g_xid >= least(pg_snapshot_xmin(pa.msnap), pg_snapshot_xmin(pb.msnap))
     and pg_visible_in_snapshot(x.g_xid, pa.msnap) <> pg_visible_in_snapshot(x.g_xid, pb.msnap)
$b$, keys_b, bt, keys_x, hist);
  -- (the two points are positional: an output column takes a key column's name, which may be a or b; a function of
  -- an earlier release named them, and a parameter's name cannot be changed by CREATE OR REPLACE)
  execute format('drop function if exists gnomon_t.%I(gnomon.point, gnomon.point)', gnomon.object_name(tt.base_name, '_dkeys'));
  execute format('create function gnomon_t.%I(gnomon.point, gnomon.point) '
                 'returns table (%s) language sql stable as %L',
                 gnomon.object_name(tt.base_name, '_dkeys'),
                 (select string_agg(format('%I %s', x->>'name', x->>'storetype'), ', ' order by o)
                    from unnest(tt.key_columns) with ordinality u(k, o) join jsonb_array_elements(tt.columns) x on x->>'name' = u.k),
                 keys_body);
  execute format('comment on function gnomon_t.%I(gnomon.point, gnomon.point) is %L', gnomon.object_name(tt.base_name, '_dkeys'),
                 format('Keys of %s that may differ between two points (behind the diff and merges). Generated by gnomon.track().', tab));

  -- The diff of two points: each candidate key read at both points. A point older than the tracking is GN012 (as the
  -- read at it raises), checked first (a one-time filter: the points are parameters), since with no candidate key
  -- the table is never read at either point and the diff would be empty.
  diff_body := format($b$
  select case when d.old is null then 'insert' when d.new is null then 'delete' else 'update' end, d.key, d.old, d.new
    from (select jsonb_build_object(%1$s) as key,
                 (select to_jsonb(o) from gnomon_t.%2$I($1) o where %3$s) as old,
                 (select to_jsonb(o) from gnomon_t.%2$I($2) o where %3$s) as new
            from gnomon_t.%4$I($1, $2) k offset 0) d
   where %5$s and %6$s and d.old is distinct from d.new
$b$, key_json, gnomon.object_name(tt.base_name, '_at'),
     (select string_agg(format('o.%1$I = k.%1$I', kk), ' and ' order by o) from unnest(tt.key_columns) with ordinality u(kk, o)),
     gnomon.object_name(tt.base_name, '_dkeys'), replace(too_old, '$p', '$1'), replace(too_old, '$p', '$2'));
  execute format('drop function if exists gnomon_t.%I(gnomon.point, gnomon.point)', gnomon.object_name(tt.base_name, '_diff'));
  execute format('create function gnomon_t.%I(gnomon.point, gnomon.point) '
                 'returns table (op text, key jsonb, old jsonb, new jsonb) language sql stable as %L',
                 gnomon.object_name(tt.base_name, '_diff'), diff_body);

  -- Writes on a branch: the view's INSTEAD OF trigger. A row is copied into the branch table on its first write
  -- (copy on write); the branch row is locked and compared with the row the statement read, so a row changed by a
  -- concurrent transaction is never overwritten blindly (40001, retry). Primary keys are unique on the branch.
  trg_body := format($b$
declare
  b gnomon.branch;
  x xid8 := pg_current_xact_id();
  cur gnomon_t.%1$I%%rowtype;
  moved boolean := false;
begin
  -- the branch's lock first (a drop takes it exclusively), then its catalog row: a branch dropped meanwhile is
  -- GN050 from gnomon.current_branch() (no branch selected: a null id takes no lock, and GN054 follows)
  perform pg_advisory_xact_lock_shared(7387, gnomon.selected_branch_id());
  -- the catalog row by a generic plan (gnomon.current_branch() plans its lookup on every call: a quarter of a
  -- branch update's CPU); it raises the errors when the row is missing
  select * into b from gnomon.branch g where g.branch_id = gnomon.selected_branch_id();
  if not found then b := gnomon.current_branch(); end if;
  b := gnomon.check_intact(b);
  if TG_OP = 'UPDATE' then moved := %2$s; end if;
  if TG_OP <> 'INSERT' then
    select * into cur from gnomon_t.%1$I c where c.g_branch = b.branch_id and %3$s for update;
    if found then
      if cur.g_del or row(%4$s) is distinct from row(%5$s) then
        raise exception using errcode = '40001',
          message = format('could not serialize access: a row of %%s on branch %%L was changed by a concurrent transaction', %6$L, b.branch_name),
          hint = 'Retry the transaction.';
      end if;
      insert into gnomon_t.%7$I (g_branch, g_vid, g_xid, g_op, g_del, %8$s)
      values (b.branch_id, nextval('gnomon.version_seq'), x, 'U', false, %4$s);
      if TG_OP = 'DELETE' or moved then
        update gnomon_t.%1$I c set g_del = true, g_xid = x %9$s where c.g_branch = b.branch_id and %3$s;
      else
        update gnomon_t.%1$I c set g_xid = x, %10$s where c.g_branch = b.branch_id and %3$s;
      end if;
    else
      if TG_OP = 'DELETE' or moved then
        insert into gnomon_t.%1$I (g_branch, g_del, g_xid, g_cxid, %11$s) values (b.branch_id, true, x, x, %12$s)
        on conflict do nothing;
      else
        insert into gnomon_t.%1$I (g_branch, g_del, g_xid, g_cxid, %8$s) values (b.branch_id, false, x, x, %13$s)
        on conflict do nothing;
      end if;
      if not found then
        raise exception using errcode = '40001',
          message = format('could not serialize access: a row of %%s on branch %%L was written by a concurrent transaction', %6$L, b.branch_name),
          hint = 'Retry the transaction.';
      end if;
      insert into gnomon_t.%7$I (g_branch, g_vid, g_xid, g_op, %11$s) values (b.branch_id, nextval('gnomon.version_seq'), x, 'I', %12$s);
    end if;
  end if;
  if TG_OP = 'INSERT' or moved then
    select * into cur from gnomon_t.%1$I c where c.g_branch = b.branch_id and %14$s for update;
    if found then
      if not cur.g_del then
        raise exception using errcode = '23505',
          message = format('duplicate key value violates the primary key of %%s on branch %%L', %6$L, b.branch_name),
          detail = format('Key (%%s) already exists on the branch.', concat_ws(', ', %15$s));
      end if;
      insert into gnomon_t.%7$I (g_branch, g_vid, g_xid, g_op, g_del, %8$s)
      values (b.branch_id, nextval('gnomon.version_seq'), x, 'U', true, %4$s);
      update gnomon_t.%1$I c set g_del = false, g_xid = x, %10$s where c.g_branch = b.branch_id and %14$s;
    else
      if exists (select 1 from gnomon_t.%16$I(gnomon.parent_point(b)) a where %17$s) then
        raise exception using errcode = '23505',
          message = format('duplicate key value violates the primary key of %%s on branch %%L', %6$L, b.branch_name),
          detail = format('Key (%%s) already exists on the branch (inherited from its parent).', concat_ws(', ', %15$s));
      end if;
      insert into gnomon_t.%1$I (g_branch, g_del, g_xid, g_cxid, %8$s) values (b.branch_id, false, x, x, %13$s)
      on conflict do nothing;
      if not found then
        raise exception using errcode = '23505',
          message = format('duplicate key value violates the primary key of %%s on branch %%L', %6$L, b.branch_name),
          detail = format('Key (%%s) was inserted on the branch by a concurrent transaction.', concat_ws(', ', %15$s));
      end if;
      insert into gnomon_t.%7$I (g_branch, g_vid, g_xid, g_op, %11$s) values (b.branch_id, nextval('gnomon.version_seq'), x, 'I', %15$s);
    end if;
  end if;
  if TG_OP = 'DELETE' then return old; end if;
  return new;
end $b$, bt, coalesce(key_changed, 'false'), ceq_old, cur_cols, old_cols, tab, bh, cols,
     case when set_del = '' then '' else ', ' || set_del end, set_new, keys, old_keys, new_cols, ceq_new, new_keys,
     gnomon.object_name(tt.base_name, '_at'), aeq_new);
  -- generic plans: the statements name the partitioned branch tables, whose custom plans (pruned to the one
  -- partition) look cheaper than the generic plan (pruned when it runs), so PostgreSQL's default re-planned every
  -- statement on every row: 40% of a branch update's CPU went to the planner. Every statement of the trigger is a
  -- probe by key (or an insert): no sequential scan, so a plan made while a table or the catalog was small is not
  -- kept as it grows
  execute format('create or replace function gnomon_t.%I() returns trigger language plpgsql security definer '
                 'set search_path = pg_catalog, pg_temp set plan_cache_mode = force_generic_plan set enable_seqscan = off as %L',
                 gnomon.object_name(tt.base_name, '_bwrite'), trg_body);

  -- The branch view: the table on the selected branch, with the table's column defaults.
  execute format('create schema if not exists %I', bschema);
  execute format('grant usage on schema %I to public', bschema);
  execute format('create or replace view %s as select * from gnomon_t.%I()', vname, gnomon.object_name(tt.base_name, '_cur'));
  execute format('comment on view %s is %L', vname,
                 format('%s on the branch selected by gnomon.branch_use(): read and write it like the table. Generated by gnomon.track().', tab));
  for d in select a.attname, a.attidentity, pg_get_expr(ad.adbin, ad.adrelid) as def
             from pg_attribute a left join pg_attrdef ad on ad.adrelid = a.attrelid and ad.adnum = a.attnum
            where a.attrelid = tt.relid and a.attnum > 0 and not a.attisdropped and a.attgenerated = '' and (ad.adbin is not null or a.attidentity <> '') loop
    execute format('alter view %s alter column %I set default %s', vname, d.attname,
                   case when d.attidentity <> '' then format('nextval(%L::regclass)', pg_get_serial_sequence(tab, d.attname)) else d.def end);
  end loop;
  execute format('drop trigger if exists gnomon_branch_write on %s', vname);
  execute format('create trigger gnomon_branch_write instead of insert or update or delete on %s '
                 'for each row execute function gnomon_t.%I()', vname, gnomon.object_name(tt.base_name, '_bwrite'));
  -- who may read or write the table may do so on branches, and read its branch tables (the view's read functions
  -- read them with the caller's rights); the history's grants too, in the same place (docs/operations.md)
  perform gnomon.sync_privileges_of(p_table_id);
  -- the change feed's sources of branch writes (and the history index they need)
  perform gnomon.install_branch_changes(p_table_id);
end $$;
comment on function gnomon.install_branch_objects(integer) is
  'Internal: (re)creates a tracked table''s branch tables, read and diff functions, branch view and its write trigger.';

-- Removes a table's branch objects (called by gnomon.untrack).
create or replace function gnomon.drop_branch_objects(tt gnomon.tracked_table, drop_rows boolean) returns void
language plpgsql as $$
declare
  kept text := '_untracked_' || tt.table_id || '_' || (pg_current_xact_id()::text);
  part name;
  fn regprocedure;
begin
  execute format('drop view if exists %I.%I', gnomon.branch_schema(tt.schema_name), tt.table_name);
  execute format('drop function if exists gnomon_t.%I()', gnomon.object_name(tt.base_name, '_bwrite'));
  execute format('drop function if exists gnomon_t.%I(gnomon.point, gnomon.point)', gnomon.object_name(tt.base_name, '_diff'));
  execute format('drop function if exists gnomon_t.%I(gnomon.point, gnomon.point)', gnomon.object_name(tt.base_name, '_dkeys'));
  execute format('drop function if exists gnomon_t.%I(gnomon.point)', gnomon.object_name(tt.base_name, '_at'));
  execute format('drop function if exists gnomon_t.%I()', gnomon.object_name(tt.base_name, '_cur'));
  -- (before the branch history, whose row type it returns)
  for fn in select f.oid::regprocedure from pg_proc f
             where f.pronamespace = 'gnomon_t'::regnamespace and f.proname = gnomon.object_name(tt.base_name, '_bimg') loop
    execute format('drop function %s', fn);
  end loop;
  execute format('drop function if exists gnomon_t.%I(pg_snapshot, pg_snapshot, pg_snapshot, boolean, integer)',
                 gnomon.object_name(tt.base_name, '_bchanges'));
  execute format('drop function if exists gnomon_t.%I(pg_snapshot, pg_snapshot, pg_snapshot, boolean, xid8[], bigint[], xid8, xid8, '
                 'bigint, bigint, bigint, bigint, xid8, xid8, integer, gnomon.point)', gnomon.object_name(tt.base_name, '_bpage'));
  if drop_rows then
    execute format('drop table if exists gnomon_t.%I', gnomon.object_name(tt.base_name, '_b'));
    execute format('drop table if exists gnomon_t.%I', gnomon.object_name(tt.base_name, '_bh'));
  else
    for part in select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
                 where i.inhparent in (to_regclass(format('gnomon_t.%I', gnomon.object_name(tt.base_name, '_b'))),
                                       to_regclass(format('gnomon_t.%I', gnomon.object_name(tt.base_name, '_bh')))) loop
      execute format('alter table gnomon_t.%I rename to %I', part, gnomon.object_name(part, kept));
    end loop;
    execute format('alter table if exists gnomon_t.%I rename to %I', gnomon.object_name(tt.base_name, '_b'), gnomon.object_name(tt.base_name, '_b' || kept));
    execute format('alter table if exists gnomon_t.%I rename to %I', gnomon.object_name(tt.base_name, '_bh'), gnomon.object_name(tt.base_name, '_bh' || kept));
  end if;
end $$;
comment on function gnomon.drop_branch_objects(gnomon.tracked_table, boolean) is 'Internal: removes a table''s branch view and functions, and its branch rows or keeps them renamed.';

-- Tables tracked before branches existed get their branch objects now.
do $$
declare
  t integer;
begin
  for t in select table_id from gnomon.tracked_table order by table_id loop
    perform gnomon.install_branch_objects(t);
  end loop;
end $$;
