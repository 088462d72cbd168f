-- The merge planner as it was before the typed merge (R__10_merges.sql at 0c5d521): every row carried as jsonb.
-- MergeTypedDifferentialIT installs it under other names (gnomon.merge_prepare_ref, planning into
-- pg_temp.gnomon_ref_plan) and checks, on seeded random histories, that the typed planner plans exactly the same
-- merges. Test code only: never part of the catalog.

-- SQL of a common table expression that reads a tracked table's rows at a point for a set of keys, set-based: named
-- alias, one row per key of the CTE keys_cte (columns named as the key) with g_img, the row as jsonb, or the jsonb
-- 'null' when the key has no row there. It is the keyed form of gnomon_t.<t>_at(point) (R__08_branches.sql), which
-- it must match: per key, the nearest branch level that held the key at that level's snapshot (the live branch row
-- when the snapshot saw its last write, else the image from before the first write it did not see; a tombstone: no
-- row), else main as of the point's main snapshot (the image from before the first version it does not see, else the
-- live row). point_sql is an expression of type gnomon.point (a query parameter). Each source is joined once to the
-- key set, whose keys are distinct (the planner picks hash joins for many keys, index probes for few): no function
-- call per key.
create or replace function gnomon.merge_read_sql_ref(tt gnomon.tracked_table, point_sql text, keys_cte text, alias text) returns text
language plpgsql stable as $$
declare
  tab text := format('%I.%I', tt.schema_name, tt.table_name);
  b_row text; h_row text; x_row text; b_key text; h_key text; x_key text; l_key text; kk_cols text; b_cols text; x_cols text;
begin
  select format('row(%s)::%s', string_agg(format('b.%I', c->>'name'), ', ' order by (c->>'attnum')::int), tab),
         format('row(%s)::%s', string_agg(format('%s.%I', case when (c->>'name') = any (tt.key_columns) then 'b' else 'h' end, c->>'name'), ', '
                                          order by (c->>'attnum')::int), tab),
         format('row(%s)::%s', string_agg(format('x.%I', c->>'name'), ', ' order by (c->>'attnum')::int), tab)
    into b_row, h_row, x_row from jsonb_array_elements(tt.columns) c;
  select string_agg(format('b.%1$I = k.%1$I', kk), ' and '), string_agg(format('h.%1$I = b.%1$I', kk), ' and '),
         string_agg(format('x.%1$I = k.%1$I', kk), ' and '), string_agg(format('l.%1$I = k.%1$I', kk), ' and '),
         string_agg(format('k.%I', kk), ', '), string_agg(format('b.%I', kk), ', '), string_agg(format('x.%I', kk), ', ')
    into b_key, h_key, x_key, l_key, kk_cols, b_cols, x_cols from unnest(tt.key_columns) kk;
  return format($q$%1$I as materialized (
    select %2$s, coalesce(br.g_img, mh.g_img, l.g_img, 'null'::jsonb) as g_img
      from %3$s k
      -- the nearest branch level that held the key
      left join (select distinct on (%4$s) %4$s, s.g_img
                   from (select %5$s, lv.lvl,
                                -- a snapshot that did not see the row's last write reads the image from before the
                                -- first write it did not see (a history row 'I': no row there yet)
                                case when lv.snap is not null and not pg_visible_in_snapshot(b.g_xid, lv.snap)
                                     then coalesce((select case when h.g_del is false then to_jsonb(%6$s) else 'null'::jsonb end
                                                      from gnomon_t.%10$I h
                                                     where h.g_branch = b.g_branch and %11$s and h.g_xid >= pg_snapshot_xmin(lv.snap)
                                                       and not pg_visible_in_snapshot(h.g_xid, lv.snap)
                                                     order by h.g_vid limit 1), 'null'::jsonb)
                                     when b.g_del then 'null'::jsonb else to_jsonb(%7$s) end as g_img
                           from unnest((%8$s).chain, (%8$s).snaps) with ordinality lv(id, snap, lvl)
                           join gnomon_t.%9$I b on b.g_branch = lv.id
                           join %3$s k on %12$s
                          where lv.snap is null or pg_visible_in_snapshot(b.g_cxid, lv.snap)) s
                  order by %4$s, s.lvl) br on %13$s
      -- else main as of the main snapshot: the image from before the first version it does not see, else the live row
      left join (select distinct on (%14$s) %14$s, case when x.g_op = 'I' then 'null'::jsonb else to_jsonb(%15$s) end as g_img
                   from gnomon_t.%16$I x join %3$s k on %17$s
                  where (%8$s).main_snap is not null and x.g_xid >= pg_snapshot_xmin((%8$s).main_snap)
                    and not pg_visible_in_snapshot(x.g_xid, (%8$s).main_snap)
                  order by %14$s, x.g_vid) mh on %18$s
      -- else the live row (joined like the rest: the planner hashes the table for many keys; a probe per key was
      -- measured slower at 50,000 keys)
      left join lateral (select to_jsonb(l) as g_img from %19$s l where %20$s) l on br.g_img is null and mh.g_img is null)$q$,
    alias, kk_cols, keys_cte,
    (select string_agg(format('s.%I', kk), ', ') from unnest(tt.key_columns) kk), b_cols, h_row, b_row, point_sql,
    gnomon.object_name(tt.base_name, '_b'), gnomon.object_name(tt.base_name, '_bh'), h_key, b_key,
    (select string_agg(format('br.%1$I = k.%1$I', kk), ' and ') from unnest(tt.key_columns) kk),
    x_cols, x_row, tt.history_table, x_key,
    (select string_agg(format('mh.%1$I = k.%1$I', kk), ' and ') from unnest(tt.key_columns) kk),
    tab, l_key);
