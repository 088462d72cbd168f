-- Tracking and untracking tables.

-- History is range-partitioned on the writing transaction's xid, so old history can be detached and dropped by range.
-- Each partition spans this many xids.
create or replace function gnomon.partition_span() returns bigint language sql immutable as 'select 67108864::bigint';

create or replace function gnomon.history_default_rows(tt gnomon.tracked_table, lo bigint, hi bigint) returns setof integer
language plpgsql stable as $$
begin
  return query execute format('select 1 from gnomon_t.%I where g_xid >= %L::xid8 and g_xid < %L::xid8 limit 1',
                              gnomon.object_name(tt.history_table, '_default'), lo::text, hi::text);
end $$;

-- Makes sure the history of a tracked table has a partition for the current xid and the next range.
create or replace function gnomon.ensure_partitions(p_table_id integer) returns integer
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  span bigint := gnomon.partition_span();
  cur bigint := pg_snapshot_xmax(pg_current_snapshot())::text::bigint;
  lo bigint;
  made integer := 0;
  pname name;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  for lo in select generate_series((cur / span) * span, (cur / span + 1) * span, span) loop
    pname := gnomon.object_name(tt.history_table, '_' || (lo / span)::text);
    -- rows already caught by the default partition keep the range there (still correct, only not prunable)
    if to_regclass(format('gnomon_t.%I', pname)) is null
       and not exists (select 1 from gnomon.history_default_rows(tt, lo, lo + span)) then
      execute format('create table gnomon_t.%I partition of gnomon_t.%I for values from (%L) to (%L)',
                     pname, tt.history_table, lo::text, (lo + span)::text);
      made := made + 1;
    end if;
  end loop;
  return made;
end $$;
comment on function gnomon.ensure_partitions(integer) is 'Creates the history partitions a tracked table needs for the current and next xid range.';

-- Routine upkeep: partitions ahead of the xid for every tracked table. Called by the Java ticker once a minute.
create or replace function gnomon.maintain() returns integer
language sql as $$
  select coalesce(sum(gnomon.ensure_partitions(table_id)), 0)::integer from gnomon.tracked_table
$$;
comment on function gnomon.maintain() is 'Routine upkeep (history partitions ahead of the current xid). Run it every minute; the Java ticker does.';

create or replace function gnomon.track(table_name text) returns integer
language plpgsql as $$
declare
  rel oid := to_regclass(table_name);
  c pg_class;
  keys name[];
  cols jsonb;
  bad record;
  base text;
  tid integer;
  tt gnomon.tracked_table;
  hcols text;
  grantee text;
