-- Merges: a three-way merge of a source (main or a branch) into a target (main or a branch), set-based in the
-- database, per column through the strategies of R__09_merge_strategies.sql.
--
-- base   = the common ancestor: the source's state at the last merge of the pair (either direction), else the
--          nearest level both read (the parent at the cutoff, for a branch and its parent).
-- ours   = the target now; theirs = the source now (at the merge's snapshot, recorded, so the next merge of the pair
--          starts exactly there).
-- Only keys the source changed since the base can change the target: the merge reads the diff base -> theirs, so
-- its cost grows with those changes, and a merge with nothing new writes nothing.

-- merge_read_sql takes the point itself since the typed merge (it shapes the statement for it).
drop function if exists gnomon.merge_read_sql(gnomon.tracked_table, text, text, text);
-- merge_read_sql takes the live row's expression, and merge_apply the merge's points, since the merge plans without
-- row locks (they re-plan rows that changed before they were written)
drop function if exists gnomon.merge_read_sql(gnomon.tracked_table, gnomon.point, text, text, text);
drop function if exists gnomon.merge_apply(integer);
-- merge_prepare and merge_plan_table take all_ours since gnomon.merge keeps ours in its plans on main only where a
-- conflict reports it
drop function if exists gnomon.merge_prepare(text, text, text[]);
drop function if exists gnomon.merge_plan_table(gnomon.tracked_table, integer, integer, gnomon.point, gnomon.point, gnomon.point, tid[]);
-- merge_plan_table takes the keys to plan as SQL, and merge_prepare writes directly where the target's row is unchanged
-- since the base, since the merge writes those keys without a plan (issue 4, session 14)
drop function if exists gnomon.merge_plan_table(gnomon.tracked_table, integer, integer, gnomon.point, gnomon.point, gnomon.point, tid[], boolean);
drop function if exists gnomon.merge_prepare(text, text, text[], boolean);

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
                              or exists (select 1 from jsonb_object_keys(options) k where k not in ('arrays_as_sets', 'max_depth', 'max_nodes'))
                              -- each value of its type: a boolean, positive integers (checked now, not by the next merge)
                              or jsonb_typeof(coalesce(options->'arrays_as_sets', 'true')) <> 'boolean'
                              or exists (select 1 from jsonb_each(options) e where e.key in ('max_depth', 'max_nodes')
                                            and (jsonb_typeof(e.value) <> 'number' or e.value::text !~ '^[0-9]+$'
                                                 or e.value::text::numeric < 1 or e.value::text::numeric > 2147483647))) then
    raise exception using errcode = 'GN021', message = format('invalid options %s for strategy %s', options, strategy),
      hint = 'Only json takes options: {"arrays_as_sets": true, "max_depth": 64, "max_nodes": 100000} (a boolean and positive integers).';
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
  lp gnomon.point;
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
      lp := gnomon.branch_point(l);
      return (lp.chain, snap || lp.snaps[2:], lp.main_snap)::gnomon.point;
    end if;
  end loop;
  return ('{}'::integer[], '{}'::pg_snapshot[], gnomon.older_snapshot(s.main_snap, t.main_snap))::gnomon.point;
end $$;
comment on function gnomon.merge_base(integer, integer) is 'Internal: the base point of a merge of a pair of branches (0: main).';

-- Whether a tracked table differs between two points (its generated diff returns a row).
create or replace function gnomon.point_has_changes(tt gnomon.tracked_table, a gnomon.point, b gnomon.point) returns boolean
language plpgsql stable as $$
declare
  found_one boolean;
begin
  execute format('select exists (select 1 from gnomon_t.%I($1, $2))', gnomon.object_name(tt.base_name, '_diff'))
    into found_one using a, b;
  return found_one;
end $$;
comment on function gnomon.point_has_changes(gnomon.tracked_table, gnomon.point, gnomon.point) is
  'Internal: whether a tracked table differs between two points (used to refuse a merge of some tables that would leave the others'' changes behind).';

