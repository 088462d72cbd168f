-- Tracking and untracking tables.

-- History is range-partitioned on the writing transaction's xid, so old history can be detached and dropped by
-- range. A table starts with one partition covering every xid, and the open partition always reaches MAXVALUE: no
-- default partition and no empty partition ahead, since each partition that can hold versions newer than a
-- coordinate adds a branch to every as-of read's plan (a read through two partitions cost three times a read
-- through one), and no write can ever find no partition.
-- Closes the open history partition of a table at a future xid (now + margin) and opens a new one from there.
-- The close is checked by a constraint on the open partition, then the partition is detached and attached again with
-- its closed bounds. The whole roll holds an ACCESS EXCLUSIVE lock on the history (taken first, see below): writes
-- to the table and reads of its history wait for it, for as long as the check scans the open partition.
-- Returns the new partition's name; when the open partition holds no version yet (nothing was written since the last
-- roll), it is left open and its own name is returned.
-- The column names Gnomon gives its own columns beside a tracked table's (history, checkpoints, branch tables) or
-- uses as aliases beside them in generated SQL (reads, merges, the C module's branch read): a table with a column of
-- one of these names is not tracked (GN004), and ADD COLUMN of one is refused (GN006). The one list:
-- ReservedColumnNamesIT checks that every g_* name in the migrations and the C module is in it.
create or replace function gnomon.reserved_column_names() returns name[]
language sql immutable parallel safe as $$
  select array['g_action', 'g_b', 'g_bl', 'g_br', 'g_branch', 'g_conflicts', 'g_cp', 'g_cxid', 'g_del', 'g_fr',
               'g_hprune', 'g_id', 'g_img', 'g_live', 'g_lvl', 'g_lx', 'g_mb', 'g_mc', 'g_mcls', 'g_ml', 'g_mo', 'g_mr', 'g_mt',
               'g_norow', 'g_o', 'g_op', 'g_ox', 'g_place', 'g_prune', 'g_r', 'g_row', 'g_same', 'g_sub', 'g_t',
               'g_vid', 'g_x', 'g_xid', 'g_xmin', 'gnomon_rn']::name[]
$$;
comment on function gnomon.reserved_column_names() is
  'The column names Gnomon uses beside a tracked table''s columns: a table with one of them cannot be tracked, nor one added.';

create or replace function gnomon.roll_history(table_name text, margin bigint default 16777216) returns name
language plpgsql as $$
declare
  tt gnomon.tracked_table := gnomon.tracked(table_name);
  parent regclass := format('gnomon_t.%I', tt.history_table)::regclass;
  open_part name; bound text; lo text; hi bigint; cname name; newname name; empty boolean;
begin
  if margin is null or margin < 1000 then
    raise exception using errcode = 'GN021', message = format('margin must be at least 1000 xids, got %s', margin),
      hint = 'The margin must outlast the transactions that start while the old partition is checked.';
  end if;
  select c.relname, pg_get_expr(c.relpartbound, c.oid) into open_part, bound
    from pg_class c where c.oid = gnomon.open_history_partition(parent);
  -- Lock the history's parent before its open partition, in the order writers lock them (they insert through the
  -- parent, or open it first in the C module), and in the mode the detach needs: taking the partition first and the
  -- parent at the detach deadlocked with writers (40P01). The CHECK constraint below takes ACCESS EXCLUSIVE on the
  -- partition until commit anyway, so writers of the table wait for the roll either way.
  execute format('lock table %s in access exclusive mode', parent);
  -- Nothing written since the last roll (or since tracking): closing the empty open partition would only add a
  -- partition as narrow as the xids used in between (one, for two rolls in a row). It stays open; its name returns.
  execute format('select not exists (select from gnomon_t.%I)', open_part) into empty;
  if empty then
    return open_part;
  end if;
  lo := substring(bound from 'FROM \((.*)\) TO');
  hi := pg_snapshot_xmax(pg_current_snapshot())::text::bigint + margin;
  cname := gnomon.object_name(open_part, '_before');
  execute format('alter table gnomon_t.%I add constraint %I check (g_xid < %L::xid8) not valid', open_part, cname, hi::text);
  execute format('alter table gnomon_t.%I validate constraint %I', open_part, cname);
  execute format('alter table %s detach partition gnomon_t.%I', parent, open_part);
  execute format('alter table %s attach partition gnomon_t.%I for values from (%s) to (%L)', parent, open_part, lo, hi::text);
  newname := gnomon.object_name(tt.history_table, '_' || (select count(*) from pg_inherits i where i.inhparent = parent));
  execute format('create table gnomon_t.%I partition of %s for values from (%L) to (maxvalue)', newname, parent, hi::text);
  return newname;
