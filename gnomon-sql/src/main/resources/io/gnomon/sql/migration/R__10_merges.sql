-- Merges: a three-way merge of a source (main or a branch) into a target (main or a branch), set-based in the
-- database, per column through the strategies of R__09_merge_strategies.sql.
--
-- base   = the common ancestor: the source's state at the last merge of the pair (either direction), else the
--          nearest level both read (the parent at the cutoff, for a branch and its parent).
-- ours   = the target now; theirs = the source now (at the merge's snapshot, recorded, so the next merge of the pair
--          starts exactly there).
-- Only keys the source changed since the base can change the target: the merge reads the diff base -> theirs, so
-- its cost grows with those changes, and a merge with nothing new writes nothing.

-- The name of a branch id (0: main).
create or replace function gnomon.branch_label(branch_id integer) returns text
language sql stable as $$
  select case when branch_id = 0 then 'main' else (select b.branch_name from gnomon.branch b where b.branch_id = branch_label.branch_id) end
$$;
comment on function gnomon.branch_label(integer) is 'Internal: the name of a branch id, ''main'' for 0.';

-- Whether a merge strategy fits a column type; raises GN061 for an unknown strategy, GN062 when it does not fit.
create or replace function gnomon.check_merge_strategy(strategy text, typid oid, column_label text, custom_function regprocedure)
returns void language plpgsql stable as $$
declare
  base_t oid := typid;
  ty pg_type;