begin
  if rel is null then
    raise exception using errcode = 'GN007', message = format('table %s does not exist', table_name),
      hint = 'Name the table as schema.table; quote mixed-case names: ''"MySchema"."MyTable"''.';
  end if;
  select * into c from pg_class where oid = rel;
  if c.relkind not in ('r', 'p') or c.relpersistence = 't' or c.relispartition then
    raise exception using errcode = 'GN004',
      message = format('%s cannot be tracked: it is %s', rel::regclass,
        case when c.relpersistence = 't' then 'a temporary table'
             when c.relispartition then 'a partition of another table'
             else case c.relkind when 'v' then 'a view' when 'm' then 'a materialized view'
                                 when 'f' then 'a foreign table' when 'S' then 'a sequence'
                                 else 'not an ordinary table' end end),
      hint = case when c.relispartition then 'Track the partitioned parent table instead.'
                  else 'Gnomon tracks ordinary and partitioned tables with a primary key.' end;
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
  execute format('create table gnomon_t.%I (g_vid bigint not null, g_xid xid8 not null, g_op "char" not null, %s) '
                 'partition by range (g_xid)', tt.history_table, hcols);
  execute format('comment on table gnomon_t.%I is %L', tt.history_table,
                 format('History of %s: one row per version, holding the row image from before the change. Written by Gnomon''s trigger.', rel::regclass));
  -- one index serves the reads (a key's versions in order) and needs no probe on the write path
  execute format('create index on gnomon_t.%I (%s, g_vid)', tt.history_table,
                 (select string_agg(format('%I', k), ', ') from unnest(keys) k));
  -- a BRIN index on the xid finds what changed since a coordinate at almost no write cost
  execute format('create index on gnomon_t.%I using brin (g_xid gnomon.xid8_minmax_ops) with (pages_per_range = 16, autosummarize = on)', tt.history_table);
  -- the default partition is a safety net: a write never fails for want of a partition
  execute format('create table gnomon_t.%I partition of gnomon_t.%I default',
                 gnomon.object_name(tt.history_table, '_default'), tt.history_table);
  perform gnomon.ensure_partitions(tid);
  execute format('create table gnomon_t.%I (g_cp bigint not null, %s, primary key (g_cp, %s))',
                 tt.checkpoint_table, hcols, (select string_agg(format('%I', k), ', ') from unnest(keys) k));

  perform gnomon.install_objects(tid);
  -- Who may read the table may read its history, unless row-level security filters the table (history cannot
  -- apply the policies, so then only the owner reads it).
  if not c.relrowsecurity then
    for grantee in select distinct case when a.grantee = 0 then 'public' else quote_ident(pg_get_userbyid(a.grantee)) end
                     from aclexplode(coalesce(c.relacl, acldefault('r', c.relowner))) a
                    where a.privilege_type = 'SELECT' and a.grantee <> c.relowner loop
      execute format('grant select on gnomon_t.%I, gnomon_t.%I to %s', tt.history_table, tt.checkpoint_table, grantee);
    end loop;
  end if;
  execute format('create trigger gnomon_insert after insert on %s referencing new table as gnomon_new '
                 'for each statement execute function gnomon_t.%I()', rel::regclass, tt.trigger_function);
  execute format('create trigger gnomon_update after update on %s referencing old table as gnomon_old new table as gnomon_new '
                 'for each statement execute function gnomon_t.%I()', rel::regclass, tt.trigger_function);
  -- fires only for rows whose key an UPDATE changed, and only to tell the statement trigger to pair old and new rows
  execute format('create trigger gnomon_key_change after update on %s for each row when (%s) '
                 'execute function gnomon_t.%I()', rel::regclass,
                 (select string_agg(format('old.%1$I is distinct from new.%1$I', k), ' or ') from unnest(keys) k),
                 tt.key_change_function);
  execute format('create trigger gnomon_delete after delete on %s referencing old table as gnomon_old '
                 'for each statement execute function gnomon_t.%I()', rel::regclass, tt.trigger_function);
  execute format('create trigger gnomon_truncate before truncate on %s '
                 'for each statement execute function gnomon_t.%I()', rel::regclass, tt.trigger_function);
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
begin
  execute format('drop trigger if exists gnomon_insert on %s', tab);
  execute format('drop trigger if exists gnomon_update on %s', tab);
  execute format('drop trigger if exists gnomon_delete on %s', tab);
  execute format('drop trigger if exists gnomon_key_change on %s', tab);
  execute format('drop trigger if exists gnomon_truncate on %s', tab);
  execute format('drop function if exists gnomon_t.%I()', tt.trigger_function);
  execute format('drop function if exists gnomon_t.%I()', tt.key_change_function);
  execute format('drop function if exists gnomon_t.%I(text)', tt.as_of_function);
  execute format('drop function if exists gnomon_t.%I(timestamptz)', tt.as_of_function);
  execute format('drop function if exists gnomon_t.%I(pg_snapshot, pg_snapshot, pg_snapshot, boolean)',
                 gnomon.object_name(tt.base_name, '_changes'));
  if exists (select 1 from gnomon.consumer k where tt.table_id = any (k.table_ids)) then
    raise exception using errcode = 'GN021',
      message = format('table %s is followed by feed consumers: %s', tab,
                       (select string_agg(quote_literal(k.consumer_name), ', ') from gnomon.consumer k where tt.table_id = any (k.table_ids))),
      hint = 'Unregister them first (gnomon.feed_unregister), so none of them misses changes silently.';
  end if;
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