end $$;
comment on function gnomon.roll_history(text, bigint) is
  'Closes a table''s open history partition at a future xid and opens a new one, so history can later be detached by range; does nothing (and returns the open partition) while it holds no version.';

-- The settings Gnomon reads, the one list: each with its default and what it accepts. They are custom settings
-- (set gnomon.x = ..., alter database/role ... set gnomon.x = ...), which PostgreSQL stores as text without checking;
-- gnomon.setting() checks a value where Gnomon reads it.
create or replace function gnomon.settings()
returns table (name text, default_value text, accepts text, meaning text)
language sql immutable parallel safe as $$
  values ('gnomon.history_partition_rows', '10000000', 'a whole number of rows, at least 1',
          'gnomon.maintain() rolls a history partition that holds more rows than this'),
         ('gnomon.tick_retention', '7 days', 'an interval longer than zero, such as ''30 days''',
          'gnomon.maintain() deletes ticks older than this that no change-feed consumer needs'),
         ('gnomon.feed_batches', 'on', 'on or off (or any other boolean: true, false, yes, no, 1, 0)',
          'gnomon.feed_read() uses the kept batch orders (gnomon.feed_batch); off chooses every page by a scan'),
         ('gnomon.feed_page_c', 'on', 'on or off (or any other boolean: true, false, yes, no, 1, 0)',
          'gnomon.feed_read() reads main''s pages with images (gnomon.feed_page_c) and one-table batch orders (gnomon.feed_batch_c) through the C module when it is enabled; off does both in SQL'),
         ('gnomon.merge_direct', 'on', 'on or off (or any other boolean: true, false, yes, no, 1, 0)',
          'gnomon.merge() writes a branch''s first merge into main directly where main left the keys unchanged; off plans every key')
$$;
comment on function gnomon.settings() is
  'The settings Gnomon reads (gnomon.*), each with its default, what it accepts and what it does.';

-- The value of one of gnomon.settings(): the session's (or database's, role's) when set and not empty, else the
-- default. A value it does not accept raises GN041, naming the setting, the value and what it accepts. With
-- from_session false, only the database's own value counts (alter database ... set): what gnomon.maintain() reads
-- for a role that does not own the catalog, which must not choose how much upkeep deletes or rolls.
drop function if exists gnomon.setting(text);
create or replace function gnomon.setting(setting_name text, from_session boolean default true) returns text
language plpgsql stable as $$
declare
  s record;
  v text;
  ok boolean := false;
begin
  if from_session then
    v := nullif(current_setting(setting_name, true), '');
  else
    select nullif(substr(c, length(setting_name) + 2), '') into v
      from pg_catalog.pg_db_role_setting r cross join unnest(r.setconfig) c
     where r.setrole = 0 and r.setdatabase = (select d.oid from pg_catalog.pg_database d where d.datname = current_database())
       and c like setting_name || '=%';
  end if;
  select * into s from gnomon.settings() g where g.name = setting_name;
  if not found then
    raise exception using errcode = 'GN021', message = format('%s is not a Gnomon setting', setting_name),
      hint = 'The settings are listed by: select * from gnomon.settings();';
  end if;
  if v is null then
    return s.default_value;
  end if;
  begin
    ok := case setting_name
            when 'gnomon.history_partition_rows' then v::bigint >= 1
            when 'gnomon.tick_retention' then v::interval > interval '0'
            when 'gnomon.feed_batches' then v::boolean is not null
            when 'gnomon.feed_page_c' then v::boolean is not null
            when 'gnomon.merge_direct' then v::boolean is not null
          end;
  exception when data_exception then
    ok := false;
  end;
  if ok is not true then
    raise exception using errcode = 'GN041',
      message = format('setting %s has the value %L, which Gnomon does not accept', setting_name, v),
      detail = format('%s accepts %s (default %s).', setting_name, s.accepts, s.default_value),
      hint = format('Set it to an accepted value, or reset it to the default: reset %s; (and alter database ... reset %s, '
                    || 'alter role ... reset %s where it was set there).', setting_name, setting_name, setting_name);
  end if;
  return v;