begin
  -- domains by their base type
  loop
    select * into ty from pg_type where oid = base_t;
    exit when ty.typtype <> 'd';
    base_t := ty.typbasetype;
  end loop;
  if strategy is null or strategy not in ('fail', 'ours', 'theirs', 'counter', 'max', 'min', 'union', 'json', 'text', 'custom') then
    raise exception using errcode = 'GN061', message = format('unknown merge strategy %L for %s', strategy, column_label),
      hint = 'The strategies are fail, ours, theirs, counter, max, min, union, json, text and custom.';
  end if;
  if (strategy = 'counter' and base_t not in ('int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'numeric'::regtype))
     or (strategy in ('max', 'min') and not exists (
           select 1 from pg_opclass c join pg_am a on a.oid = c.opcmethod
            where c.opcdefault and a.amname = 'btree' and (c.opcintype = base_t or (c.opcintype = 'anyarray'::regtype and ty.typsubscript = 'array_subscript_handler'::regproc)
                                                           or (c.opcintype = 'anyenum'::regtype and ty.typtype = 'e'))))
     or (strategy = 'union' and not (ty.typelem <> 0 and ty.typsubscript = 'array_subscript_handler'::regproc))
     or (strategy = 'json' and base_t <> 'jsonb'::regtype)
     or (strategy = 'text' and base_t not in ('text'::regtype, 'varchar'::regtype)) then
    raise exception using errcode = 'GN062',
      message = format('merge strategy %s does not fit %s of type %s', strategy, column_label, format_type(typid, null)),
      hint = case strategy when 'counter' then 'counter merges smallint, integer, bigint and numeric columns.'
                           when 'union' then 'union merges arrays.'
                           when 'json' then 'json merges jsonb columns.'
                           when 'text' then 'text merges text and varchar columns line by line.'
                           else 'max and min need a type with an ordering (a btree operator class).' end;
  end if;
  if strategy = 'custom' then
    if custom_function is null or not exists (
         select 1 from pg_proc p where p.oid = custom_function and p.pronargs = 3 and p.proargmodes = '{i,i,i,o,o}'
            and p.proallargtypes[5] = 'text'::regtype
            and p.proallargtypes[1] in (typid, base_t) and p.proallargtypes[2] = p.proallargtypes[1]
            and p.proallargtypes[3] = p.proallargtypes[1] and p.proallargtypes[4] = p.proallargtypes[1]) then
      raise exception using errcode = 'GN062',
        message = format('%s is not a merge function for %s of type %s', coalesce(custom_function::text, 'NULL'), column_label, format_type(typid, null)),
        hint = format('A custom strategy is a function (base %1$s, ours %1$s, theirs %1$s, out value %1$s, out conflict text).', format_type(typid, null));
    end if;
  elsif custom_function is not null then
    raise exception using errcode = 'GN021', message = format('strategy %s takes no function', strategy),
      hint = 'Pass a function only with the custom strategy.';
  end if;
end $$;
comment on function gnomon.check_merge_strategy(text, oid, text, regprocedure) is 'Internal: GN061 for an unknown strategy, GN062 when it does not fit the column''s type.';

-- Declares the merge strategy of a column, or with column_name '*' the table's default for its other columns.
-- options: for json, {"arrays_as_sets": bool, "max_depth": int, "max_nodes": int}. strategy null removes it.
create or replace function gnomon.set_merge_strategy(table_name text, column_name text, strategy text,
                                                     options jsonb default null, custom_function regprocedure default null)
returns void language plpgsql as $$
declare
  tt gnomon.tracked_table := gnomon.tracked(table_name);
  col jsonb;
begin
  if column_name is null then
    raise exception using errcode = 'GN021', message = 'column_name is null', hint = 'Name a column, or ''*'' for the table''s default.';
  end if;
  if strategy is null then
    delete from gnomon.merge_strategy s where s.table_id = tt.table_id and s.column_name = set_merge_strategy.column_name;
    return;
  end if;
  if column_name = '*' then
    if strategy in ('counter', 'union', 'json', 'text', 'custom') then
      -- a typed default must fit every non-key column
      for col in select c from jsonb_array_elements(tt.columns) c where not (c->>'name') = any (tt.key_columns) loop
        perform gnomon.check_merge_strategy(strategy, (col->>'typid')::oid, format('column %I of %s', col->>'name', table_name), custom_function);
      end loop;
    else
      perform gnomon.check_merge_strategy(strategy, 'text'::regtype, format('table %s', table_name), custom_function);
    end if;
  else
    select c into col from jsonb_array_elements(tt.columns) c where c->>'name' = column_name;
    if col is null then
      raise exception using errcode = 'GN021', message = format('table %s has no column %I', table_name, column_name),
        hint = 'Name one of its columns, or ''*'' for the table''s default.';
    end if;
    if column_name = any (tt.key_columns) then
      raise exception using errcode = 'GN021', message = format('column %I is part of the key of %s', column_name, table_name),
        hint = 'Key columns identify rows; they are never merged.';
    end if;
    perform gnomon.check_merge_strategy(strategy, (col->>'typid')::oid, format('column %I of %s', column_name, table_name), custom_function);
  end if;
  if options is not null and (strategy <> 'json' or jsonb_typeof(options) <> 'object'
                              or exists (select 1 from jsonb_object_keys(options) k where k not in ('arrays_as_sets', 'max_depth', 'max_nodes'))) then
    raise exception using errcode = 'GN021', message = format('invalid options %s for strategy %s', options, strategy),
      hint = 'Only json takes options: {"arrays_as_sets": true, "max_depth": 64, "max_nodes": 100000}.';
  end if;
  insert into gnomon.merge_strategy (table_id, column_name, strategy, options, custom_function)
  values (tt.table_id, column_name, strategy, options, custom_function)
  on conflict on constraint merge_strategy_pkey do update
    set strategy = excluded.strategy, options = excluded.options, custom_function = excluded.custom_function;
end $$;
comment on function gnomon.set_merge_strategy(text, text, text, jsonb, regprocedure) is
  'Declares the merge strategy of a column (''*'': the table''s default); GN061 unknown, GN062 does not fit the type; null strategy removes it.';

-- What a delete on one side against an update on the other does: 'conflict' (the default), 'delete_wins', 'update_wins'.
create or replace function gnomon.set_merge_rule(table_name text, delete_vs_update text) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table := gnomon.tracked(table_name);
begin
  if delete_vs_update is null or delete_vs_update not in ('conflict', 'delete_wins', 'update_wins') then
    raise exception using errcode = 'GN021', message = format('invalid delete_vs_update rule %L', delete_vs_update),
      hint = 'Use conflict, delete_wins or update_wins.';
  end if;
  insert into gnomon.merge_rule (table_id, delete_vs_update) values (tt.table_id, delete_vs_update)
  on conflict (table_id) do update set delete_vs_update = excluded.delete_vs_update;
end $$;
comment on function gnomon.set_merge_rule(text, text) is 'Sets what a delete against an update does in merges of a table: conflict (default), delete_wins or update_wins.';

-- The older of two snapshots (null: now).
create or replace function gnomon.older_snapshot(a pg_snapshot, b pg_snapshot) returns pg_snapshot
language sql immutable as $$
  select case when a is null then b when b is null then a
              when pg_snapshot_xmax(a) < pg_snapshot_xmax(b)
                   or (pg_snapshot_xmax(a) = pg_snapshot_xmax(b) and pg_snapshot_xmin(a) <= pg_snapshot_xmin(b)) then a
              else b end
$$;
comment on function gnomon.older_snapshot(pg_snapshot, pg_snapshot) is 'Internal: the earlier of two snapshots; null stands for now.';

-- The base of a merge of a pair (branch ids, 0 for main): the source state recorded by the pair's last merge (either
-- direction), else the nearest level both sides read, at the older of the snapshots they read it at.
create or replace function gnomon.merge_base(source_id integer, target_id integer) returns gnomon.point
language plpgsql stable as $$
declare
  last gnomon.point;
  s gnomon.point; t gnomon.point;
  i integer; j integer;
  l gnomon.branch;
  snap pg_snapshot;
begin
  last := (select m.theirs from gnomon.merge m
             where least(m.source_id, m.target_id) = least(merge_base.source_id, merge_base.target_id)
               and greatest(m.source_id, m.target_id) = greatest(merge_base.source_id, merge_base.target_id)
               and m.status in ('applied', 'nothing')
             order by m.merge_id desc limit 1);
  if last is not null then
    return last;
  end if;
  s := gnomon.point(gnomon.branch_label(source_id));
  t := gnomon.point(gnomon.branch_label(target_id));
  for i in 1 .. coalesce(array_length(s.chain, 1), 0) loop
    j := array_position(t.chain, s.chain[i]);
    if j is not null then
      select * into l from gnomon.branch b where b.branch_id = s.chain[i];
      snap := gnomon.older_snapshot(s.snaps[i], t.snaps[j]);
      return (l.chain, snap || l.snaps[2:], l.main_snap)::gnomon.point;
    end if;
  end loop;
  return ('{}'::integer[], '{}'::pg_snapshot[], gnomon.older_snapshot(s.main_snap, t.main_snap))::gnomon.point;
end $$;
comment on function gnomon.merge_base(integer, integer) is 'Internal: the base point of a merge of a pair of branches (0: main).';

-- Plans a merge into pg_temp.gnomon_merge_plan: one row per key the source changed since the base, with the base,
-- ours, theirs and merged images, the action (insert, update, delete, none, conflict) and the conflicts per column.
-- Locks the target's rows of those keys on main (never the table). Returns the merge's points.
create or replace function gnomon.merge_prepare(source text, target text, tables text[],
                                                out source_id integer, out target_id integer,
                                                out base gnomon.point, out theirs gnomon.point)
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  ours gnomon.point;
  tab text; keys text; keymatch_x text; keycols_json text; rule text;
  col jsonb; s_strategy text; s_options jsonb; s_fn regprocedure; expr text; lateral_sql text := ''; r_parts text[] := '{}'; c_parts text[] := '{}';
  n integer := 0; typmod integer; ids integer[];
begin
  if source is null or target is null then
    raise exception using errcode = 'GN021', message = 'a merge needs a source and a target',
      hint = 'Name each as ''main'' or a branch.';
  end if;
  source_id := case when source = 'main' then 0 else (gnomon.check_intact(gnomon.find_branch(source))).branch_id end;
  target_id := case when target = 'main' then 0 else (gnomon.check_intact(gnomon.find_branch(target))).branch_id end;
  if source_id = target_id then
    raise exception using errcode = 'GN060', message = format('cannot merge %s into itself', source),
      hint = 'Merge a branch into main or into another branch, or main into a branch.';
  end if;
  base := gnomon.merge_base(source_id, target_id);
  theirs := gnomon.point(source, 'v1:' || pg_current_snapshot()::text);
  ours := gnomon.point(target);
  if tables is not null then
    select array_agg((gnomon.tracked(x)).table_id) into ids from unnest(tables) x;
  end if;

  if to_regclass('pg_temp.gnomon_merge_plan') is not null then
    drop table pg_temp.gnomon_merge_plan;
  end if;
  create temp table gnomon_merge_plan (table_id integer not null, key jsonb not null, action text, b jsonb, o jsonb, t jsonb,
                                       r jsonb, conflicts jsonb) on commit drop;
  for tt in select * from gnomon.tracked_table x where ids is null or x.table_id = any (ids) order by x.table_id loop
    tab := format('%I.%I', tt.schema_name, tt.table_name);
    select string_agg(format('x.%1$I = (p.key->>%2$L)::%3$s', k, k, (select c->>'type' from jsonb_array_elements(tt.columns) c where c->>'name' = k)), ' and ' order by o),
           string_agg(format('x.%I', k), ', ' order by o),
           string_agg(format('%L, q.oj->%L', k, k), ', ' order by o)
      into keymatch_x, keys, keycols_json
      from unnest(tt.key_columns) with ordinality u(k, o);
    -- the keys the source changed since the base, with base and theirs images
    execute format('insert into pg_temp.gnomon_merge_plan (table_id, key, b, t) select $1, d.key, d.old, d.new from gnomon_t.%I($2, $3) d',
                   gnomon.object_name(tt.base_name, '_diff')) using tt.table_id, base, theirs;
    get diagnostics n = row_count;
    continue when n = 0;
    -- a temporary table has no statistics until analyzed: without them the planner expects one row
    if n > 1000 then
      analyze pg_temp.gnomon_merge_plan;
    end if;
    -- on main, lock the target's rows of those keys (row locks only: writers of other rows never wait)
    if target_id = 0 then
      execute format('select count(*) from (select 1 from %s x where exists (select 1 from pg_temp.gnomon_merge_plan p where p.table_id = $1 and %s) for update of x) s',
                     tab, keymatch_x) using tt.table_id;
    end if;
    -- ours, read after the locks
    execute format('update pg_temp.gnomon_merge_plan p set o = (select to_jsonb(x) from gnomon_t.%I($2) x where %s) where p.table_id = $1',
                   gnomon.object_name(tt.base_name, '_at'), keymatch_x) using tt.table_id, ours;
    select coalesce((select r.delete_vs_update from gnomon.merge_rule r where r.table_id = tt.table_id), 'conflict') into rule;
    update pg_temp.gnomon_merge_plan p set
      action = case
        when p.b is null and p.o is null then 'insert'
        when p.b is null and p.o = p.t then 'none'
        when p.b is null then 'merge'
        when p.t is null and p.o is null then 'none'
        when p.t is null and p.o = p.b then 'delete'
        when p.t is null then case rule when 'delete_wins' then 'delete' when 'update_wins' then 'none' else 'delete_vs_update' end
        when p.o is null then case rule when 'delete_wins' then 'none' when 'update_wins' then 'insert' else 'update_vs_delete' end
        when p.o = p.t then 'none'
        else 'merge' end
     where p.table_id = tt.table_id;
    update pg_temp.gnomon_merge_plan p set r = p.t where p.table_id = tt.table_id and p.action = 'insert';

    -- both sides have the row: merge column by column with each column's strategy
    if exists (select 1 from pg_temp.gnomon_merge_plan p where p.table_id = tt.table_id and p.action = 'merge') then
      lateral_sql := ''; r_parts := '{}'; c_parts := '{}'; n := 0;
      r_parts := r_parts || format('jsonb_build_object(%s)', keycols_json);
      for col in select c from jsonb_array_elements(tt.columns) c where not (c->>'name') = any (tt.key_columns)
                  order by (c->>'attnum')::int loop
        n := n + 1;
        s_strategy := 'fail'; s_options := null; s_fn := null;
        select s.strategy, s.options, s.custom_function into s_strategy, s_options, s_fn from gnomon.merge_strategy s
         where s.table_id = tt.table_id and s.column_name in (col->>'name', '*')
         order by s.column_name = '*' limit 1;
        s_strategy := coalesce(s_strategy, 'fail');
        expr := format('(q.b).%1$I, (q.o).%1$I, (q.t).%1$I', col->>'name');
        expr := case s_strategy
          when 'counter' then
            case when (select a.atttypid from pg_attribute a where a.attrelid = tt.relid and a.attname = col->>'name') = 'numeric'::regtype
                      and (select a.atttypmod from pg_attribute a where a.attrelid = tt.relid and a.attname = col->>'name') >= 4
                 then format('gnomon.merge_counter(%s, %s, %s)', expr,
                             ((select a.atttypmod from pg_attribute a where a.attrelid = tt.relid and a.attname = col->>'name') - 4) >> 16,
                             ((select a.atttypmod from pg_attribute a where a.attrelid = tt.relid and a.attname = col->>'name') - 4) & 65535)
                 else format('gnomon.merge_counter(%s)', expr) end
          when 'json' then format('gnomon.merge_json(%s, %L::boolean, %s, %s)', expr,
                                  coalesce((s_options->>'arrays_as_sets')::boolean, false)::text,
                                  coalesce((s_options->>'max_depth')::integer, 64),
                                  coalesce((s_options->>'max_nodes')::integer, 100000))
          when 'custom' then format('gnomon.merge_custom(%s, %L::regprocedure)', expr, s_fn::text)
          else format('gnomon.merge_%s(%s)', s_strategy, expr) end;
        lateral_sql := lateral_sql || format(' cross join lateral %s m%s', expr, n);
        r_parts := r_parts || format('jsonb_build_object(%L, to_jsonb(m%s.value))', col->>'name', n);
        c_parts := c_parts || format('case when m%1$s.conflict is not null then jsonb_build_object(%2$L, jsonb_build_object(''reason'', m%1$s.conflict, ''strategy'', %3$L)) else ''{}''::jsonb end',
                                     n, col->>'name', s_strategy);
      end loop;
      execute format($m$
        update pg_temp.gnomon_merge_plan p set r = m.r, conflicts = nullif(m.c, '{}'::jsonb)
          from (select q.tid, %1$s as r, %2$s as c
                  from (select p.ctid as tid, p.key, p.o as oj, jsonb_populate_record(null::%3$s, p.b) as b, jsonb_populate_record(null::%3$s, p.o) as o,
                               jsonb_populate_record(null::%3$s, p.t) as t
                          from pg_temp.gnomon_merge_plan p where p.table_id = $1 and p.action = 'merge' offset 0) q %4$s) m
         -- joined on the row's ctid: linear whatever the temporary table's (absent) statistics say
         where p.ctid = m.tid$m$,
        array_to_string(r_parts, ' || '), case when n = 0 then '''{}''::jsonb' else array_to_string(c_parts, ' || ') end,
        tab, lateral_sql) using tt.table_id;
    end if;

    -- declared resolutions of the pair, for exactly these conflicts
    update pg_temp.gnomon_merge_plan p set r = p.r || x.patch, conflicts = nullif(p.conflicts - x.cols, '{}'::jsonb)
      from (select p2.key, jsonb_object_agg(c.key, case mr.choice when 'ours' then p2.o->c.key when 'theirs' then p2.t->c.key
                                                              when 'base' then p2.b->c.key else mr.value end) as patch,
                   array_agg(c.key) as cols
              from pg_temp.gnomon_merge_plan p2
              cross join lateral jsonb_each(p2.conflicts) c
              join gnomon.merge_resolution mr on mr.source_id = merge_prepare.source_id and mr.target_id = merge_prepare.target_id
                                             and mr.table_id = tt.table_id and mr.key = p2.key and mr.column_name = c.key
                                             and mr.base is not distinct from p2.b->c.key and mr.ours is not distinct from p2.o->c.key
                                             and mr.theirs is not distinct from p2.t->c.key
             where p2.table_id = tt.table_id and p2.action = 'merge'
             group by p2.key) x
     where p.table_id = tt.table_id and p.action = 'merge' and p.key = x.key;
    update pg_temp.gnomon_merge_plan p
       set action = case when mr.choice = 'theirs' then case p.action when 'delete_vs_update' then 'delete' else 'insert' end else 'none' end,
           r = case when mr.choice = 'theirs' and p.action = 'update_vs_delete' then p.t end
      from gnomon.merge_resolution mr
     where p.table_id = tt.table_id and p.action in ('delete_vs_update', 'update_vs_delete')
       and mr.source_id = merge_prepare.source_id and mr.target_id = merge_prepare.target_id and mr.table_id = tt.table_id
       and mr.key = p.key and mr.column_name = '' and mr.base is not distinct from p.b and mr.ours is not distinct from p.o
       and mr.theirs is not distinct from p.t;
    update pg_temp.gnomon_merge_plan p
       set action = case when p.conflicts is not null then 'conflict' when p.r = p.o then 'none' else 'update' end
     where p.table_id = tt.table_id and p.action = 'merge';
  end loop;
end $$;
comment on function gnomon.merge_prepare(text, text, text[]) is 'Internal: plans a merge into pg_temp.gnomon_merge_plan and returns its points.';

-- Writes a planned merge into the target through its normal versioning: main's table (its triggers write history)
-- or the target branch's views. A row that changed since the plan read it is never overwritten: 40001, retry.
create or replace function gnomon.merge_apply(target_id integer) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  tgt text; cols text; set_list text; keymatch text; keymatch_p text; expected bigint; done bigint;
  prev_branch text := current_setting('gnomon.branch', true);
begin
  if target_id <> 0 then
    perform set_config('gnomon.branch', target_id::text, true);
  end if;
  for tt in select * from gnomon.tracked_table x
             where exists (select 1 from pg_temp.gnomon_merge_plan p where p.table_id = x.table_id and p.action in ('insert', 'update', 'delete'))
             order by x.table_id loop
    tgt := case when target_id = 0 then format('%I.%I', tt.schema_name, tt.table_name)
                else format('%I.%I', gnomon.branch_schema(tt.schema_name), tt.table_name) end;
    -- generated (computed) columns are left to PostgreSQL
    select string_agg(format('%I', a.attname), ', ' order by a.attnum),
           string_agg(format('%1$I = r.%1$I', a.attname), ', ' order by a.attnum) filter (where not a.attname = any (tt.key_columns))
      into cols, set_list
      from pg_attribute a where a.attrelid = tt.relid and a.attnum > 0 and not a.attisdropped and a.attgenerated = '';
    select string_agg(format('x.%1$I = r.%1$I', k), ' and '),
           string_agg(format('x.%1$I = (p.key->>%1$L)::%2$s', k, (select c->>'type' from jsonb_array_elements(tt.columns) c where c->>'name' = k)), ' and ')
      into keymatch, keymatch_p from unnest(tt.key_columns) k;

    select count(*) into expected from pg_temp.gnomon_merge_plan p where p.table_id = tt.table_id and p.action = 'delete';
    if expected > 0 then
      execute format('delete from %s x using pg_temp.gnomon_merge_plan p where p.table_id = $1 and p.action = ''delete'' and %s and to_jsonb(x) = p.o',
                     tgt, keymatch_p) using tt.table_id;
      get diagnostics done = row_count;
      if done <> expected then
        raise exception using errcode = '40001',
          message = format('could not serialize the merge: %s of %s rows to delete from %s changed concurrently', expected - done, expected, tgt),
          hint = 'Merge again: nothing of this merge was written.';
      end if;
    end if;
    select count(*) into expected from pg_temp.gnomon_merge_plan p where p.table_id = tt.table_id and p.action = 'update';
    if expected > 0 and set_list is not null then
      execute format('update %1$s x set %2$s from pg_temp.gnomon_merge_plan p cross join lateral jsonb_populate_record(null::%3$s, p.r) r '
                     'where p.table_id = $1 and p.action = ''update'' and %4$s and to_jsonb(x) = p.o',
                     tgt, set_list, format('%I.%I', tt.schema_name, tt.table_name), keymatch) using tt.table_id;
      get diagnostics done = row_count;
      if done <> expected then
        raise exception using errcode = '40001',
          message = format('could not serialize the merge: %s of %s rows to update in %s changed concurrently', expected - done, expected, tgt),
          hint = 'Merge again: nothing of this merge was written.';
      end if;
    end if;
    select count(*) into expected from pg_temp.gnomon_merge_plan p where p.table_id = tt.table_id and p.action = 'insert';
    if expected > 0 then
      execute format('insert into %1$s (%2$s) %3$s select %4$s from pg_temp.gnomon_merge_plan p cross join lateral jsonb_populate_record(null::%5$s, p.r) r '
                     'where p.table_id = $1 and p.action = ''insert''%6$s',
                     tgt, cols,
                     case when target_id = 0 and exists (select 1 from pg_attribute a where a.attrelid = tt.relid and a.attidentity = 'a')
                          then 'overriding system value' else '' end,
                     (select string_agg('r.' || trim(c), ', ') from unnest(string_to_array(cols, ',')) c),
                     format('%I.%I', tt.schema_name, tt.table_name),
                     case when target_id = 0 then ' on conflict do nothing' else '' end) using tt.table_id;
      get diagnostics done = row_count;
      if done <> expected then
        raise exception using errcode = '40001',
          message = format('could not serialize the merge: %s of %s rows to insert into %s were inserted concurrently', expected - done, expected, tgt),
          hint = 'Merge again: nothing of this merge was written.';
      end if;
    end if;
  end loop;
  if target_id <> 0 then
    perform set_config('gnomon.branch', coalesce(prev_branch, ''), true);
  end if;
end $$;
comment on function gnomon.merge_apply(integer) is 'Internal: writes a planned merge into the target (main''s tables or a branch''s views).';

-- Merges source into target ('main' or branch names), atomically, in the caller's transaction. With conflicts it
-- changes nothing in the target and records them (status 'conflicts'); declare resolutions (gnomon.merge_resolve)
-- and merge again. dry_run: plans and records, writes nothing. tables: only these tracked tables (null: all).
create or replace function gnomon.merge(source text, target text, dry_run boolean default false, tables text[] default null)
returns gnomon.merge language plpgsql as $$
declare
  prep record;
  m gnomon.merge;
  n_conf bigint;
begin
  select * into prep from gnomon.merge_prepare(source, target, tables);
  select count(*) into n_conf
    from (select 1 from pg_temp.gnomon_merge_plan p cross join lateral jsonb_object_keys(p.conflicts) k where p.action = 'conflict'
          union all select 1 from pg_temp.gnomon_merge_plan p where p.action in ('delete_vs_update', 'update_vs_delete')) c;
  insert into gnomon.merge (source_name, target_name, source_id, target_id, base, theirs, status, adds, modifications, deletes,
                            conflicts, merge_xid)
  select source, target, prep.source_id, prep.target_id, prep.base, prep.theirs,
         case when coalesce(dry_run, false) then 'dry_run' when n_conf > 0 then 'conflicts'
              when count(*) filter (where p.action in ('insert', 'update', 'delete')) = 0 then 'nothing' else 'applied' end,
         count(*) filter (where p.action = 'insert'), count(*) filter (where p.action = 'update'),
         count(*) filter (where p.action = 'delete'), n_conf, pg_current_xact_id()
    from pg_temp.gnomon_merge_plan p
  returning * into m;
  insert into gnomon.merge_conflict (merge_id, table_id, key, column_name, kind, base, ours, theirs, strategy, reason)
  select m.merge_id, p.table_id, p.key, c.key, 'column', p.b->c.key, p.o->c.key, p.t->c.key, c.value->>'strategy', c.value->>'reason'
    from pg_temp.gnomon_merge_plan p cross join lateral jsonb_each(p.conflicts) c where p.action = 'conflict'
  union all
  select m.merge_id, p.table_id, p.key, '', p.action, p.b, p.o, p.t, null,
         case p.action when 'delete_vs_update' then 'the source deleted the row and the target updated it'
                       else 'the source updated the row and the target deleted it' end
    from pg_temp.gnomon_merge_plan p where p.action in ('delete_vs_update', 'update_vs_delete');
  if m.status = 'applied' then
    perform gnomon.merge_apply(prep.target_id);
  end if;
  return m;
end $$;
comment on function gnomon.merge(text, text, boolean, text[]) is
  'Merges source into target (''main'' or branches): three-way, per-column strategies, atomic; with conflicts changes nothing and records them; dry_run only plans. Returns the merge''s row.';

-- What a merge would do, key by key, without doing it (nor recording anything).
create or replace function gnomon.merge_preview(source text, target text, tables text[] default null)
returns table (table_name text, key jsonb, action text, ours jsonb, result jsonb, conflicts jsonb)
language plpgsql as $$
begin
  perform gnomon.merge_prepare(source, target, tables);
  return query
    select format('%I.%I', t.schema_name, t.table_name), p.key,
           case when p.action in ('delete_vs_update', 'update_vs_delete') then 'conflict' else p.action end,
           p.o, case when p.action in ('insert', 'update') then p.r end,
           case when p.action in ('delete_vs_update', 'update_vs_delete')
                then jsonb_build_object('', jsonb_build_object('reason', p.action)) else p.conflicts end
      from pg_temp.gnomon_merge_plan p join gnomon.tracked_table t on t.table_id = p.table_id
     order by p.table_id, p.key;
end $$;
comment on function gnomon.merge_preview(text, text, text[]) is 'What a merge of source into target would do per key: insert, update, delete, none or conflict, with ours and the result.';

-- The conflicts of a merge, with table names.
create or replace function gnomon.merge_conflicts(merge_id bigint)
returns table (table_name text, key jsonb, column_name text, kind text, base jsonb, ours jsonb, theirs jsonb, strategy text, reason text)
language plpgsql stable as $$
begin
  if not exists (select 1 from gnomon.merge m where m.merge_id = merge_conflicts.merge_id) then
    raise exception using errcode = 'GN063', message = format('no merge has id %s', merge_id),
      hint = 'List merges with select * from gnomon.merge order by merge_id desc;';
  end if;
  return query
    select format('%I.%I', t.schema_name, t.table_name), c.key, c.column_name::text, c.kind, c.base, c.ours, c.theirs, c.strategy, c.reason
      from gnomon.merge_conflict c join gnomon.tracked_table t on t.table_id = c.table_id
     where c.merge_id = merge_conflicts.merge_id
     order by t.table_id, c.key, c.column_name;
end $$;
comment on function gnomon.merge_conflicts(bigint) is 'The conflicts of a merge run: table, key, column ('''' for a row), kind, base, ours, theirs, strategy, reason.';

-- Declares how to resolve one conflict of a merge run: 'ours', 'theirs', 'base', or 'value' with a jsonb value (a
-- column's value as to_jsonb gives it). column_name '' (or null) for a row conflict (ours keeps the target's row,
-- theirs takes the source's delete or row). The next merge of the same pair applies it if it meets the same conflict.
create or replace function gnomon.merge_resolve(merge_id bigint, table_name text, key jsonb, column_name text,
                                                choice text, value jsonb default null) returns void
language plpgsql as $$
declare
  m gnomon.merge;
  tt gnomon.tracked_table := gnomon.tracked(table_name);
  c gnomon.merge_conflict;
begin
  select * into m from gnomon.merge x where x.merge_id = merge_resolve.merge_id;
  if not found then
    raise exception using errcode = 'GN063', message = format('no merge has id %s', merge_id),
      hint = 'List merges with select * from gnomon.merge order by merge_id desc;';
  end if;
  select * into c from gnomon.merge_conflict x
   where x.merge_id = merge_resolve.merge_id and x.table_id = tt.table_id and x.key = merge_resolve.key
     and x.column_name = coalesce(merge_resolve.column_name, '');
  if not found then
    raise exception using errcode = 'GN063',
      message = format('merge %s has no conflict on %s key %s column %L', merge_id, table_name, key, coalesce(column_name, '')),
      hint = format('List its conflicts with select * from gnomon.merge_conflicts(%s);', merge_id);
  end if;
  if choice is null or choice not in ('ours', 'theirs', 'base', 'value') or (choice = 'value') <> (value is not null)
     or (choice in ('base', 'value') and c.column_name = '') then
    raise exception using errcode = 'GN021', message = format('invalid resolution %L%s', choice, case when value is not null then ' with a value' else '' end),
      hint = 'Resolve a column with ours, theirs, base, or value plus the value; a row with ours or theirs.';
  end if;
  insert into gnomon.merge_resolution (source_id, target_id, table_id, key, column_name, base, ours, theirs, choice, value)
  values (m.source_id, m.target_id, tt.table_id, c.key, c.column_name, c.base, c.ours, c.theirs, choice, value)
  on conflict on constraint merge_resolution_pkey do update
    set base = excluded.base, ours = excluded.ours, theirs = excluded.theirs, choice = excluded.choice, value = excluded.value,
        declared_at = clock_timestamp();
end $$;
comment on function gnomon.merge_resolve(bigint, text, jsonb, text, text, jsonb) is
  'Declares the resolution of one conflict of a merge run (ours, theirs, base, or a value); the next merge of the pair applies it.';