end $$;
-- Plans a merge into pg_temp.gnomon_ref_plan: one row per key the source changed since the base, with the base,
-- ours, theirs and merged images, the action (insert, update, delete, none, conflict, or a row conflict) and the
-- conflicts per column. One INSERT ... SELECT per table: the candidate keys, base and theirs read set-based (the
-- diff), ours (on main: the target's rows locked FOR UPDATE in the same statement, so ours is read after the locks;
-- never a table lock), the classification, the per-column strategies and the declared resolutions.
-- Returns the merge's points.
create or replace function gnomon.merge_prepare_ref(source text, target text, tables text[],
                                                out source_id integer, out target_id integer,
                                                out base gnomon.point, out theirs gnomon.point)
-- no JIT: the planner prices the per-key probes of a large merge high enough to compile them, which cost seconds
-- (2.4 s of 4.1 s for the base images of 50,000 keys) and saves nothing on index probes
-- and sorts and hashes of a large merge's keys in memory rather than in temporary files
language plpgsql set jit = off set work_mem = '32MB' as $$
declare
  tt gnomon.tracked_table;
  ours gnomon.point;
  tab text; keys_io text; keys_dd text; keys_x text; keys_eq text; key_json text; rule text; has_res boolean;
  col jsonb; s_strategy text; s_options jsonb; s_fn regprocedure; expr text; lateral_sql text; r_parts text[]; c_parts text[];
  ours_cte text; n integer := 0; typmod integer; ids integer[];
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

  if to_regclass('pg_temp.gnomon_ref_plan') is not null then
    drop table pg_temp.gnomon_ref_plan;
  end if;
  create temp table gnomon_ref_plan (table_id integer not null, key jsonb not null, action text not null, b jsonb, o jsonb,
                                       t jsonb, r jsonb, conflicts jsonb) on commit drop;
  for tt in select * from gnomon.tracked_table x where ids is null or x.table_id = any (ids) order by x.table_id loop
    tab := format('%I.%I', tt.schema_name, tt.table_name);
    -- a point older than the table's tracking cannot be read (as gnomon_t.<t>_at raises)
    if (base.main_snap is not null and not pg_visible_in_snapshot(tt.track_xid, base.main_snap)) then
      perform gnomon.point_too_old(tt.table_id, base);
    elsif theirs.main_snap is not null and not pg_visible_in_snapshot(tt.track_xid, theirs.main_snap) then
      perform gnomon.point_too_old(tt.table_id, theirs);
    elsif ours.main_snap is not null and not pg_visible_in_snapshot(tt.track_xid, ours.main_snap) then
      perform gnomon.point_too_old(tt.table_id, ours);
    end if;
    select string_agg(format('io.%I', k), ', ' order by o), string_agg(format('dd.%I', k), ', ' order by o),
           string_agg(format('x.%I', k), ', ' order by o), string_agg(format('o.%1$I = dd.%1$I', k), ' and ' order by o),
           string_agg(format('%L, q.%I', k, k), ', ' order by o)
      into keys_io, keys_dd, keys_x, keys_eq, key_json
      from unnest(tt.key_columns) with ordinality u(k, o);
    select coalesce((select r.delete_vs_update from gnomon.merge_rule r where r.table_id = tt.table_id), 'conflict') into rule;
    has_res := exists (select 1 from gnomon.merge_resolution mr where mr.source_id = merge_prepare_ref.source_id
                         and mr.target_id = merge_prepare_ref.target_id and mr.table_id = tt.table_id);
    -- ours: on main, the target's rows of the candidate keys, locked (row locks only: writers of other rows never
    -- wait; a writer of one of them makes the merge wait and then read its committed row); on a branch, read at
    -- the target's point (merge_apply locks and compares the branch rows before writing them)
    if target_id = 0 then
      ours_cte := format('o as materialized (select %s, to_jsonb(x) as g_mo from %s x join dd on %s for update of x)',
                         keys_x, tab, (select string_agg(format('x.%1$I = dd.%1$I', k), ' and ') from unnest(tt.key_columns) k));
    else
      ours_cte := gnomon.merge_read_sql_ref(tt, '$4', 'dd', 'io')
                  || format(', o as materialized (select %s, nullif(io.g_img, ''null'') as g_mo from io)', keys_io);
    end if;

    -- both sides have the row: column by column with each column's strategy (the other rows merge null records,
    -- which the per-column rule converges without calling a strategy)
    lateral_sql := ''; c_parts := '{}'; n := 0;
    select array_agg(x order by u.o, v.j) into r_parts
      from unnest(tt.key_columns) with ordinality u(k, o)
     cross join lateral unnest(array[format('%L', u.k), format('q.g_mo->%L', u.k)]) with ordinality v(x, j);
    for col in select c from jsonb_array_elements(tt.columns) c where not (c->>'name') = any (tt.key_columns)
                order by (c->>'attnum')::int loop
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
      r_parts := r_parts || format('%L', col->>'name') || format('to_jsonb(m%s.value)', n);
      c_parts := c_parts || format('m%1$s.conflict is not null', n)
                         || format('%L, case when m%2$s.conflict is not null then jsonb_build_object(''reason'', m%2$s.conflict, ''strategy'', %3$L) end',
                                   col->>'name', n, s_strategy);
    end loop;

    execute format($m$
      insert into pg_temp.gnomon_ref_plan (table_id, key, action, b, o, t, r, conflicts)
      with kk as materialized (
        -- the keys the source changed since the base
        select * from gnomon_t.%1$I($2, $3)
      ), %2$s, %3$s, dd as materialized (
        -- with their base and theirs images (the diff base -> theirs)
        select kk.*, nullif(ib.g_img, 'null') as g_mb, nullif(it.g_img, 'null') as g_mt
          from kk join ib on %15$s join it on %16$s
         where ib.g_img is distinct from it.g_img
      ), %4$s, c as (
        select dd.*, o.g_mo,
               case when dd.g_mb is null and o.g_mo is null then 'insert'
                    when dd.g_mb is null and o.g_mo = dd.g_mt then 'none'
                    when dd.g_mb is null then 'merge'
                    when dd.g_mt is null and o.g_mo is null then 'none'
                    when dd.g_mt is null and o.g_mo = dd.g_mb then 'delete'
                    when dd.g_mt is null then %5$L
                    when o.g_mo is null then %6$L
                    when o.g_mo = dd.g_mt then 'none'
                    else 'merge' end as g_mcls
          from dd left join o on %7$s
      ), m as (
        select jsonb_build_object(%8$s) as key, q.g_mb, q.g_mo, q.g_mt, q.g_mcls,
               %9$s as g_mr, %10$s as g_mc
          from (select c.*, jsonb_populate_record(null::%11$s, case when c.g_mcls = 'merge' then c.g_mb end) as rb,
                       jsonb_populate_record(null::%11$s, case when c.g_mcls = 'merge' then c.g_mo end) as ro,
                       jsonb_populate_record(null::%11$s, case when c.g_mcls = 'merge' then c.g_mt end) as rt
                  from c offset 0) q %12$s
      ), z as (
        select m.*, %13$s
          from m %14$s
      )
      select $1, z.key,
             case when z.g_mcls in ('delete_vs_update', 'update_vs_delete') and z.row_choice = 'theirs'
                    then case z.g_mcls when 'delete_vs_update' then 'delete' else 'insert' end
                  when z.g_mcls in ('delete_vs_update', 'update_vs_delete') and z.row_choice is not null then 'none'
                  when z.g_mcls <> 'merge' then z.g_mcls
                  when z.g_mc - z.resolved_cols <> '{}'::jsonb then 'conflict'
                  when z.g_mr || z.patch = z.g_mo then 'none'
                  else 'update' end,
             -- base and theirs are kept where a conflict reports them
             case when z.g_mc is not null or z.g_mcls in ('delete_vs_update', 'update_vs_delete') then z.g_mb end, z.g_mo,
             case when z.g_mc is not null or z.g_mcls in ('delete_vs_update', 'update_vs_delete') then z.g_mt end,
             case when z.g_mcls = 'insert' or (z.g_mcls = 'update_vs_delete' and z.row_choice = 'theirs') then z.g_mt
                  when z.g_mcls = 'merge' then z.g_mr || z.patch end,
             nullif(z.g_mc - z.resolved_cols, '{}'::jsonb)
        from z$m$,
      gnomon.object_name(tt.base_name, '_dkeys'), gnomon.merge_read_sql_ref(tt, '$2', 'kk', 'ib'), gnomon.merge_read_sql_ref(tt, '$3', 'kk', 'it'),
      ours_cte,
      case rule when 'delete_wins' then 'delete' when 'update_wins' then 'none' else 'delete_vs_update' end,
      case rule when 'delete_wins' then 'none' when 'update_wins' then 'insert' else 'update_vs_delete' end,
      keys_eq, key_json, gnomon.merge_build_object(r_parts),
      case when n = 0 then 'null::jsonb'
           else format('case when %s then jsonb_strip_nulls(%s) end',
                       (select string_agg(c_parts[i], ' or ') from generate_subscripts(c_parts, 1) i where i % 2 = 1),
                       gnomon.merge_build_object((select array_agg(c_parts[i] order by i) from generate_subscripts(c_parts, 1) i where i % 2 = 0))) end,
      tab, lateral_sql,
      -- declared resolutions of the pair, for exactly these conflicts (looked up only when the pair has some)
      case when has_res then 'coalesce(x.patch, ''{}''::jsonb) as patch, coalesce(x.cols, ''{}''::text[]) as resolved_cols, y.choice as row_choice'
           else '''{}''::jsonb as patch, ''{}''::text[] as resolved_cols, null::text as row_choice' end,
      case when has_res then format($r$
          left join lateral (select jsonb_object_agg(mr.column_name, case mr.choice when 'ours' then m.g_mo->mr.column_name
                                                                     when 'theirs' then m.g_mt->mr.column_name
                                                                     when 'base' then m.g_mb->mr.column_name else mr.value end) as patch,
                                    array_agg(mr.column_name::text) as cols
                               from gnomon.merge_resolution mr
                              where m.g_mc is not null and mr.source_id = %1$s and mr.target_id = %2$s and mr.table_id = %3$s
                                and mr.key = m.key and m.g_mc ? mr.column_name
                                and mr.base is not distinct from m.g_mb->mr.column_name
                                and mr.ours is not distinct from m.g_mo->mr.column_name
                                and mr.theirs is not distinct from m.g_mt->mr.column_name) x on true
          left join lateral (select mr.choice from gnomon.merge_resolution mr
                              where m.g_mcls in ('delete_vs_update', 'update_vs_delete')
                                and mr.source_id = %1$s and mr.target_id = %2$s and mr.table_id = %3$s
                                and mr.key = m.key and mr.column_name = ''
                                and mr.base is not distinct from m.g_mb and mr.ours is not distinct from m.g_mo
                                and mr.theirs is not distinct from m.g_mt) y on true$r$, source_id, target_id, tt.table_id)
           else '' end,
      (select string_agg(format('ib.%1$I = kk.%1$I', k), ' and ') from unnest(tt.key_columns) k),
      (select string_agg(format('it.%1$I = kk.%1$I', k), ' and ') from unnest(tt.key_columns) k))
      using tt.table_id, base, theirs, ours;
  end loop;
end $$;