end $$;
comment on function gnomon.setting(text, boolean) is
  'The checked value of a Gnomon setting (its default when unset), the session''s or only the database''s; GN041 when the value is not one it accepts.';

-- Routine upkeep, run every minute by the Java ticker (or any scheduler): rolls each history whose open partition
-- holds more than gnomon.history_partition_rows rows (a setting, 10,000,000 by default), and returns how many rolled.
-- It also expires feed consumers further behind than their max_lag, and deletes ticks older than
-- gnomon.tick_retention (a setting, 7 days by default) that no live consumer still needs (never the last tick).
-- It runs as the catalog's owner, so that an application's ticker needs no more than the right to connect: a
-- role that is not a member of the owner's role reads the two settings as the database sets them (alter database ...
-- set), never its session's, so it cannot make upkeep delete more ticks or roll more partitions than the database
-- asks for.
create or replace function gnomon.maintain() returns integer
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
declare
  tt gnomon.tracked_table;
  owner_session boolean := pg_has_role(session_user, current_user, 'USAGE');
  limit_rows real := gnomon.setting('gnomon.history_partition_rows', owner_session)::real;
  -- (both checked here, before anything is done, whether there are partitions or ticks to look at)
  retention interval := gnomon.setting('gnomon.tick_retention', owner_session)::interval;
  rolled integer := 0;
begin
  for tt in select * from gnomon.tracked_table order by table_id loop
    if exists (select 1 from pg_class c
                where c.oid = gnomon.open_history_partition(format('gnomon_t.%I', tt.history_table)::regclass)
                  and greatest(c.reltuples, 0) > limit_rows) then
      perform gnomon.roll_history(format('%I.%I', tt.schema_name, tt.table_name));
      rolled := rolled + 1;
    end if;
  end loop;
  update gnomon.consumer c
     set expired_at = clock_timestamp(),
         expired_reason = format('it was %s behind, more than its max_lag of %s', gnomon.consumer_lag(c), c.max_lag)
   where c.expired_at is null and c.max_lag is not null and gnomon.consumer_lag(c) > c.max_lag;
  delete from gnomon.tick k
   where k.tick_at < clock_timestamp()
                     - retention
     and k.tick_id < (select max(k2.tick_id) from gnomon.tick k2)
     and k.tick_id < coalesce((select min(c.tick_id) from gnomon.consumer c where c.expired_at is null), 9223372036854775807);
  return rolled;
end $$;
comment on function gnomon.maintain() is
  'Routine upkeep; run it every minute (the Java ticker does): rolls history partitions past gnomon.history_partition_rows rows, expires feed consumers past their max_lag, deletes ticks past gnomon.tick_retention that no consumer needs.';
drop function if exists gnomon.ensure_partitions(integer);
drop function if exists gnomon.history_default_rows(gnomon.tracked_table, bigint, bigint);
drop function if exists gnomon.partition_span();