-- SQL that reads a tracked table's rows at a point for a set of keys, set-based and typed: joins, the left joins to
-- append to a FROM clause whose relation keys (columns named as the key) holds distinct keys, and pick, an
-- expression of the table's own row type: the row at the point, or NULL when the key has no row there. It is the
-- keyed form of gnomon_t.<t>_at(point) (R__08_branches.sql), which it must match: per key, the nearest branch level
-- that held the key at that level's snapshot (the live branch row when the snapshot saw its last write, else the
-- image from before the first write it did not see; a tombstone: no row), else main as of the point's main snapshot
-- (the image from before the first version it does not see), else the live row. point_sql is an expression of type
-- gnomon.point (a query parameter) whose value is point: the SQL is shaped for it (no branch levels, one level, whose
-- rows need no choice of the nearest, or several; main's history only when the point reads main at a snapshot).
-- suffix names the joined relations, so that several points can be read in one FROM clause. The levels' rows are
-- joined to the keys as base relations, so the planner estimates each join by their statistics (a left join keeps
-- the keys' count); the live row is looked up by key only for the keys no level held (an index probe each: none when
-- the source branch wrote every key, and no scan of the whole table for a small merge), or is live, an expression of
-- the live row that the caller reads anyway (merge_plan_table reads it once per key for base, theirs and ours);
-- picks_live, an expression true where the pick is the live row. No function call per key, and no conversion of a
-- row to another representation.
create or replace function gnomon.merge_read_sql(tt gnomon.tracked_table, point gnomon.point, point_sql text, keys text,
                                                 suffix text, live text, out joins text, out pick text, out picks_live text)
language plpgsql stable as $$
declare
  tab text := format('%I.%I', tt.schema_name, tt.table_name);
  levels integer := coalesce(cardinality(point.chain), 0);
  b_row text; h_row text; x_row text; h_key text; x_key text; l_key text; b_cols text; x_cols text;
  k1 text := tt.key_columns[1];
  br text := 'br' || suffix; mh text := 'mh' || suffix;
begin
  select format('row(%s)::%s', string_agg(format('b.%I', c->>'name'), ', ' order by (c->>'attnum')::int), tab),
         format('row(%s)::%s', string_agg(format('%s.%I', case when (c->>'name') = any (tt.key_columns) then 'b' else 'h' end, c->>'name'), ', '
                                          order by (c->>'attnum')::int), tab),
         format('row(%s)::%s', string_agg(format('x.%I', c->>'name'), ', ' order by (c->>'attnum')::int), tab)
    into b_row, h_row, x_row from jsonb_array_elements(tt.columns) c;
  select string_agg(format('h.%1$I = b.%1$I', kk), ' and '), string_agg(format('x.%1$I = k.%1$I', kk), ' and '),
         string_agg(format('l.%1$I = %2$s.%1$I', kk, keys), ' and '), string_agg(format('b.%I', kk), ', '),
         string_agg(format('x.%I', kk), ', ')
    into h_key, x_key, l_key, b_cols, x_cols from unnest(tt.key_columns) kk;
  joins := ''; pick := ''; picks_live := 'true';
  if levels > 0 then
    -- a snapshot that did not see the row's last write reads the image from before the first write it did not see
    -- (a history row 'I': no row there yet)
    joins := format($b$
      left join (%1$s
                   from (select %2$s, lv.lvl,
                                case when lv.snap is not null and not pg_visible_in_snapshot(b.g_xid, lv.snap)
                                     then (select case when h.g_del is false then %3$s end
                                             from gnomon_t.%4$I h
                                            where h.g_branch = b.g_branch and %5$s and h.g_xid >= pg_snapshot_xmin(lv.snap)
                                              and not pg_visible_in_snapshot(h.g_xid, lv.snap)
                                            order by h.g_vid limit 1)
                                     when b.g_del then null else %6$s end as g_row
                           from unnest((%7$s).chain, (%7$s).snaps) with ordinality lv(id, snap, lvl)
                           join gnomon_t.%8$I b on b.g_branch = lv.id
                          where lv.snap is null or pg_visible_in_snapshot(b.g_cxid, lv.snap)) s
                  %9$s) %10$I on %11$s$b$,
      -- the nearest level that held the key; with one level a key has at most one row there
      case when levels > 1
           then format('select distinct on (%1$s) %1$s, s.g_row', (select string_agg(format('s.%I', kk), ', ') from unnest(tt.key_columns) kk))
           else format('select %s, s.g_row', (select string_agg(format('s.%I', kk), ', ') from unnest(tt.key_columns) kk)) end,
      b_cols, h_row, gnomon.object_name(tt.base_name, '_bh'), h_key, b_row, point_sql, gnomon.object_name(tt.base_name, '_b'),
      case when levels > 1 then format('order by %s, s.lvl', (select string_agg(format('s.%I', kk), ', ') from unnest(tt.key_columns) kk)) else '' end,
      br, (select string_agg(format('%1$I.%2$I = %3$s.%2$I', br, kk, keys), ' and ') from unnest(tt.key_columns) kk));
    pick := format('when %I.%I is not null then %1$I.g_row ', br, k1);
    picks_live := format('%I.%I is null', br, k1);
  end if;
  if point.main_snap is not null then
    joins := joins || format($h$
      left join (select distinct on (%1$s) %1$s, case when x.g_op <> 'I' then %2$s end as g_row
                   from gnomon_t.%3$I x join %4$s k on %5$s
                  where x.g_xid >= pg_snapshot_xmin((%6$s).main_snap)
                    and not pg_visible_in_snapshot(x.g_xid, (%6$s).main_snap)
                  order by %1$s, x.g_vid) %7$I on %8$s$h$,
      x_cols, x_row, tt.history_table, keys, x_key, point_sql, mh,
      (select string_agg(format('%1$I.%2$I = %3$s.%2$I', mh, kk, keys), ' and ') from unnest(tt.key_columns) kk));
    pick := pick || format('when %I.%I is not null then %1$I.g_row ', mh, k1);
    picks_live := picks_live || format(' and %I.%I is null', mh, k1);
  end if;
  -- the live row: the caller's expression (a row it read already), else an index probe
  live := coalesce(live, format('(select l from %s l where %s)', tab, l_key));
  pick := case when pick = '' then live else format('case %selse %s end', pick, live) end;
end $$;
comment on function gnomon.merge_read_sql(gnomon.tracked_table, gnomon.point, text, text, text, text) is
  'Internal: SQL reading a table''s rows at a point for a set of keys, set-based and typed (the keyed form of <base>_at): left joins, the row''s expression, and whether it is the live row.';

-- SQL of a jsonb object from a list of parts, each a key expression, a value expression, or a "key, value" pair: one
-- jsonb_build_object per 50 parts (a function takes at most 100 arguments, and a pair is two), concatenated; 50 is
-- even, so alternating keys and values stay together.
create or replace function gnomon.merge_build_object(parts text[]) returns text
language sql immutable as $$
  select coalesce(string_agg(format('jsonb_build_object(%s)', c.args), ' || ' order by c.n), '''{}''::jsonb')
    from (select (i - 1) / 50 as n, string_agg(parts[i], ', ' order by i) as args
            from generate_subscripts(parts, 1) i group by (i - 1) / 50) c
$$;
comment on function gnomon.merge_build_object(text[]) is 'Internal: SQL of a jsonb object built from key and value expressions (or pairs), 50 parts per call.';

-- The merged (non-key) columns of a tracked table whose type's `=` may hold between values that are not identical
-- (numeric 1.0 and 1.00, jsonb, floats, text under a nondeterministic collation, ...). Where ours is base, the per-column
-- rule gives theirs exactly for every other column (a column both sides have equal is ours, identical to theirs); for
-- these, a column theirs has equal to ours keeps ours.
create or replace function gnomon.merge_inexact_columns(tt gnomon.tracked_table) returns name[]
language sql stable as $$
  select coalesce(array_agg(a.attname order by a.attnum), '{}')
    from pg_attribute a join pg_type t on t.oid = a.atttypid
         left join pg_collation co on co.oid = a.attcollation
   where a.attrelid = tt.relid and a.attnum > 0 and not a.attisdropped and not a.attname = any (tt.key_columns)
     and (not ((case when t.typtype = 'd' then t.typbasetype else t.oid end)
                 in ('bool'::regtype, 'int2'::regtype, 'int4'::regtype, 'int8'::regtype, 'oid'::regtype, 'text'::regtype,
                     'varchar'::regtype, '"char"'::regtype, 'name'::regtype, 'bytea'::regtype, 'uuid'::regtype,
                     'date'::regtype, 'time'::regtype, 'timestamp'::regtype, 'timestamptz'::regtype)
               or (t.oid = 'bpchar'::regtype and a.atttypmod >= 0))
          or coalesce(not co.collisdeterministic, false))
$$;
comment on function gnomon.merge_inexact_columns(gnomon.tracked_table) is
  'Internal: the merged columns of a table whose type''s = may hold between values that are not identical (numeric, jsonb, floats, nondeterministic collations).';

-- Plans a merge of one table into its typed temporary table pg_temp.gnomon_merge_plan_<table_id> (merge_prepare
-- creates it): one row per key the source changed since the base, with its key columns, the action (insert, update,
-- delete, none, conflict, or a row conflict), ours (all_ours false: on main only for conflicts), the merged row (values
-- of the table's own row type), for conflicts base, theirs and the conflicts per column, and on main the xmin of the
-- target's row as the plan read it.
-- One statement: the candidate keys, base and theirs read set-based (the diff), the target's live row read once per
-- key (an index probe) for ours and for whichever of base and theirs reads main's live row, the classification, the
-- strategies (called only where both sides changed a column; the per-column rule is inlined) and the declared
-- resolutions. No row is converted to jsonb unless it is reported. Ours is read without row locks: merge_apply writes
-- only rows still as the plan read them (by xmin) and re-plans the others. replan: instead of the candidate keys, the
-- keys of these plan rows, whose rows are replaced; on main their target rows are then locked (FOR UPDATE) and ours is
-- read after the locks, so a re-planned row cannot change again before it is written. keys_sql: instead of the
-- candidate keys, the keys this query returns ($2 the base, $3 theirs: merge_direct_table's keys left over). Returns,
-- for a re-plan, the new
-- plan rows and how many of them are conflicts.
create or replace function gnomon.merge_plan_table(tt gnomon.tracked_table, source_id integer, target_id integer,
                                                   base gnomon.point, theirs gnomon.point, ours gnomon.point,
                                                   replan tid[] default null, all_ours boolean default true,
                                                   keys_sql text default null,
                                                   out planned tid[], out conflicts bigint)
language plpgsql set jit = off set work_mem = '32MB' as $$
declare
  tab text := format('%I.%I', tt.schema_name, tt.table_name);
  plan text := 'gnomon_merge_plan_' || tt.table_id;
  keys_x text; keys_p text; keys_q text; keys_z text; key_json_m text; keys_match text; rule text; has_res boolean;
  col jsonb; s_strategy text; s_options jsonb; s_fn regprocedure; expr text; lateral_sql text; r_parts text[]; c_parts text[];
  kk_sql text; ours_cte text; rb record; rt record; rd record; n integer := 0; typmod integer; body text; exact boolean;
begin
  select string_agg(format('x.%I', k), ', ' order by o), string_agg(format('p.%I', k), ', ' order by o),
         string_agg(format('q.%I', k), ', ' order by o), string_agg(format('z.%I', k), ', ' order by o),
         string_agg(format('%L, m.%I', k, k), ', ' order by o), string_agg(format('g_live.%1$I = kk.%1$I', k), ' and ' order by o)
    into keys_x, keys_p, keys_q, keys_z, key_json_m, keys_match
    from unnest(tt.key_columns) with ordinality u(k, o);
  select coalesce((select r.delete_vs_update from gnomon.merge_rule r where r.table_id = tt.table_id), 'conflict') into rule;
  has_res := exists (select 1 from gnomon.merge_resolution mr where mr.source_id = merge_plan_table.source_id
                       and mr.target_id = merge_plan_table.target_id and mr.table_id = tt.table_id);
  -- whether every merged column's type has an equality that holds only between identical values (integers, text
  -- under a deterministic collation, ...): then where ours is base, the per-column rule gives theirs exactly (a column
  -- both sides have equal is ours, which is then identical to theirs), and the row needs no per-column work
  exact := cardinality(gnomon.merge_inexact_columns(tt)) = 0;
  kk_sql := case when keys_sql is not null then keys_sql
                 when replan is null
                 then format('select * from gnomon_t.%I($2, $3)', gnomon.object_name(tt.base_name, '_dkeys'))
                 -- (the plan rows to re-plan leave the plan; the statement inserts their new rows)
                 else format('delete from pg_temp.%I p where p.ctid = any ($5) returning %s', plan, keys_p) end;
  -- ours: on main, the live row read with base and theirs (no lock), or for a re-plan the target's row locked (row
  -- locks only: writers of other rows never wait; a writer of one of them makes the merge wait and then read its
  -- committed row) by an index probe per key, then the keys the target has no row for; on a branch, read at the
  -- target's point (merge_apply locks and compares the branch rows before writing them)
  if target_id = 0 and replan is null then
    ours_cte := 'c0 as (select dd.*, dd.g_ml as g_mo, dd.g_lx as g_ox, dd.g_bl as g_same from dd)';
  elsif target_id = 0 then
    ours_cte := format('o as materialized (select dd.*, l.g_live as g_mo, l.g_x as g_ox, false as g_same from dd cross join lateral (select g_live, g_live.xmin as g_x from %1$s g_live where %2$s for update of g_live) l), '
                       'c0 as (select * from o union all select dd.*, null::%1$s, null::xid, false from dd where not exists (select 1 from o where %3$s))',
                       tab, (select string_agg(format('g_live.%1$I = dd.%1$I', k), ' and ') from unnest(tt.key_columns) k),
                       (select string_agg(format('o.%1$I = dd.%1$I', k), ' and ') from unnest(tt.key_columns) k));
  else
    rd := gnomon.merge_read_sql(tt, ours, '$4', 'dd', '_o', 'dd.g_ml');
    ours_cte := format('c0 as (select dd.*, %s as g_mo, null::xid as g_ox, (dd.g_bl and %s) as g_same from dd%s)', rd.pick, rd.picks_live, rd.joins);
  end if;
  rb := gnomon.merge_read_sql(tt, base, '$2', 'kk', '_b', 'lv.g_live');
  rt := gnomon.merge_read_sql(tt, theirs, '$3', 'kk', '_t', 'lv.g_live');

  -- both sides have the row: column by column with each column's strategy (the other rows merge null records,
  -- which the per-column rule converges without calling a strategy)
  lateral_sql := ''; c_parts := '{}'; r_parts := '{}';
  for col in select c from jsonb_array_elements(tt.columns) c order by (c->>'attnum')::int loop
    if (col->>'name') = any (tt.key_columns) then
      r_parts := r_parts || format('q.%I', col->>'name');
      continue;
    end if;
    n := n + 1;
    s_strategy := 'fail'; s_options := null; s_fn := null;
    select s.strategy, s.options, s.custom_function into s_strategy, s_options, s_fn from gnomon.merge_strategy s
     where s.table_id = tt.table_id and s.column_name in (col->>'name', '*')
     order by s.column_name = '*' limit 1;
    s_strategy := coalesce(s_strategy, 'fail');
    expr := format('(q.rb).%1$I, (q.ro).%1$I, (q.rt).%1$I', col->>'name');
    typmod := (select a.atttypmod from pg_attribute a where a.attrelid = tt.relid and a.attname = col->>'name');
    expr := case s_strategy
      when 'counter' then
        case when (select a.atttypid from pg_attribute a where a.attrelid = tt.relid and a.attname = col->>'name') = 'numeric'::regtype
                  and typmod >= 4
             then format('gnomon.merge_counter(%s, %s, %s)', expr, (typmod - 4) >> 16, (typmod - 4) & 65535)
             else format('gnomon.merge_counter(%s)', expr) end
      when 'json' then format('gnomon.merge_json(%s, %L::boolean, %s, %s)', expr,
                              coalesce((s_options->>'arrays_as_sets')::boolean, false)::text,
                              coalesce((s_options->>'max_depth')::integer, 64),
                              coalesce((s_options->>'max_nodes')::integer, 100000))
      when 'custom' then format('gnomon.merge_custom(%s, %L::regprocedure)', expr, s_fn::text)
      else format('gnomon.merge_%s(%s)', s_strategy, expr) end;
    lateral_sql := lateral_sql || format(' cross join lateral %s m%s', expr, n);
    r_parts := r_parts || format('m%s.value', n);
    c_parts := c_parts || format('m%1$s.conflict is not null', n)
                       || format('%L, case when m%2$s.conflict is not null then jsonb_build_object(''reason'', m%2$s.conflict, ''strategy'', %3$L) end',
                                 col->>'name', n, s_strategy);
  end loop;

  body := format($m$
    with kk as materialized (
      -- the keys the source changed since the base
      %1$s
    ), dd as %18$s (
      -- with their base and theirs rows (the diff base -> theirs), read in one pass over the keys, and the target's
      -- live row (an index probe per key: the planner cannot know how many keys come, and must not hash the table);
      -- materialized only where two parts of the statement read it (a re-plan on main): storing 50,000 rows of
      -- three row values cost about 150 ms of CPU
      select * from (select kk.*, %2$s as g_mb, %3$s as g_mt, lv.g_live as g_ml, lv.g_x as g_lx, %29$s as g_bl
                       from kk%15$s%16$s
                       left join lateral (select g_live, g_live.xmin as g_x from %11$s g_live where %17$s offset 0) lv on true offset 0) d
       where %21$s
    ), %4$s, c as (
      select c0.*,
             -- (g_same: ours is the very row version base read, so ours is base and, as theirs is not, not theirs)
             case when c0.g_mb is null and c0.g_mo is null then 'insert'
                  when c0.g_mb is null and not %22$s then 'none'
                  when c0.g_mb is null then 'merge'
                  when c0.g_mt is null and c0.g_mo is null then 'none'
                  when c0.g_mt is null and (c0.g_same or not %23$s) then 'delete'
                  when c0.g_mt is null then %5$L
                  when c0.g_mo is null then %6$L
                  when c0.g_same then %30$L
                  when %31$s not %23$s then 'theirs'
                  when not %22$s then 'none'
                  else 'merge' end as g_mcls
        from c0
    ), m as (
      select %24$s, q.g_mb, q.g_mo, q.g_mt, q.g_mcls, q.g_ox,
             case when q.g_mcls = 'merge' then row(%9$s)::%11$s end as g_mr, %10$s as g_mc
        from (select c.*, case when c.g_mcls = 'merge' then c.g_mb end as rb,
                     case when c.g_mcls = 'merge' then c.g_mo end as ro,
                     case when c.g_mcls = 'merge' then c.g_mt end as rt
                from c offset 0) q %12$s
    ), z as (
      select m.*, %13$s
        from m %14$s
    )%27$s
      insert into pg_temp.%19$I (%20$s, g_action, g_b, g_o, g_t, g_r, g_conflicts, g_xmin)
      select %25$s,
             case when z.g_mcls in ('delete_vs_update', 'update_vs_delete') and z.row_choice = 'theirs'
                    then case z.g_mcls when 'delete_vs_update' then 'delete' else 'insert' end
                  when z.g_mcls in ('delete_vs_update', 'update_vs_delete') and z.row_choice is not null then 'none'
                  when z.g_mcls = 'theirs' then 'update'
                  when z.g_mcls <> 'merge' then z.g_mcls
                  when z.g_mc - z.resolved_cols <> '{}'::jsonb then 'conflict'
                  when not %26$s then 'none'
                  else 'update' end,
             -- base and theirs are kept where a conflict reports them, ours also where the caller reads it (a
             -- preview, a branch's writes, which compare it)
             case when z.g_mc is not null or z.g_mcls in ('delete_vs_update', 'update_vs_delete') then z.g_mb end,
             case when %32$s or z.g_mc is not null or z.g_mcls in ('delete_vs_update', 'update_vs_delete') then z.g_mo end,
             case when z.g_mc is not null or z.g_mcls in ('delete_vs_update', 'update_vs_delete') then z.g_mt end,
             case when z.g_mcls in ('insert', 'theirs') or (z.g_mcls = 'update_vs_delete' and z.row_choice = 'theirs') then z.g_mt
                  when z.g_mcls = 'merge' then z.g_fr end,
             nullif(z.g_mc - z.resolved_cols, '{}'::jsonb),
             z.g_ox
        from z%28$s$m$,
    kk_sql, rb.pick, rt.pick,
    ours_cte,
    case rule when 'delete_wins' then 'delete' when 'update_wins' then 'none' else 'delete_vs_update' end,
    case rule when 'delete_wins' then 'none' when 'update_wins' then 'insert' else 'update_vs_delete' end,
    null, null, array_to_string(r_parts, ', '),  -- (7 and 8 are no longer used)
    case when n = 0 then 'null::jsonb'
         else format('case when %s then jsonb_strip_nulls(%s) end',
                     (select string_agg(c_parts[i], ' or ') from generate_subscripts(c_parts, 1) i where i % 2 = 1),
                     gnomon.merge_build_object((select array_agg(c_parts[i] order by i) from generate_subscripts(c_parts, 1) i where i % 2 = 0))) end,
    tab, lateral_sql,
    -- declared resolutions of the pair, for exactly these conflicts (looked up only when the pair has some); a
    -- resolved column's value is written into the merged row (jsonb_populate_record over it)
    case when has_res then 'case when x.patch is null then m.g_mr else jsonb_populate_record(m.g_mr, x.patch) end as g_fr,'
                           ' coalesce(x.cols, ''{}''::text[]) as resolved_cols, y.choice as row_choice'
         else 'm.g_mr as g_fr, ''{}''::text[] as resolved_cols, null::text as row_choice' end,
    case when has_res then format($r$
        left join lateral (select jsonb_object_agg(mr.column_name, case mr.choice when 'ours' then to_jsonb(m.g_mo)->mr.column_name
                                                                   when 'theirs' then to_jsonb(m.g_mt)->mr.column_name
                                                                   when 'base' then to_jsonb(m.g_mb)->mr.column_name else mr.value end) as patch,
                                  array_agg(mr.column_name::text) as cols
                             from gnomon.merge_resolution mr
                            where m.g_mc is not null and mr.source_id = %1$s and mr.target_id = %2$s and mr.table_id = %3$s
                              and mr.key = jsonb_build_object(%4$s) and m.g_mc ? mr.column_name
                              and mr.base is not distinct from to_jsonb(m.g_mb)->mr.column_name
                              and mr.ours is not distinct from to_jsonb(m.g_mo)->mr.column_name
                              and mr.theirs is not distinct from to_jsonb(m.g_mt)->mr.column_name) x on true
        left join lateral (select mr.choice from gnomon.merge_resolution mr
                            where m.g_mcls in ('delete_vs_update', 'update_vs_delete')
                              and mr.source_id = %1$s and mr.target_id = %2$s and mr.table_id = %3$s
                              and mr.key = jsonb_build_object(%4$s) and mr.column_name = ''
                              and mr.base is not distinct from to_jsonb(m.g_mb) and mr.ours is not distinct from to_jsonb(m.g_mo)
                              and mr.theirs is not distinct from to_jsonb(m.g_mt)) y on true$r$, source_id, target_id, tt.table_id,
                              key_json_m)
         else '' end,
    rb.joins, rt.joins,
    keys_match,
    case when target_id = 0 and replan is not null then 'materialized' else 'not materialized' end,
    plan, (select string_agg(format('%I', k), ', ') from unnest(tt.key_columns) k),
    '(d.g_mb is distinct from d.g_mt)',
    '(c0.g_mo is distinct from c0.g_mt)',
    '(c0.g_mo is distinct from c0.g_mb)',
    keys_q, keys_z,
    '(z.g_fr is distinct from z.g_mo)',
    -- a re-plan: the INSERT as the last CTE, returning the new plan rows
    case when replan is not null then ', ins as (' else '' end,
    case when replan is not null then ' returning ctid, g_action) select coalesce(array_agg(ctid), ''{}''), count(*) filter'
                                      ' (where g_action in (''conflict'', ''delete_vs_update'', ''update_vs_delete'')) from ins' else '' end,
    rb.picks_live,
    case when exact then 'theirs' else 'merge' end,
    case when exact then '' else 'false and' end,
    (all_ours or target_id <> 0)::text);
  if replan is null then
    execute body using tt.table_id, base, theirs, ours, replan;
  else
    execute body into planned, conflicts using tt.table_id, base, theirs, ours, replan;
  end if;
end $$;
comment on function gnomon.merge_plan_table(gnomon.tracked_table, integer, integer, gnomon.point, gnomon.point, gnomon.point, tid[], boolean, text) is
  'Internal: plans a merge of one table into its typed pg_temp.gnomon_merge_plan_<table_id> (or re-plans some of its rows, their target rows locked).';

-- SQL of whether a row version of main whose xmin is xmin_sql was visible in the snapshot snap_sql (the base's
-- snapshot of main), given c_sql, the current snapshot's xmax as a bigint taken once per statement. The 32-bit xmin is
-- widened against it; an xmin that is not within 2^31 below it (a writer that began after the statement, seen when
-- PostgreSQL re-checks a row a concurrent transaction changed; or a frozen row older than that) counts as not visible,
-- so such a row is left to the plan, never written as unchanged.
create or replace function gnomon.merge_xmin_visible_sql(xmin_sql text, c_sql text, snap_sql text) returns text
language sql immutable as $$
  select format('(((%2$s - %1$s::text::bigint) & 4294967295) < 2147483648 and pg_visible_in_snapshot((%2$s - ((%2$s - %1$s::text::bigint) & 4294967295))::text::xid8, %3$s))',
                xmin_sql, c_sql, snap_sql)
$$;
comment on function gnomon.merge_xmin_visible_sql(text, text, text) is
  'Internal: SQL of whether a main row version (its 32-bit xmin) is visible in a snapshot (the merge''s base), widened against the current xmax.';

-- Merges one table of a branch into main without planning the keys whose row on main is unchanged since the base:
-- such a key takes theirs whole, whatever the strategies (the per-column rule: ours is base, so theirs wins; where
-- theirs has a column equal to ours, ours is kept, which only differs from theirs for the columns of
-- gnomon.merge_inexact_columns). For the shape where the source is a branch of main read now and the base is main at
-- a snapshot (a branch's first merge into main): the candidate keys are the branch's own rows, and theirs is the
-- branch row when its last write is visible at theirs. One UPDATE and one DELETE of main joined to the branch's rows,
-- each writing only rows whose version on main was visible in the base's snapshot (by its xmin; PostgreSQL re-checks a
-- row a concurrent transaction changed, whose new version is then skipped, never overwritten); an UPDATE only where
-- the row changes. The keys left over (main changed them since the base, the branch inserted them, a write the
-- snapshot of theirs does not see, or rows changed concurrently) are then planned by gnomon.merge_plan_table into the
-- table's plan and written by merge_apply as any plan. Called by merge_prepare(direct => true) inside gnomon.merge's
-- subtransaction: any conflict among the planned keys rolls these writes back. Returns the rows it wrote.
create or replace function gnomon.merge_direct_table(tt gnomon.tracked_table, source_id integer, base gnomon.point,
                                                     theirs gnomon.point, ours gnomon.point, all_ours boolean,
                                                     out updated bigint, out deleted bigint)
language plpgsql set jit = off set work_mem = '32MB' as $$
declare
  tab text := format('%I.%I', tt.schema_name, tt.table_name);
  bt name := gnomon.object_name(tt.base_name, '_b');
  inexact name[] := gnomon.merge_inexact_columns(tt);
  keymatch text; set_list text; x_cols text; b_cols text; keys_b text; k1 text := tt.key_columns[1];
  c_sql text := '(select pg_snapshot_xmax(pg_current_snapshot())::text::bigint)';
  total bigint;
begin
  select string_agg(format('x.%I = %s', x->>'name', case when x->>'type' = x->>'storetype' then format('b.%I', x->>'name')
                                                         else format('b.%I::%s', x->>'name', x->>'type') end), ' and '),
         string_agg(format('b.%I', x->>'name'), ', ')
    into keymatch, keys_b
    from unnest(tt.key_columns) k join jsonb_array_elements(tt.columns) x on x->>'name' = k;
  -- the merged columns main stores (generated columns are left to PostgreSQL): theirs, or ours where equal (inexact)
  select string_agg(format('%1$I = %2$s', a.attname,
                           case when a.attname = any (inexact) then format('case when x.%1$I is not distinct from %2$s then x.%1$I else %2$s end', a.attname, b.v)
                                else b.v end), ', ' order by a.attnum),
         string_agg(format('x.%I', a.attname), ', ' order by a.attnum), string_agg(b.v, ', ' order by a.attnum)
    into set_list, x_cols, b_cols
    from pg_attribute a
         join jsonb_array_elements(tt.columns) x on x->>'name' = a.attname
         cross join lateral (select case when x->>'type' = x->>'storetype' then format('b.%I', a.attname)
                                         else format('b.%I::%s', a.attname, x->>'type') end as v) b
   where a.attrelid = tt.relid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
     and not a.attname = any (tt.key_columns);
  -- deletes first, as merge_apply writes a plan. (The test of main's row version is or'ed with a condition on the
  -- branch row that is always false, so that PostgreSQL tests it on the joined rows only, not on every row of main it
  -- scans; it is re-checked all the same on a row a concurrent transaction changed.)
  execute format('with u as (delete from %1$s x using gnomon_t.%2$I b'
                 ' where b.g_branch = $1 and %3$s and b.g_del'
                 ' and pg_visible_in_snapshot(b.g_xid, $2) and pg_visible_in_snapshot(b.g_cxid, $2) and (%4$s or b.g_branch is null) returning 1)'
                 ' select count(*) from u',
                 tab, bt, keymatch, gnomon.merge_xmin_visible_sql('x.xmin', c_sql, '$3'))
    into deleted using source_id, theirs.snaps[1], base.main_snap;
  updated := 0;
  if set_list is not null then
    execute format('with u as (update %1$s x set %2$s from gnomon_t.%3$I b'
                   ' where b.g_branch = $1 and %4$s and not b.g_del'
                   ' and pg_visible_in_snapshot(b.g_xid, $2) and pg_visible_in_snapshot(b.g_cxid, $2) and (%5$s or b.g_branch is null)'
                   ' and row(%6$s) is distinct from row(%7$s) returning 1)'
                   ' select count(*) from u',
                   tab, set_list, bt, keymatch, gnomon.merge_xmin_visible_sql('x.xmin', c_sql, '$3'), x_cols, b_cols)
      into updated using source_id, theirs.snaps[1], base.main_snap;
  end if;
  -- every branch row written: nothing is left to plan (the common case, checked by counting the branch's rows)
  execute format('select count(*) from gnomon_t.%I b where b.g_branch = $1', bt) into total using source_id;
  if total = updated + deleted then
    return;
  end if;
  -- the keys left over: every branch row except those now settled (theirs visible, and main's row deleted for a
  -- tombstone, or for a row equal to theirs, or unchanged since the base: the UPDATE found it equal), which the plan
  -- would not write either; planned as any merge's keys ($2 the base, $3 theirs)
  perform gnomon.merge_plan_table(tt, source_id, 0, base, theirs, ours, null, all_ours, format(
    'select %1$s from gnomon_t.%2$I b left join %3$s x on %4$s'
    ' where b.g_branch = ($3).chain[1]'
    ' and not coalesce(pg_visible_in_snapshot(b.g_xid, ($3).snaps[1]) and pg_visible_in_snapshot(b.g_cxid, ($3).snaps[1])'
    ' and case when b.g_del then x.%5$I is null'
    ' else x.%5$I is not null and (%6$s or row(%7$s) is not distinct from row(%8$s)) end, false)',
    keys_b, bt, tab, keymatch, k1, gnomon.merge_xmin_visible_sql('x.xmin', c_sql, '($2).main_snap'),
    coalesce(x_cols, 'null'), coalesce(b_cols, 'null')));
end $$;
comment on function gnomon.merge_direct_table(gnomon.tracked_table, integer, gnomon.point, gnomon.point, gnomon.point, boolean) is
  'Internal: merges a branch''s rows into main directly where main''s row is unchanged since the base, and plans the keys left over.';

-- Plans a merge, per table into a typed temporary table pg_temp.gnomon_merge_plan_<table_id> (gnomon.merge_plan_table
-- writes it). The temporary view pg_temp.gnomon_merge_plan shows every table's plan in one shape, with keys and rows
-- as jsonb (table_id, key, action, b, o, t, r, conflicts), for the merge's record, its conflicts and merge_preview.
-- Returns the merge's points. Nothing is locked: the plan reads ours as it is now. all_ours false: on main, ours (o)
-- only where a conflict reports it (gnomon.merge's plans, about a third narrower: a plan of 50,000 rows of
-- pgbench_accounts takes 8.9 MB instead of 14 MB of temp_buffers, whose default is 8 MB).
create or replace function gnomon.merge_prepare(source text, target text, tables text[], all_ours boolean default true,
                                                direct boolean default false,
                                                out source_id integer, out target_id integer,
                                                out base gnomon.point, out theirs gnomon.point,
                                                out direct_updates bigint, out direct_deletes bigint)
-- no JIT: the planner prices the per-key work of a large merge high enough to compile it, which cost seconds
-- (2.4 s of 4.1 s for the base images of 50,000 keys) and saves nothing on index probes
-- and sorts and hashes of a large merge's keys in memory rather than in temporary files
language plpgsql set jit = off set work_mem = '32MB' as $$
declare
  tt gnomon.tracked_table;
  ours gnomon.point;
  tab text; plan text; keys_x text; key_json text; ids integer[]; views text[] := '{}'; old record; d record;
begin
  direct_updates := 0; direct_deletes := 0;
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
  theirs := gnomon.point(source, gnomon.coordinate_text(pg_current_snapshot()::text));
  ours := gnomon.point(target);
  if cardinality(tables) = 0 then
    raise exception using errcode = 'GN021', message = format('merge of %s into %s names no table', source, target),
      hint = 'Pass the tables to merge, or null (the default) for every tracked table.';
  end if;
  if tables is not null then
    select array_agg((gnomon.tracked(x)).table_id) into ids from unnest(tables) x;
  end if;

  -- the plans of an earlier merge in this transaction (and the view over them)
  for old in select c.relname, c.relkind from pg_class c
              where c.relnamespace = pg_my_temp_schema() and (c.relname = 'gnomon_merge_plan' or c.relname like 'gnomon\_merge\_plan\_%')
              order by c.relkind = 'v' desc loop
    if old.relkind = 'v' then
      execute format('drop view if exists pg_temp.%I', old.relname);
    else
      execute format('drop table if exists pg_temp.%I', old.relname);
    end if;
  end loop;
  for tt in select * from gnomon.tracked_table x where ids is null or x.table_id = any (ids) order by x.table_id loop
    tab := format('%I.%I', tt.schema_name, tt.table_name);
    plan := 'gnomon_merge_plan_' || tt.table_id;
    -- a point older than the table's tracking cannot be read (as gnomon_t.<t>_at raises): a table tracked after the
    -- branch was forked has nothing the branch wrote and nothing it can hold, so a merge of every table leaves it
    -- out and says so; a merge that names the table is refused
    if ids is null and ((base.main_snap is not null and not pg_visible_in_snapshot(tt.track_xid, base.main_snap))
                        or (theirs.main_snap is not null and not pg_visible_in_snapshot(tt.track_xid, theirs.main_snap))
                        or (ours.main_snap is not null and not pg_visible_in_snapshot(tt.track_xid, ours.main_snap))) then
      raise notice 'merge of % into % leaves out %.%: it was tracked after the branch was forked, so the branch has no rows of it',
        source, target, tt.schema_name, tt.table_name;
      continue;
    end if;
    if (base.main_snap is not null and not pg_visible_in_snapshot(tt.track_xid, base.main_snap)) then
      perform gnomon.point_too_old(tt.table_id, base);
    elsif theirs.main_snap is not null and not pg_visible_in_snapshot(tt.track_xid, theirs.main_snap) then
      perform gnomon.point_too_old(tt.table_id, theirs);
    elsif ours.main_snap is not null and not pg_visible_in_snapshot(tt.track_xid, ours.main_snap) then
      perform gnomon.point_too_old(tt.table_id, ours);
    end if;
    select string_agg(format('x.%I', k), ', ' order by o), string_agg(format('%L, p.%I', k, k), ', ' order by o)
      into keys_x, key_json
      from unnest(tt.key_columns) with ordinality u(k, o);
    -- the typed plan: the key columns as the table has them, then the action and rows of the table's own type, and
    -- on main the xmin of the target's row as the plan read it
    execute format('create temp table %I on commit drop as select %s, null::text as g_action, null::%3$s as g_b,'
                   ' null::%3$s as g_o, null::%3$s as g_t, null::%3$s as g_r, null::jsonb as g_conflicts, null::xid as g_xmin'
                   ' from %3$s x where false',
                   plan, keys_x, tab);
    views := views || format('select %s as table_id, jsonb_build_object(%s) as key, p.g_action as action, to_jsonb(p.g_b) as b,'
                             ' to_jsonb(p.g_o) as o, to_jsonb(p.g_t) as t, to_jsonb(p.g_r) as r, p.g_conflicts as conflicts'
                             ' from pg_temp.%I p', tt.table_id, key_json, plan);
    -- direct: a branch of main merged into main from main at a snapshot (its first merge) writes the keys whose row on
    -- main is unchanged since the base at once and plans the others (gnomon.merge_direct_table)
    if direct and target_id = 0 and cardinality(base.chain) = 0 and base.main_snap is not null
       and cardinality(theirs.chain) = 1 and theirs.chain[1] = source_id and theirs.snaps[1] is not null
       and theirs.main_snap::text = base.main_snap::text then
      select * into d from gnomon.merge_direct_table(tt, source_id, base, theirs, ours, all_ours);
      direct_updates := direct_updates + d.updated;
      direct_deletes := direct_deletes + d.deleted;
    else
      perform gnomon.merge_plan_table(tt, source_id, target_id, base, theirs, ours, null, all_ours);
    end if;
  end loop;
  execute 'create temp view gnomon_merge_plan as select null::integer as table_id, null::jsonb as key, null::text as action,'
          ' null::jsonb as b, null::jsonb as o, null::jsonb as t, null::jsonb as r, null::jsonb as conflicts where false'
          || case when cardinality(views) > 0 then ' union all ' || array_to_string(views, ' union all ') else '' end;
end $$;
comment on function gnomon.merge_prepare(text, text, text[], boolean, boolean) is 'Internal: plans a merge into typed pg_temp.gnomon_merge_plan_<table_id> tables (shown by the view pg_temp.gnomon_merge_plan) and returns its points.';

-- Writes a planned merge (the typed plans of merge_prepare) into the target through its normal versioning, and
-- returns whether it re-planned rows. On main: plain DELETE, UPDATE and INSERT on the tables (their statement-level
-- triggers write history), each joined to the plan by its key columns, that write only rows still as the plan read
-- them (the same row version: its xmin) and insert only keys still absent. A row a concurrent transaction changed
-- since the plan read it (or changes during the write: PostgreSQL re-checks it after the writer commits) is not
-- written but re-planned, its row locked (gnomon.merge_plan_table), and written as re-planned; the call runs inside a
-- subtransaction of gnomon.merge, which a re-planned conflict (GN035, whose DETAIL lists the re-planned keys per
-- table) rolls back, so nothing is written. On a branch: set-based writes of the branch rows and their history, with
-- what the branch view's INSTEAD OF trigger guarantees (copy on write, a history row per write, g_xid/g_cxid,
-- tombstones, and each branch row locked and compared with what the plan read: a row that changed is never
-- overwritten, 40001).
create or replace function gnomon.merge_apply(source_id integer, target_id integer, base gnomon.point, theirs gnomon.point,
                                              out replanned boolean)
language plpgsql set jit = off set work_mem = '32MB' as $$
declare
  tt gnomon.tracked_table;
  tgt text; tab text; plan text; cols text; set_list text; keymatch text; keymatch_b text; keymatch_u text; expected bigint; done bigint;
  bt name; bh name; b_row text; b_cols text; r_cols text; keys text; set_b text; existing bigint; bad bigint;
  n_ins bigint; n_upd bigint; n_del bigint; small boolean; todo tid[]; skipped tid[]; done_tids tid[]; rp record;
  only_todo text;  -- the plan rows a round writes: all of them, or (a re-plan) those in todo, passed as $1
  key_json text; again jsonb := '{}'; rd_keys jsonb; attempt integer;
  hashjoin text := current_setting('enable_hashjoin'); mergejoin text := current_setting('enable_mergejoin');
  nestloop text := current_setting('enable_nestloop');
  x xid8 := pg_current_xact_id();
begin
  replanned := false;
  if target_id <> 0 then
    -- as a branch writer: the branch cannot be dropped half-way through (gnomon.branch_drop takes it exclusively)
    perform pg_advisory_xact_lock_shared(7387, target_id);
    if not exists (select 1 from gnomon.branch g where g.branch_id = target_id) then
      raise exception using errcode = 'GN050', message = format('branch %s was dropped during the merge', target_id),
        hint = 'Merge into an existing branch.';
    end if;
  end if;
  for tt in select t.* from gnomon.tracked_table t
             where to_regclass(format('pg_temp.%I', 'gnomon_merge_plan_' || t.table_id)) is not null
             order by t.table_id loop
    tab := format('%I.%I', tt.schema_name, tt.table_name);
    plan := 'gnomon_merge_plan_' || tt.table_id;
    execute format('select count(*) filter (where p.g_action = ''insert''), count(*) filter (where p.g_action = ''update''),'
                   ' count(*) filter (where p.g_action = ''delete'') from pg_temp.%I p', plan) into n_ins, n_upd, n_del;
    continue when n_ins + n_upd + n_del = 0;
    -- the plan has no statistics (ANALYZE of a 50,000-row plan cost about 100 ms of CPU): the plan's size decides the
    -- join. A small plan (under a twentieth of the table's rows) writes by an index probe per key: with the table
    -- cached a probe costs far less than the planner's random_page_cost says, and a hash join scans the whole table
    -- (the UPDATE of 2,000 keys of a 200,000-row table: 75-80 ms of CPU hashed, 43-47 ms probed; docs/performance.md);
    -- a large one hashes the plan against one scan of the table. The caller's settings are set back after this
    -- table's writes
    small := (n_ins + n_upd + n_del) * 20 < (select c.reltuples from pg_class c where c.oid = tt.relid);
    if small then
      perform set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true);
    else
      perform set_config('enable_nestloop', 'off', true), set_config('enable_mergejoin', 'off', true);
    end if;
    select string_agg(format('x.%1$I = p.%1$I', k), ' and '), string_agg(format('b.%1$I = p.%1$I', k), ' and '),
           string_agg(format('u.%1$I = p.%1$I', k), ' and '), string_agg(format('%I', k), ', '),
           string_agg(format('%L, p.%I', k, k), ', ')
      into keymatch, keymatch_b, keymatch_u, keys, key_json from unnest(tt.key_columns) k;
    if target_id = 0 then
      tgt := tab;
      -- generated (computed) columns are left to PostgreSQL
      select string_agg(format('%I', a.attname), ', ' order by a.attnum),
             string_agg(format('%1$I = (p.g_r).%1$I', a.attname), ', ' order by a.attnum) filter (where not a.attname = any (tt.key_columns)),
             string_agg(format('(p.g_r).%I', a.attname), ', ' order by a.attnum)
        into cols, set_list, r_cols
        from pg_attribute a where a.attrelid = tt.relid and a.attnum > 0 and not a.attisdropped and a.attgenerated = '';
      -- todo: null for every row of the plan, else the plan rows of a re-plan
      todo := null;
      for attempt in 1 .. 5 loop
        skipped := '{}';
        only_todo := case when todo is null then '' else ' and p.ctid = any ($1)' end;
        if n_del > 0 then
          execute format('with u as (delete from %1$s x using pg_temp.%2$I p where p.g_action = ''delete'' and %3$s'
                         ' and x.xmin = p.g_xmin%4$s returning p.ctid) select count(*), coalesce(array_agg(ctid), ''{}'') from u',
                         tgt, plan, keymatch, only_todo)
            into done, done_tids using todo;
          if done <> n_del then
            execute format('select array_agg(ctid) from (select p.ctid from pg_temp.%I p where p.g_action = ''delete''%s'
                           ' except select unnest($2)) s', plan, only_todo)
              into done_tids using todo, done_tids;
            skipped := skipped || done_tids;
          end if;
        end if;
        if n_upd > 0 and set_list is not null then
          execute format('with u as (update %1$s x set %2$s from pg_temp.%3$I p where p.g_action = ''update'' and %4$s'
                         ' and x.xmin = p.g_xmin%5$s returning p.ctid) select count(*), coalesce(array_agg(ctid), ''{}'') from u',
                         tgt, set_list, plan, keymatch, only_todo)
            into done, done_tids using todo;
          if done <> n_upd then
            execute format('select array_agg(ctid) from (select p.ctid from pg_temp.%I p where p.g_action = ''update''%s'
                           ' except select unnest($2)) s', plan, only_todo)
              into done_tids using todo, done_tids;
            skipped := skipped || done_tids;
          end if;
        end if;
        if n_ins > 0 then
          -- a key inserted concurrently meanwhile is not overwritten: it is re-planned
          execute format('with u as (insert into %1$s (%2$s) %3$s select %4$s from pg_temp.%5$I p where p.g_action = ''insert''%6$s'
                         ' on conflict (%7$s) do nothing returning %7$s)'
                         ' select coalesce(array_agg(p.ctid), ''{}'') from pg_temp.%5$I p where p.g_action = ''insert''%6$s'
                         ' and not exists (select 1 from u where %8$s)',
                         tgt, cols,
                         case when exists (select 1 from pg_attribute a where a.attrelid = tt.relid and a.attidentity = 'a')
                              then 'overriding system value' else '' end,
                         r_cols, plan, only_todo, keys, keymatch_u)
            into done_tids using todo;
          skipped := skipped || done_tids;
        end if;
        exit when cardinality(skipped) = 0;
        -- rows that changed since the plan read them: re-planned with their rows locked, then written as re-planned
        if attempt = 5 then
          raise exception using errcode = '40001',
            message = format('could not serialize the merge: %s rows of %s kept changing concurrently', cardinality(skipped), tgt),
            hint = 'Merge again: nothing of this merge was written.';
        end if;
        execute format('select jsonb_agg(jsonb_build_object(%s)) from pg_temp.%I p where p.ctid = any ($1)', key_json, plan)
          into rd_keys using skipped;
        again := jsonb_set(again, array[tt.table_id::text], coalesce(again->(tt.table_id::text), '[]') || rd_keys);
        rp := gnomon.merge_plan_table(tt, source_id, 0, base, theirs, gnomon.point('main'), skipped);
        replanned := true;
        if rp.conflicts > 0 then
          raise exception using errcode = 'GN035',
            message = format('the merge into %s met a conflict in rows that changed during the merge', tgt),
            detail = again::text,
            hint = 'gnomon.merge records the conflicts; nothing of this merge was written.';
        end if;
        todo := rp.planned;
        execute format('select count(*) filter (where p.g_action = ''insert''), count(*) filter (where p.g_action = ''update''),'
                       ' count(*) filter (where p.g_action = ''delete'') from pg_temp.%I p where p.ctid = any ($1)', plan)
          into n_ins, n_upd, n_del using todo;
      end loop;
    else
      tgt := format('%I.%I on branch %s', tt.schema_name, tt.table_name, gnomon.branch_label(target_id));
      bt := gnomon.object_name(tt.base_name, '_b');
      bh := gnomon.object_name(tt.base_name, '_bh');
      select format('row(%s)::%s', string_agg(format('b.%I', c->>'name'), ', ' order by (c->>'attnum')::int), tab),
             string_agg(format('%I', c->>'name'), ', ' order by (c->>'attnum')::int),
             string_agg(format('b.%I', c->>'name'), ', ' order by (c->>'attnum')::int),
             string_agg(case when (c->>'name') = any (tt.key_columns) then format('p.%I', c->>'name')
                             else format('case when p.g_action = ''delete'' then null else (p.g_r).%I end', c->>'name') end, ', ' order by (c->>'attnum')::int),
             string_agg(format('%1$I = case when p.g_action = ''delete'' then null else (p.g_r).%1$I end', c->>'name'), ', ' order by (c->>'attnum')::int)
               filter (where not (c->>'name') = any (tt.key_columns))
        into b_row, cols, b_cols, r_cols, set_b
        from jsonb_array_elements(tt.columns) c;
      expected := n_ins + n_upd + n_del;
      -- 1. lock the branch's own rows of these keys and compare each with ours as the plan read it (a tombstone
      --    is no row): a row a concurrent transaction changed since is never overwritten blindly
      execute format('select count(*), count(*) filter (where s.bad) from ('
                     'select %1$s as bad '
                     'from pg_temp.%2$I p join gnomon_t.%3$I b on b.g_branch = $1 and %4$s '
                     'where p.g_action in (''insert'', ''update'', ''delete'') for update of b) s',
                     format('((case when b.g_del then null else %s end) is distinct from p.g_o)', b_row),
                     plan, bt, keymatch_b) into existing, bad using target_id;
      if bad > 0 then
        raise exception using errcode = '40001',
          message = format('could not serialize the merge: %s of %s rows to write to %s changed concurrently', bad, expected, tgt),
          hint = 'Merge again: nothing of this merge was written.';
      end if;
      if existing > 0 then
        -- 2. the history of those rows: the image from before this write (a tombstone's, for a key inserted again)
        execute format('insert into gnomon_t.%1$I (g_branch, g_vid, g_xid, g_op, g_del, %2$s) '
                       'select b.g_branch, nextval(''gnomon.version_seq''), $2, ''U'', b.g_del, %3$s '
                       'from pg_temp.%4$I p join gnomon_t.%5$I b on b.g_branch = $1 and %6$s '
                       'where p.g_action in (''insert'', ''update'', ''delete'')',
                       bh, cols, b_cols, plan, bt, keymatch_b) using target_id, x;
        -- 3. the rows themselves, in place (a delete leaves a tombstone)
        execute format('update gnomon_t.%1$I b set g_del = (p.g_action = ''delete''), g_xid = $2%2$s '
                       'from pg_temp.%3$I p '
                       'where p.g_action in (''insert'', ''update'', ''delete'') and b.g_branch = $1 and %4$s',
                       bt, coalesce(', ' || set_b, ''), plan, keymatch_b) using target_id, x;
        get diagnostics done = row_count;
        if done <> existing then
          raise exception using errcode = '40001',
            message = format('could not serialize the merge: %s of %s rows to write to %s changed concurrently', existing - done, expected, tgt),
            hint = 'Merge again: nothing of this merge was written.';
        end if;
      end if;
      if expected > existing then
        -- 4. keys the branch has not written yet: copy on write (a delete writes a tombstone), each with an 'I'
        --    history row; a key a concurrent transaction wrote on the branch meanwhile is not overwritten: 40001
        execute format('with ins as (insert into gnomon_t.%1$I (g_branch, g_del, g_xid, g_cxid, %2$s) '
                       'select $1, p.g_action = ''delete'', $2, $2, %3$s '
                       'from pg_temp.%4$I p '
                       'where p.g_action in (''insert'', ''update'', ''delete'') '
                       'and not exists (select 1 from gnomon_t.%1$I b where b.g_branch = $1 and %5$s) '
                       'on conflict do nothing returning %6$s) '
                       'insert into gnomon_t.%7$I (g_branch, g_vid, g_xid, g_op, %6$s) '
                       'select $1, nextval(''gnomon.version_seq''), $2, ''I'', %6$s from ins',
                       bt, cols, r_cols, plan, keymatch_b, keys, bh) using target_id, x;
        get diagnostics done = row_count;
        if done <> expected - existing then
          raise exception using errcode = '40001',
            message = format('could not serialize the merge: %s of %s rows to write to %s were written concurrently', expected - existing - done, expected, tgt),
            hint = 'Merge again: nothing of this merge was written.';
        end if;
      end if;
    end if;
    perform set_config('enable_hashjoin', hashjoin, true), set_config('enable_mergejoin', mergejoin, true),
            set_config('enable_nestloop', nestloop, true);
  end loop;
end $$;
comment on function gnomon.merge_apply(integer, integer, gnomon.point, gnomon.point) is
  'Internal: writes a planned merge into the target (main''s tables, re-planning rows that changed meanwhile, or a branch''s rows and their history).';

-- A merge is recorded for the pair, and the next one starts from it for every table: a merge of some tables must not
-- leave source changes of the others behind, or they would count as merged and never come (GN060; a dry run records
-- nothing the next merge starts from, and may name any tables).
create or replace function gnomon.merge_check_tables(source text, target text, tables text[], base gnomon.point, theirs gnomon.point)
returns void language plpgsql stable as $$
declare
  detail text;
begin
  select string_agg(format('%I.%I', t.schema_name, t.table_name), ', ' order by t.table_id) into detail
    from gnomon.tracked_table t
   where not t.table_id = any (select (gnomon.tracked(x)).table_id from unnest(tables) x)
     and (base.main_snap is null or pg_visible_in_snapshot(t.track_xid, base.main_snap))
     and (theirs.main_snap is null or pg_visible_in_snapshot(t.track_xid, theirs.main_snap))
     and gnomon.point_has_changes(t, base, theirs);
  if detail is not null then
    raise exception using errcode = 'GN060',
      message = format('merging only %s of %s into %s would leave %s''s changes to %s behind: the next merge of the pair starts after this one',
                       array_to_string(tables, ', '), source, target, source, detail),
      hint = 'Merge every table (tables => null), or name those too; a dry run (dry_run => true) may name any tables.';
  end if;
end $$;
comment on function gnomon.merge_check_tables(text, text, text[], gnomon.point, gnomon.point) is
  'Internal: GN060 when a merge of some tables would leave changes of the source''s other tables behind.';

-- Merges source into target ('main' or branch names), atomically, in the caller's transaction. With conflicts it
-- changes nothing in the target and records them (status 'conflicts'); declare resolutions (gnomon.merge_resolve)
-- and merge again. dry_run: plans and records, writes nothing. tables: only these tracked tables (null: all).
-- The plan reads ours without locks; the writes (gnomon.merge_apply, in a subtransaction) re-plan the rows that
-- changed meanwhile, and when such a row now conflicts, the writes are rolled back, those rows re-planned again
-- (locked) and the merge recorded with its conflicts.
-- A branch merged into main for the first time is first tried directly (merge_prepare(direct => true), in a
-- subtransaction): the keys whose row on main is unchanged since the base are written at once without a plan, the
-- others planned and written as above; when any of those conflicts, that attempt is rolled back and the merge
-- planned whole as before, so a merge with conflicts still writes nothing and records every conflict.
-- The rows the session's merge plan (pg_temp.gnomon_merge_plan) adds, modifies and deletes: what gnomon.merge records
-- after merge_apply re-planned rows that changed during its writes.
create or replace function gnomon.merge_plan_counts(out adds bigint, out modifications bigint, out deletes bigint)
language plpgsql stable as $$
begin
  select count(*) filter (where p.action = 'insert'), count(*) filter (where p.action = 'update'),
         count(*) filter (where p.action = 'delete')
    into adds, modifications, deletes
    from pg_temp.gnomon_merge_plan p;
end $$;
comment on function gnomon.merge_plan_counts() is
  'Internal: the inserts, updates and deletes of the session''s merge plan (pg_temp.gnomon_merge_plan).';

create or replace function gnomon.merge(source text, target text, dry_run boolean default false, tables text[] default null)
returns gnomon.merge language plpgsql as $$
declare
  prep record;
  m gnomon.merge;
  n_ins bigint; n_upd bigint; n_del bigint; n_conf bigint;
  replanned boolean;
  planned boolean := false;
  detail text; r record; tt gnomon.tracked_table; tids tid[];
begin
  if dry_run is null then
    raise exception using errcode = 'GN021', message = format('merge of %s into %s: dry_run is null', source, target),
      hint = 'Pass true to plan only (nothing is written) or false to merge.';
  end if;
  -- (the setting gnomon.merge_direct = 'off' plans every key: for the differential test and side-by-side measurements)
  -- (only a branch of main with no merge of the pair yet can take the direct path: merge_prepare checks the points;
  -- the others skip the attempt and its subtransaction)
  if not dry_run and target = 'main' and source is distinct from 'main'
     and gnomon.setting('gnomon.merge_direct')::boolean
     and exists (select 1 from gnomon.branch b
                  where b.branch_name = source and b.parent_id is null
                    and not exists (select 1 from gnomon.merge x
                                     where least(x.source_id, x.target_id) = 0 and greatest(x.source_id, x.target_id) = b.branch_id
                                       and x.status in ('applied', 'nothing'))) then
    begin
      select * into prep from gnomon.merge_prepare(source, target, tables, false, true);
      if prep.direct_updates + prep.direct_deletes = 0 then
        -- nothing written directly: the plans are the ordinary ones, merged below
        planned := true;
      else
        if tables is not null then
          perform gnomon.merge_check_tables(source, target, tables, prep.base, prep.theirs);
        end if;
        select count(*) filter (where p.action = 'insert'), count(*) filter (where p.action = 'update'),
               count(*) filter (where p.action = 'delete'),
               count(*) filter (where p.action in ('conflict', 'delete_vs_update', 'update_vs_delete'))
          into n_ins, n_upd, n_del, n_conf
          from pg_temp.gnomon_merge_plan p;
        if n_conf > 0 then
          -- (caught below: the direct writes are undone and the merge planned whole, which records the conflicts)
          raise exception using errcode = 'GN035', message = 'a key left to plan after the direct writes conflicts';
        end if;
        if n_ins + n_upd + n_del > 0 then
          replanned := gnomon.merge_apply(prep.source_id, prep.target_id, prep.base, prep.theirs);
          if replanned then
            select * into n_ins, n_upd, n_del from gnomon.merge_plan_counts();
          end if;
        end if;
        insert into gnomon.merge (source_name, target_name, source_id, target_id, base, theirs, status, adds, modifications, deletes,
                                  conflicts, merge_xid)
        values (source, target, prep.source_id, prep.target_id, prep.base, prep.theirs, 'applied',
                n_ins, n_upd + prep.direct_updates, n_del + prep.direct_deletes, 0, pg_current_xact_id())
        returning * into m;
        return m;
      end if;
    exception when sqlstate 'GN035' then
      -- a conflict among the keys planned after the direct writes (at once, or re-planned): undone; planned whole below
      planned := false;
    end;
  end if;
  if not planned then
    -- (ours is kept in the plan only where a conflict reports it: the writes on main join the row version the plan
    -- read by key and xmin, and a branch's plan keeps it anyway)
    select * into prep from gnomon.merge_prepare(source, target, tables, false);
  end if;
  if tables is not null and not dry_run then
    perform gnomon.merge_check_tables(source, target, tables, prep.base, prep.theirs);
  end if;
  for attempt in 1 .. 3 loop
    -- the plan's counts, in one pass
    select count(*) filter (where p.action = 'insert'), count(*) filter (where p.action = 'update'),
           count(*) filter (where p.action = 'delete'),
           coalesce(sum(case when p.action = 'conflict' then (select count(*) from jsonb_object_keys(p.conflicts))
                             when p.action in ('delete_vs_update', 'update_vs_delete') then 1 else 0 end), 0)
      into n_ins, n_upd, n_del, n_conf
      from pg_temp.gnomon_merge_plan p;
    if coalesce(dry_run, false) or n_conf > 0 or n_ins + n_upd + n_del = 0 then
      insert into gnomon.merge (source_name, target_name, source_id, target_id, base, theirs, status, adds, modifications, deletes,
                                conflicts, merge_xid)
      values (source, target, prep.source_id, prep.target_id, prep.base, prep.theirs,
              case when coalesce(dry_run, false) then 'dry_run' when n_conf > 0 then 'conflicts' else 'nothing' end,
              n_ins, n_upd, n_del, n_conf, pg_current_xact_id())
      returning * into m;
      if n_conf > 0 then
        insert into gnomon.merge_conflict (merge_id, table_id, key, column_name, kind, base, ours, theirs, strategy, reason)
        select m.merge_id, p.table_id, p.key, c.key, 'column', p.b->c.key, p.o->c.key, p.t->c.key, c.value->>'strategy', c.value->>'reason'
          from pg_temp.gnomon_merge_plan p cross join lateral jsonb_each(p.conflicts) c where p.action = 'conflict'
        union all
        select m.merge_id, p.table_id, p.key, '', p.action, p.b, p.o, p.t, null,
               case p.action when 'delete_vs_update' then 'the source deleted the row and the target updated it'
                             else 'the source updated the row and the target deleted it' end
          from pg_temp.gnomon_merge_plan p where p.action in ('delete_vs_update', 'update_vs_delete');
      end if;
      return m;
    end if;
    begin
      replanned := gnomon.merge_apply(prep.source_id, prep.target_id, prep.base, prep.theirs);
      if replanned then
        select * into n_ins, n_upd, n_del from gnomon.merge_plan_counts();
      end if;
      insert into gnomon.merge (source_name, target_name, source_id, target_id, base, theirs, status, adds, modifications, deletes,
                                conflicts, merge_xid)
      values (source, target, prep.source_id, prep.target_id, prep.base, prep.theirs,
              case when n_ins + n_upd + n_del = 0 then 'nothing' else 'applied' end, n_ins, n_upd, n_del, 0, pg_current_xact_id())
      returning * into m;
      return m;
    exception when sqlstate 'GN035' then
      -- rows that changed during the writes conflict now: the writes are undone; re-plan those rows (locked) and
      -- record the merge with its conflicts
      get stacked diagnostics detail = pg_exception_detail;
      for r in select e.key::integer as table_id, e.value as keys from jsonb_each(detail::jsonb) e loop
        select * into tt from gnomon.tracked_table x where x.table_id = r.table_id;
        execute format('select coalesce(array_agg(p.ctid), ''{}'') from pg_temp.%I p where jsonb_build_object(%s) in (select jsonb_array_elements($1))',
                       'gnomon_merge_plan_' || tt.table_id,
                       (select string_agg(format('%L, p.%I', k, k), ', ') from unnest(tt.key_columns) k))
          into tids using r.keys;
        perform gnomon.merge_plan_table(tt, prep.source_id, prep.target_id, prep.base, prep.theirs, gnomon.point(target), tids);
      end loop;
    end;
  end loop;
  raise exception using errcode = '40001', message = format('could not serialize the merge of %s into %s: its rows kept changing concurrently', source, target),
    hint = 'Merge again: nothing of this merge was written.';
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
  -- a value must be one of the column's type, as the merge will write it (into the row, by jsonb_populate_record):
  -- checked now, or the next merge of the pair fails until the resolution is declared again
  if choice = 'value' then
    begin
      execute format('select (jsonb_populate_record(null::%I.%I, $1)).%I', tt.schema_name, tt.table_name, c.column_name)
        using jsonb_build_object(c.column_name, value);
    exception when others then
      raise exception using errcode = 'GN021',
        message = format('value %s does not fit column %I of %I.%I: %s', value, c.column_name, tt.schema_name, tt.table_name, sqlerrm),
        hint = 'Pass a JSON value the column''s type accepts (a number for a numeric column, a string for text, ...).';
    end;
  end if;
  insert into gnomon.merge_resolution (source_id, target_id, table_id, key, column_name, base, ours, theirs, choice, value)
  values (m.source_id, m.target_id, tt.table_id, c.key, c.column_name, c.base, c.ours, c.theirs, choice, value)
  on conflict on constraint merge_resolution_pkey do update
    set base = excluded.base, ours = excluded.ours, theirs = excluded.theirs, choice = excluded.choice, value = excluded.value,
        declared_at = clock_timestamp();
end $$;
comment on function gnomon.merge_resolve(bigint, text, jsonb, text, text, jsonb) is
  'Declares the resolution of one conflict of a merge run (ours, theirs, base, or a value); the next merge of the pair applies it.';