-- The privileges of a tracked table's generated objects follow the table's own (docs/operations.md, "Privileges"):
-- its history, checkpoint and branch tables (with their partitions) get SELECT for exactly the roles that may SELECT the table (none while
-- row-level security is enabled on it, but the table's owner unless the security is forced: history cannot apply the
-- policies), and its branch view gets the table's SELECT, INSERT, UPDATE and DELETE grants (the same exception). The
-- table's owner counts as a grantee like any other: when another role ran gnomon.track and owns these objects, the
-- table's owner is given its rights on them. Grants on the view are only added, never revoked: a role may be given
-- rights on branches alone. Called by gnomon.track, whenever the branch objects are regenerated, and by the
-- event trigger gnomon_privilege_guard after every GRANT and REVOKE.
create or replace function gnomon.sync_privileges_of(p_table_id integer) returns integer
language plpgsql security definer set search_path = pg_catalog, pg_temp as $$
declare
  tt gnomon.tracked_table;
  c pg_class;
  obj regclass;
  g record;
  changes integer := 0;
  flag text := current_setting('gnomon.syncing_privileges', true);
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  select * into c from pg_class where oid = tt.relid;
  if c.oid is null then
    return 0;
  end if;
  -- our own GRANT and REVOKE statements fire the event trigger again: it does nothing while this runs
  perform set_config('gnomon.syncing_privileges', 'on', true);
  -- the branch reads name the partitions of the branch tables (the logged ones alone while no scratch branch exists)
  for obj in select p.relid
               from unnest(array[tt.history_table, tt.checkpoint_table,
                                 gnomon.object_name(tt.base_name, '_b'), gnomon.object_name(tt.base_name, '_bh')]) n,
                    pg_partition_tree(to_regclass(format('gnomon_t.%I', n))) p
              where p.relid = to_regclass(format('gnomon_t.%I', n)) or n not in (tt.history_table, tt.checkpoint_table) loop
    for g in with want as (
               select a.grantee from aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
                where a.privilege_type = 'SELECT' and a.grantee <> (select o.relowner from pg_class o where o.oid = obj)
                  and (not c.relrowsecurity or (a.grantee = c.relowner and not c.relforcerowsecurity))),
             have as (
               select a.grantee from pg_class o, aclexplode(coalesce(o.relacl, acldefault('r', o.relowner))) a
                where o.oid = obj and a.privilege_type = 'SELECT' and a.grantee <> o.relowner)
             select 'grant' as verb, grantee from (select grantee from want except select grantee from have) x
             union all
             select 'revoke', grantee from (select grantee from have except select grantee from want) y loop
      execute format(case g.verb when 'grant' then 'grant select on %s to %s' else 'revoke select on %s from %s' end,
                     obj, case when g.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(g.grantee)) end);
      changes := changes + 1;
    end loop;
  end loop;
  obj := to_regclass(format('%I.%I', gnomon.branch_schema(tt.schema_name), tt.table_name));
  if obj is not null then
    for g in select a.grantee, a.privilege_type
               from aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
              where a.privilege_type in ('SELECT', 'INSERT', 'UPDATE', 'DELETE')
                and (not c.relrowsecurity or (a.grantee = c.relowner and not c.relforcerowsecurity))
             except
             select a.grantee, a.privilege_type
               from pg_class o, aclexplode(coalesce(o.relacl, acldefault('r', o.relowner))) a
              where o.oid = obj loop
      execute format('grant %s on %s to %s', g.privilege_type, obj,
                     case when g.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(g.grantee)) end);
      changes := changes + 1;
    end loop;
  end if;
  perform set_config('gnomon.syncing_privileges', coalesce(flag, ''), true);
  return changes;
end $$;
comment on function gnomon.sync_privileges_of(integer) is
  'Internal: gives a tracked table''s history, checkpoint and branch tables and its branch view the table''s privileges; returns the number of grants and revokes run.';

create or replace function gnomon.sync_privileges(table_name text default null) returns integer
language plpgsql as $$
declare
  total integer := 0;
  t integer;
begin
  for t in select table_id from gnomon.tracked_table
            where sync_privileges.table_name is null or table_id = (gnomon.tracked(sync_privileges.table_name)).table_id
            order by table_id loop
    total := total + gnomon.sync_privileges_of(t);
  end loop;
  return total;
end $$;
comment on function gnomon.sync_privileges(text) is
  'Gives the generated objects of one tracked table (or of all, when null) the table''s privileges now; the GRANT/REVOKE event trigger does it by itself. Returns the number of grants and revokes run.';

-- The first unlogged table among a table and its partitions (null when all are logged). PostgreSQL empties an unlogged
-- table after a crash, writing no version, and reads as of earlier points read the rows unchanged since from the table
-- itself: they would lose them too. So a tracked table and its partitions stay logged (track refuses GN004, the DDL
-- guard GN006).
create or replace function gnomon.unlogged_part(rel oid) returns regclass
language sql stable as $$
  select x.r from (select rel::regclass as r, -1 as lvl union all select p.relid, p.level from pg_partition_tree(rel) p) x
    join pg_class c on c.oid = x.r
   where c.relpersistence = 'u' order by x.lvl, x.r limit 1
$$;
comment on function gnomon.unlogged_part(oid) is
  'The first unlogged table among a table and its partitions, or null: a tracked table and its partitions must stay logged.';

create or replace function gnomon.track(table_name text) returns integer
-- (the installer's "does not exist, skipping" notices are noise to the caller: only warnings and errors reach them)
language plpgsql set client_min_messages = warning as $$
declare
  rel oid := gnomon.resolve_table(table_name);
  c pg_class;
  keys name[];
  cols jsonb;
  bad record;
  base text;
  tid integer;
  tt gnomon.tracked_table;
  hcols text;
begin
  select * into c from pg_class where oid = rel;
  if c.relnamespace in (select oid from pg_namespace where nspname in ('gnomon', 'gnomon_t') or nspname like 'gnomon\_b\_%') then
    raise exception using errcode = 'GN004', message = format('%s cannot be tracked: it is one of Gnomon''s own tables', rel::regclass),
      hint = 'Gnomon tracks the application''s tables, not its own catalog, history or branch objects.';
  end if;
  if c.relkind not in ('r', 'p') or c.relpersistence <> 'p' or c.relispartition then
    raise exception using errcode = 'GN004',
      message = format('%s cannot be tracked: it is %s', rel::regclass,
        case when c.relpersistence = 't' then 'a temporary table'
             -- a crash empties it without a version, so reads as of earlier points would lose the rows too
             when c.relpersistence = 'u' then 'an unlogged table (a crash empties it, and history would lose its rows)'
             when c.relispartition then 'a partition of another table'
             else case c.relkind when 'v' then 'a view' when 'm' then 'a materialized view'
                                 when 'f' then 'a foreign table' when 'S' then 'a sequence'
                                 else 'not an ordinary table' end end),
      hint = case when c.relispartition then 'Track the partitioned parent table instead.'
                  when c.relpersistence = 'u' then format('Make it logged first: alter table %s set logged;', rel::regclass)
                  else 'Gnomon tracks ordinary and partitioned tables with a primary key.' end;
  end if;
  if gnomon.unlogged_part(rel) is not null then
    raise exception using errcode = 'GN004',
      message = format('%s cannot be tracked: its partition %s is unlogged (a crash empties it, and history would lose its rows)',
                       rel::regclass, gnomon.unlogged_part(rel)),
      hint = format('Make it logged first: alter table %s set logged;', gnomon.unlogged_part(rel));
  end if;
  -- reads of a table include its inheritance children's rows, which a write naming a child gives no version
  -- (gnomon.check_no_inheritance refuses them once it is tracked)
  if c.relkind = 'r' and exists (select from pg_inherits i where i.inhparent = rel) then
    raise exception using errcode = 'GN004',
      message = format('%s cannot be tracked: tables inherit from it (%s), and reads of it include their rows', rel::regclass,
                       (select string_agg(i.inhrelid::regclass::text, ', ' order by i.inhrelid::regclass::text)
                          from pg_inherits i where i.inhparent = rel)),
      detail = 'A write naming an inheritance child fires none of the table''s triggers, so those rows would have no versions.',
      hint = format('Track a partitioned table instead, or end the inheritance first (alter table <child> no inherit %s).', rel::regclass);
  end if;
  -- Serialise with writers: no write may slip in between tracking and the trigger being in place.
  execute format('lock table %s in share row exclusive mode', rel::regclass);
  if exists (select 1 from gnomon.tracked_table t where t.relid = rel) then
    raise exception using errcode = 'GN002', message = format('table %s is already tracked', rel::regclass),
      hint = 'Nothing to do; to start over, call gnomon.untrack first.';
  end if;
  select array_agg(a.attname order by k.ord) into keys
    from pg_constraint con
    cross join lateral unnest(con.conkey) with ordinality k(attnum, ord)
    join pg_attribute a on a.attrelid = rel and a.attnum = k.attnum
   where con.conrelid = rel and con.contype = 'p';
  if keys is null then
    raise exception using errcode = 'GN003', message = format('table %s has no primary key', rel::regclass),
      hint = format('Add one (alter table %s add primary key (...)), then track it.', rel::regclass);
  end if;
  for bad in select a.attname, format_type(a.atttypid, a.atttypmod) as t from pg_attribute a
              where a.attrelid = rel and a.attnum > 0 and not a.attisdropped
                and not gnomon.type_has_equality(a.atttypid) loop
    raise exception using errcode = 'GN005',
      message = format('column %I of %s has type %s, which Gnomon cannot version', bad.attname, rel::regclass, bad.t),
      detail = 'Gnomon compares row images, and this type has no equality operator.',
      hint = case when bad.t = 'json' then 'Use jsonb instead of json.' else 'Use a type with an equality operator (a btree or hash operator class).' end;
  end loop;
  for bad in select a.attname, format_type(a.atttypid, a.atttypmod) as t from pg_attribute a
              where a.attrelid = rel and a.attnum > 0 and not a.attisdropped
                and a.attname = any (gnomon.reserved_column_names()) loop
    raise exception using errcode = 'GN004',
      message = format('%s cannot be tracked: its column %I has a name Gnomon reserves for its history', rel::regclass, bad.attname),
      hint = format('Rename the column, then track the table. Reserved: %s (select gnomon.reserved_column_names()).',
                    array_to_string(gnomon.reserved_column_names(), ', '));
  end loop;
  cols := gnomon.table_columns(rel);

  base := case when c.relnamespace = 'public'::regnamespace then c.relname::text
               else (select nspname from pg_namespace where oid = c.relnamespace) || '_' || c.relname end;
  if exists (select 1 from gnomon.tracked_table t where t.base_name = gnomon.object_name(base, '')) then
    base := base || '_' || (select coalesce(max(table_id), 0) + 1 from gnomon.tracked_table);
  end if;
  insert into gnomon.tracked_table (relid, schema_name, table_name, base_name, key_columns, columns,
                                    history_table, checkpoint_table, trigger_function,
                                    key_change_function, as_of_function, track_xid, track_snapshot)
  values (rel, (select nspname from pg_namespace where oid = c.relnamespace), c.relname,
          gnomon.object_name(base, ''), keys, cols,
          gnomon.object_name(base, '_h'), gnomon.object_name(base, '_c'),
          gnomon.object_name(base, '_write'), gnomon.object_name(base, '_key_change'), gnomon.object_name(base, '_as_of'),
          pg_current_xact_id(), pg_current_snapshot())
  returning * into tt;
  tid := tt.table_id;

  select string_agg(format('%I %s%s', col->>'name', col->>'storetype',
                           coalesce(' collate ' || (col->>'collation'), '')), ', ' order by (col->>'attnum')::int)
    into hcols from jsonb_array_elements(cols) col;
  execute format('create table gnomon_t.%I (g_vid bigint not null default %s, g_xid xid8 not null, g_op "char" not null, %s) '
                 'partition by range (g_xid)', tt.history_table, gnomon.version_key_default(), hcols);
  execute format('comment on table gnomon_t.%I is %L', tt.history_table,
                 format('History of %s: one row per version, holding the row image from before the change. Written by Gnomon''s trigger.', rel::regclass));
  -- one index serves the reads and needs no probe on the write path: on (key, g_xid), so "has this key a version
  -- since the coordinate's xmin?" is a range condition of an index-only probe, which finds nothing without touching
  -- the heap when the key is unchanged since (on (key, g_vid) every version of the key was read to test its xid);
  -- the few versions since the xmin are then ordered by g_vid
  execute format('create index on gnomon_t.%I (%s, g_xid)', tt.history_table,
                 (select string_agg(format('%I', k), ', ') from unnest(keys) k));
  -- a BRIN index on the xid finds what changed since a coordinate at almost no write cost
  execute format('create index on gnomon_t.%I using brin (g_xid gnomon.xid8_minmax_ops) with (pages_per_range = 16, autosummarize = on)', tt.history_table);
  execute format('create table gnomon_t.%I partition of gnomon_t.%I for values from (minvalue) to (maxvalue)',
                 gnomon.object_name(tt.history_table, '_0'), tt.history_table);
  execute format('create table gnomon_t.%I (g_cp bigint not null, %s, primary key (g_cp, %s))',
                 tt.checkpoint_table, hcols, (select string_agg(format('%I', k), ', ') from unnest(keys) k));

  perform gnomon.install_objects(tid);
  perform gnomon.install_branch_objects(tid);
  perform gnomon.install_triggers(tid);
  return tid;
end $$;
comment on function gnomon.track(text) is
  'Tracks a table: installs its history, trigger and as-of functions; O(1) in the table''s size. Returns the table id.';

create or replace function gnomon.untrack(table_name text, drop_history boolean default false) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table := gnomon.tracked(table_name);
  tab text := format('%I.%I', tt.schema_name, tt.table_name);
  kept text;
  part name;
  trg name;
  fn regprocedure;
  prel text;
begin
  foreach trg in array gnomon.write_trigger_names() loop
    execute format('drop trigger if exists %I on %s', trg, tab);
  end loop;
  -- the partitions' (gnomon.install_partition_triggers)
  for prel, trg in select g.tgrelid::regclass::text, g.tgname from pg_trigger g
                    where g.tgfoid = to_regprocedure(format('gnomon_t.%I()', tt.trigger_function)) and g.tgparentid = 0 loop
    execute format('drop trigger %I on %s', trg, prel);
  end loop;
  execute format('drop function if exists gnomon_t.%I()', tt.trigger_function);
  execute format('drop function if exists gnomon_t.%I()', tt.key_change_function);
  execute format('drop function if exists gnomon_t.%I(text)', tt.as_of_function);
  execute format('drop function if exists gnomon_t.%I(timestamptz)', tt.as_of_function);
  -- the C read path's helper and point-read fallback (their arguments are the key's types)
  for fn in select p.oid::regprocedure from pg_proc p
             where p.pronamespace = 'gnomon_t'::regnamespace
               and p.proname in (gnomon.object_name(tt.base_name, '_as_of_h'), gnomon.object_name(tt.base_name, '_as_of_k')) loop
    execute format('drop function %s', fn);
  end loop;
  execute format('drop function if exists gnomon_t.%I(pg_snapshot, pg_snapshot, pg_snapshot, boolean)',
                 gnomon.object_name(tt.base_name, '_changes'));
  execute format('drop function if exists gnomon_t.%I(pg_snapshot, pg_snapshot, pg_snapshot, boolean, xid8[], bigint[], xid8, xid8, '
                 'bigint, bigint, bigint, bigint, xid8, xid8)', gnomon.object_name(tt.base_name, '_page'));
  if exists (select 1 from gnomon.consumer k where tt.table_id = any (k.table_ids)) then
    raise exception using errcode = 'GN021',
      message = format('table %s is followed by feed consumers: %s', tab,
                       (select string_agg(quote_literal(k.consumer_name), ', ') from gnomon.consumer k where tt.table_id = any (k.table_ids))),
      hint = 'Unregister them first (gnomon.feed_unregister), so none of them misses changes silently.';
  end if;
  perform gnomon.drop_branch_objects(tt, drop_history);
  delete from gnomon.tracked_table where table_id = tt.table_id;
  if drop_history then
    execute format('drop table gnomon_t.%I', tt.history_table);
    execute format('drop table gnomon_t.%I', tt.checkpoint_table);
  else
    -- kept as plain tables under a name that cannot collide with a later tracking of the same table
    kept := '_untracked_' || tt.table_id || '_' || (pg_current_xact_id()::text);
    for part in select c.relname from pg_inherits i join pg_class c on c.oid = i.inhrelid
                 where i.inhparent = format('gnomon_t.%I', tt.history_table)::regclass loop
      execute format('alter table gnomon_t.%I rename to %I', part, gnomon.object_name(part, kept));
    end loop;
    execute format('alter table gnomon_t.%I rename to %I', tt.history_table, gnomon.object_name(tt.base_name, '_h' || kept));
    execute format('alter table gnomon_t.%I rename to %I', tt.checkpoint_table, gnomon.object_name(tt.base_name, '_c' || kept));
  end if;
end $$;
comment on function gnomon.untrack(text, boolean) is
  'Stops tracking a table: removes its trigger and functions; drops its history when drop_history, else keeps it renamed in gnomon_t.';
