-- The merge strategies in SQL: one function per strategy, each applying the per-column rule first, for use set-based
-- inside a merge statement (SELECT ... CROSS JOIN LATERAL gnomon.merge_counter(b.n, o.n, t.n) m). They agree exactly
-- with the Java reference functions of io.gnomon.merge (a seeded differential test checks it; docs/merge.md gives the
-- rules).
--
-- Every function returns two columns: value and conflict. conflict is NULL when the column merged, and then value is
-- the merged value (which may itself be NULL); otherwise conflict says why, in one sentence, and value is ours, the
-- target's value unchanged, so a statement that writes value changes nothing where it conflicts.

-- Their SQLSTATE GN040 (MERGE_LIMIT_EXCEEDED) is registered in R__01_errors.sql with the others.
--
-- The public functions are set-returning SQL functions of one row, which PostgreSQL inlines into the calling
-- statement: the per-column rule becomes plain expressions of the statement, and the strategy's worker (an internal
-- PL/pgSQL function gnomon.merge_*_resolve, or gnomon.merge_extreme) runs only for rows whose column both
-- sides changed, behind a one-time filter. Arguments are substituted where the body names them, so pass columns or
-- cheap expressions (materialise expensive ones first, e.g. in a subquery with OFFSET 0).

-- Earlier versions returned a record instead of a set of one row; a return type cannot be replaced.
-- (gnomon.merge_rule was the per-column rule's first name; the table gnomon.merge_rule holds the row rules now.)
drop function if exists gnomon.merge_rule(anycompatible, anycompatible, anycompatible);
drop function if exists gnomon.merge_column_rule(anycompatible, anycompatible, anycompatible);
drop function if exists gnomon.merge_fail(anycompatible, anycompatible, anycompatible);
drop function if exists gnomon.merge_ours(anycompatible, anycompatible, anycompatible);
drop function if exists gnomon.merge_theirs(anycompatible, anycompatible, anycompatible);
drop function if exists gnomon.merge_counter(smallint, smallint, smallint);
drop function if exists gnomon.merge_counter(integer, integer, integer);
drop function if exists gnomon.merge_counter(bigint, bigint, bigint);
drop function if exists gnomon.merge_counter(numeric, numeric, numeric, integer, integer);
drop function if exists gnomon.merge_counter_exact(numeric, numeric, numeric, text, numeric, numeric, integer, integer);
drop function if exists gnomon.merge_max(anycompatible, anycompatible, anycompatible);
drop function if exists gnomon.merge_min(anycompatible, anycompatible, anycompatible);
drop function if exists gnomon.merge_union(anycompatiblearray, anycompatiblearray, anycompatiblearray);
drop function if exists gnomon.merge_json(jsonb, jsonb, jsonb, boolean, integer, integer);
drop function if exists gnomon.merge_text(text, text, text);
drop function if exists gnomon.merge_custom(anycompatible, anycompatible, anycompatible, regprocedure);

-- The per-column rule: equal sides converge, a one-sided change wins. both_changed says that both sides changed the
-- value differently, and then value is NULL and the column's strategy decides. "The same" is IS NOT DISTINCT FROM:
-- the type's = (numbers by value, jsonb by value, arrays element by element), NULL the same only as NULL.
create or replace function gnomon.merge_column_rule(base anycompatible, ours anycompatible,
                                                    theirs anycompatible)
returns table (value anycompatible, both_changed boolean)
language sql immutable parallel safe as $$
  select case when ours is not distinct from theirs or theirs is not distinct from base then ours
              when ours is not distinct from base then theirs end,
         ours is distinct from theirs and ours is distinct from base and theirs is distinct from base
$$;
comment on function gnomon.merge_column_rule(anycompatible, anycompatible, anycompatible) is
  'The per-column rule of a three-way merge: equal sides converge, a one-sided change wins; both_changed when the strategy must decide.';

create or replace function gnomon.merge_fail(base anycompatible, ours anycompatible, theirs anycompatible)
returns table (value anycompatible, conflict text)
language sql immutable parallel safe as $$
  select case when ours is not distinct from theirs then ours when ours is not distinct from base then theirs
              else ours end,
         case when ours is distinct from theirs and ours is distinct from base and theirs is distinct from base
              then 'both sides changed the column differently and its strategy is fail' end
$$;
comment on function gnomon.merge_fail(anycompatible, anycompatible, anycompatible) is
  'Merge strategy fail (the default): a change on both sides is a conflict.';

create or replace function gnomon.merge_ours(base anycompatible, ours anycompatible, theirs anycompatible)
returns table (value anycompatible, conflict text)
language sql immutable parallel safe as $$
  select case when ours is not distinct from theirs then ours when ours is not distinct from base then theirs
              else ours end,
         null::text
$$;
comment on function gnomon.merge_ours(anycompatible, anycompatible, anycompatible) is
  'Merge strategy ours: a change on both sides keeps the target''s value.';

create or replace function gnomon.merge_theirs(base anycompatible, ours anycompatible, theirs anycompatible)
returns table (value anycompatible, conflict text)
language sql immutable parallel safe as $$
  select case when ours is not distinct from theirs or theirs is not distinct from base then ours else theirs end,
         null::text
$$;
comment on function gnomon.merge_theirs(anycompatible, anycompatible, anycompatible) is
  'Merge strategy theirs: a change on both sides takes the source''s value.';

-- counter: base + (ours - base) + (theirs - base), exact (in numeric, so no intermediate step overflows). A NULL base
-- counts as 0; NULL on a side is a conflict. A smallint, integer or bigint result must lie in the type's range; a
-- numeric(precision, scale) one must have at most scale decimal places (more would be rounded) and at most
-- precision - scale digits before the point (precision NULL: unconstrained numeric). NaN or an infinity (which the
-- Java reference cannot hold) makes the result NaN or infinite, which is a conflict too. One polymorphic function,
-- not one per type, so that every caller and the generated jOOQ classes see a single gnomon.merge_counter.
create or replace function gnomon.merge_counter_resolve(base anycompatible, ours anycompatible, theirs anycompatible,
                                                        numeric_precision integer, numeric_scale integer,
                                                        out value anycompatible, out conflict text)
language plpgsql immutable parallel safe as $$
declare
  kind regtype := pg_typeof(ours);
  type_name text;
  lo numeric;
  hi numeric;
  b numeric := coalesce(base::numeric, 0);
  o numeric := ours::numeric;
  t numeric := theirs::numeric;
  r numeric;
begin
  if ours is not distinct from theirs or theirs is not distinct from base then
    value := ours; return;
  elsif ours is not distinct from base then
    value := theirs; return;
  end if;
  value := ours;
  if ours is null or theirs is null then
    conflict := case when ours is null then 'ours' else 'theirs' end
                || ' set the column to NULL, which a counter cannot add';
    return;
  end if;
  case kind
    when 'smallint'::regtype then type_name := 'int2'; lo := -32768; hi := 32767;
    when 'integer'::regtype then type_name := 'int4'; lo := -2147483648; hi := 2147483647;
    when 'bigint'::regtype then type_name := 'int8'; lo := -9223372036854775808; hi := 9223372036854775807;
    else type_name := case when numeric_precision is null then 'numeric'
                           else format('numeric(%s,%s)', numeric_precision, numeric_scale) end;
  end case;
  r := o + t - b;
  if lo is not null then
    if r between lo and hi then
      value := r;
    else
      conflict := format('counter: %s + (%s − %s) + (%s − %s) = %s is outside the range of %s [%s, %s]',
                         b, o, b, t, b, r, type_name, lo, hi);
    end if;
  elsif r in ('NaN', 'Infinity', '-Infinity') then
    conflict := format('counter: the result %s is not a finite number', r);
  elsif numeric_precision is null then
    value := r;
  elsif scale(trim_scale(r)) > numeric_scale then
    conflict := format('counter: the result %s has more than %s decimal places, which %s would round',
                       r, numeric_scale, type_name);
  elsif abs(r) >= 10::numeric ^ (numeric_precision - numeric_scale) then
    conflict := format('counter: the result %s overflows %s (at most %s digits before the point)',
                       r, type_name, numeric_precision - numeric_scale);
  else
    value := round(r, numeric_scale);
  end if;
end $$;
comment on function gnomon.merge_counter_resolve(anycompatible, anycompatible, anycompatible, integer, integer) is
  'Internal: the counter strategy for a column both sides changed, computed in numeric, behind gnomon.merge_counter.';

create or replace function gnomon.merge_counter_typmod(numeric_precision integer, numeric_scale integer)
returns boolean
language plpgsql immutable parallel safe as $$
begin
  if numeric_precision is not null
     and (numeric_precision not between 1 and 1000 or numeric_scale is null
          or numeric_scale not between 0 and numeric_precision) then
    raise exception using errcode = 'GN021',
      message = format('numeric(%s,%s) is not a column type gnomon.merge_counter can bound', numeric_precision,
                       numeric_scale),
      hint = 'Pass the column''s declared precision (1..1000) and scale (0..precision), or NULL for unconstrained numeric.';
  end if;
  return true;
end $$;
comment on function gnomon.merge_counter_typmod(integer, integer) is
  'Internal: checks the precision and scale given to gnomon.merge_counter (GN021), else true.';

create or replace function gnomon.merge_counter(base anycompatible, ours anycompatible, theirs anycompatible,
                                                numeric_precision integer default null, numeric_scale integer default 0)
returns table (value anycompatible, conflict text)
language sql immutable parallel safe as $$
  select case when r.twice then s.value else r.value end, s.conflict
  from (select case when ours is not distinct from theirs or theirs is not distinct from base then ours
                    when ours is not distinct from base then theirs end as value,
               ours is distinct from theirs and ours is distinct from base and theirs is distinct from base as twice) r
  left join lateral (select m.value, m.conflict
                     from gnomon.merge_counter_resolve(base, ours, theirs, numeric_precision, numeric_scale) m
                     where r.twice offset 0) s on true
  where gnomon.merge_counter_typmod(numeric_precision, numeric_scale)
$$;
comment on function gnomon.merge_counter(anycompatible, anycompatible, anycompatible, integer, integer) is
  'Merge strategy counter for smallint, integer, bigint and numeric(precision, scale): base + (ours - base) + (theirs - base); a result out of the type''s range, or one numeric(p,s) would round, is a conflict.';

-- max and min: the larger (smaller) of ours and theirs; NULL loses, like greatest/least. text and varchar compare in
-- the "C" collation (code point order), every other type by its default ordering; on a tie ours is kept.
create or replace function gnomon.merge_extreme(base anycompatible, ours anycompatible, theirs anycompatible,
                                                sign integer, out value anycompatible, out conflict text)
language plpgsql immutable parallel safe as $$
begin
  if ours is not distinct from theirs or theirs is not distinct from base then
    value := ours;
  elsif ours is not distinct from base then
    value := theirs;
  elsif ours is null then
    value := theirs;
  elsif theirs is null then
    value := ours;
  elsif pg_typeof(ours) in ('text'::regtype, 'character varying'::regtype) then
    value := case when (sign > 0 and theirs::text collate "C" > ours::text collate "C")
                    or (sign < 0 and theirs::text collate "C" < ours::text collate "C") then theirs else ours end;
  else
    value := case when (sign > 0 and theirs > ours) or (sign < 0 and theirs < ours) then theirs else ours end;
  end if;
end $$;
comment on function gnomon.merge_extreme(anycompatible, anycompatible, anycompatible, integer) is
  'Internal: gnomon.merge_max (sign 1) and gnomon.merge_min (sign -1).';

create or replace function gnomon.merge_max(base anycompatible, ours anycompatible, theirs anycompatible)
returns table (value anycompatible, conflict text)
language sql immutable parallel safe as $$
  select case when r.twice then s.value else r.value end, s.conflict
  from (select case when ours is not distinct from theirs or theirs is not distinct from base then ours
                    when ours is not distinct from base then theirs end as value,
               ours is distinct from theirs and ours is distinct from base and theirs is distinct from base as twice) r
  left join lateral (select m.value, m.conflict
                     from gnomon.merge_extreme(base, ours, theirs, 1) m
                     where r.twice offset 0) s on true
$$;
comment on function gnomon.merge_max(anycompatible, anycompatible, anycompatible) is
  'Merge strategy max: the larger of ours and theirs (NULL loses; text in code point order).';

create or replace function gnomon.merge_min(base anycompatible, ours anycompatible, theirs anycompatible)
returns table (value anycompatible, conflict text)
language sql immutable parallel safe as $$
  select case when r.twice then s.value else r.value end, s.conflict
  from (select case when ours is not distinct from theirs or theirs is not distinct from base then ours
                    when ours is not distinct from base then theirs end as value,
               ours is distinct from theirs and ours is distinct from base and theirs is distinct from base as twice) r
  left join lateral (select m.value, m.conflict
                     from gnomon.merge_extreme(base, ours, theirs, -1) m
                     where r.twice offset 0) s on true
$$;
comment on function gnomon.merge_min(anycompatible, anycompatible, anycompatible) is
  'Merge strategy min: the smaller of ours and theirs (NULL loses; text in code point order).';

-- The union rule on arrays as multisets with a stable order (see docs/merge.md): per distinct element (by the
-- element type's equality) with counts b, o, t the merged count r; then the base's kept occurrences in base order,
-- ours' additions in ours' order, theirs' additions in theirs' order. Arrays are read as one-dimensional (unnest
-- flattens more: gnomon.merge_union_resolve gives a multi-dimensional array a conflict instead).
create or replace function gnomon.merge_multiset(base anycompatiblearray, ours anycompatiblearray,
                                                 theirs anycompatiblearray)
returns anycompatiblearray
language sql immutable parallel safe as $$
  select coalesce(array_agg(x.e order by x.side, x.pos), '{}')
  from (
    select c.side, c.pos, c.e, c.idx, c.b, c.o,
           case when c.o = c.b then c.t
                when c.t = c.b or c.o = c.t then c.o
                when c.o > c.b and c.t > c.b then greatest(c.o, c.t)
                when c.o < c.b and c.t < c.b then least(c.o, c.t)
                else c.o + c.t - c.b end as r
    from (
      select s.side, s.pos, s.e,
             row_number() over (partition by s.side, s.e order by s.pos) as idx,
             count(*) filter (where s.side = 0) over (partition by s.e) as b,
             count(*) filter (where s.side = 1) over (partition by s.e) as o,
             count(*) filter (where s.side = 2) over (partition by s.e) as t
      from (select 0 as side, u.pos, u.e from unnest(base) with ordinality u(e, pos)
            union all select 1, u.pos, u.e from unnest(ours) with ordinality u(e, pos)
            union all select 2, u.pos, u.e from unnest(theirs) with ordinality u(e, pos)) s
    ) c
  ) x
  where case x.side when 0 then x.idx <= least(x.r, x.b)
                    when 1 then x.idx > x.b and x.idx <= x.r
                    else x.idx > x.b
                         and x.idx - x.b <= x.r - least(x.r, x.b) - greatest(0, least(x.o, x.r) - x.b) end
$$;
comment on function gnomon.merge_multiset(anycompatiblearray, anycompatiblearray, anycompatiblearray) is
  'Internal: the union rule on three arrays as multisets with a stable order.';

create or replace function gnomon.merge_union_resolve(base anycompatiblearray, ours anycompatiblearray,
                                              theirs anycompatiblearray,
                                              out value anycompatiblearray, out conflict text)
language plpgsql immutable parallel safe as $$
begin
  if ours is not distinct from theirs or theirs is not distinct from base then
    value := ours;
  elsif ours is not distinct from base then
    value := theirs;
  elsif ours is null or theirs is null then
    value := ours;
    conflict := case when ours is null then 'ours' else 'theirs' end
                || ' set the column to NULL while the other side changed its elements';
  elsif coalesce(array_ndims(ours), 1) > 1 or coalesce(array_ndims(theirs), 1) > 1 or coalesce(array_ndims(base), 1) > 1 then
    -- a multi-dimensional array is not a multiset of its sub-arrays (they must keep one length, which the sides need
    -- not agree on), and merged element by element it would lose its shape: a conflict, as MultisetMerge's Java twin
    value := ours;
    conflict := format('union merges one-dimensional arrays only, and %s has %s dimensions',
                       case when coalesce(array_ndims(ours), 1) > 1 then 'ours'
                            when coalesce(array_ndims(theirs), 1) > 1 then 'theirs' else 'base' end,
                       greatest(array_ndims(ours), array_ndims(theirs), array_ndims(base)));
  else
    value := gnomon.merge_multiset(coalesce(base, '{}'), ours, theirs);
  end if;
end $$;
comment on function gnomon.merge_union_resolve(anycompatiblearray, anycompatiblearray, anycompatiblearray) is
  'Internal: the union strategy for a column both sides changed, behind gnomon.merge_union.';

create or replace function gnomon.merge_union(base anycompatiblearray, ours anycompatiblearray,
                                              theirs anycompatiblearray)
returns table (value anycompatiblearray, conflict text)
language sql immutable parallel safe as $$
  select case when r.twice then s.value else r.value end, s.conflict
  from (select case when ours is not distinct from theirs or theirs is not distinct from base then ours
                    when ours is not distinct from base then theirs end as value,
               ours is distinct from theirs and ours is distinct from base and theirs is distinct from base as twice) r
  left join lateral (select m.value, m.conflict
                     from gnomon.merge_union_resolve(base, ours, theirs) m
                     where r.twice offset 0) s on true
$$;
comment on function gnomon.merge_union(anycompatiblearray, anycompatiblearray, anycompatiblearray) is
  'Merge strategy union for arrays: additions of both sides kept, removals of either side applied, stable order.';

-- json: the limits first. A value deeper than max_depth (a scalar has depth 0, {"a":1} depth 1) has a node at level
-- max_depth + 1, which jsonpath's recursive accessor finds without descending further; then its nodes are counted
-- (as their type names, so no subtree is copied). Returns the value's number of nodes.
create or replace function gnomon.merge_json_check(doc jsonb, side text, max_depth integer, budget integer,
                                                   max_nodes integer)
returns integer
language plpgsql immutable parallel safe as $$
declare
  nodes integer;
begin
  if doc is null then
    return 0;
  end if;
  if jsonb_path_exists(doc, format('strict $.**{%s}', max_depth::bigint + 1)::jsonpath) then
    raise exception using errcode = 'GN040',
      message = format('json merge: %s is nested deeper than %s levels (max_depth)', side, max_depth),
      hint = 'Raise the limit with the max_depth argument of gnomon.merge_json if such documents are expected.';
  end if;
  select count(*) into nodes from jsonb_path_query(doc, 'strict $.**.type()');
  if nodes > budget then
    raise exception using errcode = 'GN040',
      message = format('json merge: base, ours and theirs together have more than %s JSON nodes (max_nodes, reached in %s)',
                       max_nodes, side),
      hint = 'Raise the limit with the max_nodes argument of gnomon.merge_json if such documents are expected.';
  end if;
  return nodes;
end $$;
comment on function gnomon.merge_json_check(jsonb, text, integer, integer, integer) is
  'Internal: the json strategy''s limits on one value (GN040 beyond them); returns its number of nodes.';

-- json: merges one position; NULL is an absent key. Conflicting paths are appended to paths.
create or replace function gnomon.merge_json_at(b jsonb, o jsonb, t jsonb, path text, arrays_as_sets boolean,
                                                inout paths text[], out merged jsonb)
language plpgsql immutable parallel safe as $$
declare
  i integer;
  k text;
  sub jsonb;
  ks text[];
  bs jsonb[];
  os jsonb[];
  ts jsonb[];
  vs jsonb[] := '{}';
  rest jsonb;
begin
  if o is not distinct from t or t is not distinct from b then
    merged := o; return;
  elsif o is not distinct from b then
    merged := t; return;
  end if;
  if jsonb_typeof(o) = 'object' and jsonb_typeof(t) = 'object' and (b is null or jsonb_typeof(b) = 'object') then
    b := coalesce(b, '{}');
    -- one pass over the keys: those changed on at most one side merge at once, the others one by one, recursively
    select coalesce(jsonb_object_agg(x.k, x.one) filter (where not x.twice and x.one is not null), '{}'),
           coalesce(array_agg(x.k order by x.k collate "C") filter (where x.twice), '{}'),
           coalesce(array_agg(x.bv order by x.k collate "C") filter (where x.twice), '{}'),
           coalesce(array_agg(x.ov order by x.k collate "C") filter (where x.twice), '{}'),
           coalesce(array_agg(x.tv order by x.k collate "C") filter (where x.twice), '{}')
      into rest, ks, bs, os, ts
    from (select y.k, y.bv, y.ov, y.tv,
                 y.ov is distinct from y.tv and y.ov is distinct from y.bv and y.tv is distinct from y.bv as twice,
                 case when y.ov is not distinct from y.bv then y.tv else y.ov end as one
          from (select z.k, b -> z.k as bv, o -> z.k as ov, t -> z.k as tv
                from (select jsonb_object_keys(b) union select jsonb_object_keys(o)
                      union select jsonb_object_keys(t)) z(k)) y) x;
    if cardinality(ks) = 0 then
      merged := rest;
      return;
    end if;
    for i in 1 .. cardinality(ks) loop
      k := ks[i];
      select m.merged, m.paths into sub, paths
      from gnomon.merge_json_at(bs[i], os[i], ts[i],
                                path || case when k ~ '^[A-Za-z_][A-Za-z0-9_]*$' then '.' || k
                                             else '[' || to_jsonb(k)::text || ']' end,
                                arrays_as_sets, paths) m;
      vs := vs || sub;
    end loop;
    select rest || coalesce(jsonb_object_agg(u.k, u.v) filter (where u.v is not null), '{}')
      into merged from unnest(ks, vs) u(k, v);
    return;
  end if;
  if arrays_as_sets and jsonb_typeof(o) = 'array' and jsonb_typeof(t) = 'array'
     and (b is null or jsonb_typeof(b) = 'array') then
    merged := to_jsonb(gnomon.merge_multiset(
      array(select e.v from jsonb_array_elements(coalesce(b, '[]')) with ordinality e(v, n) order by e.n),
      array(select e.v from jsonb_array_elements(o) with ordinality e(v, n) order by e.n),
      array(select e.v from jsonb_array_elements(t) with ordinality e(v, n) order by e.n)));
    return;
  end if;
  paths := paths || path;
  merged := o;
end $$;
comment on function gnomon.merge_json_at(jsonb, jsonb, jsonb, text, boolean, text[]) is
  'Internal: the json strategy at one position, recursively; appends conflicting paths.';

create or replace function gnomon.merge_json_resolve(base jsonb, ours jsonb, theirs jsonb, arrays_as_sets boolean,
                                                     max_depth integer, max_nodes integer,
                                                     out value jsonb, out conflict text)
language plpgsql immutable parallel safe as $$
declare
  used integer := 0;
  paths text[] := '{}';
  merged jsonb;
  n integer;
begin
  if ours is not distinct from theirs or theirs is not distinct from base then
    value := ours; return;
  elsif ours is not distinct from base then
    value := theirs; return;
  end if;
  value := ours;
  if ours is null or theirs is null then
    conflict := case when ours is null then 'ours' else 'theirs' end
                || ' set the column to NULL while the other side changed it';
    return;
  end if;
  if max_depth is null or max_nodes is null or max_depth < 1 or max_nodes < 1 or arrays_as_sets is null then
    raise exception using errcode = 'GN021',
      message = format('json merge limits must be positive: max_depth=%s, max_nodes=%s, arrays_as_sets=%s',
                       max_depth, max_nodes, arrays_as_sets);
  end if;
  used := used + gnomon.merge_json_check(base, 'base', max_depth, max_nodes - used, max_nodes);
  used := used + gnomon.merge_json_check(ours, 'ours', max_depth, max_nodes - used, max_nodes);
  used := used + gnomon.merge_json_check(theirs, 'theirs', max_depth, max_nodes - used, max_nodes);
  select m.merged, m.paths into merged, paths from gnomon.merge_json_at(base, ours, theirs, '$', arrays_as_sets, paths) m;
  n := coalesce(array_length(paths, 1), 0);
  if n = 0 then
    value := merged;
  else
    conflict := 'json: both sides changed ' || array_to_string(paths[1:5], ', ')
                || case when n > 5 then format(' and %s more paths', n - 5) else '' end || ' differently';
  end if;
end $$;
comment on function gnomon.merge_json_resolve(jsonb, jsonb, jsonb, boolean, integer, integer) is
  'Internal: the json strategy for a column both sides changed, behind gnomon.merge_json.';

create or replace function gnomon.merge_json(base jsonb, ours jsonb, theirs jsonb, arrays_as_sets boolean default false,
                                             max_depth integer default 64, max_nodes integer default 100000)
returns table (value jsonb, conflict text)
language sql immutable parallel safe as $$
  select case when r.twice then s.value else r.value end, s.conflict
  from (select case when ours is not distinct from theirs or theirs is not distinct from base then ours
                    when ours is not distinct from base then theirs end as value,
               ours is distinct from theirs and ours is distinct from base and theirs is distinct from base as twice) r
  left join lateral (select m.value, m.conflict
                     from gnomon.merge_json_resolve(base, ours, theirs, arrays_as_sets, max_depth, max_nodes) m
                     where r.twice offset 0) s on true
$$;
comment on function gnomon.merge_json(jsonb, jsonb, jsonb, boolean, integer, integer) is
  'Merge strategy json: a recursive three-way merge of jsonb objects key by key; GN040 beyond max_depth or max_nodes.';

-- text: lines end after each newline; the last may lack one.
create or replace function gnomon.merge_text_lines(doc text) returns text[]
language sql immutable parallel safe as $$
  select coalesce(array_agg(x.p || case when x.n < x.c then E'\n' else '' end order by x.n)
                  filter (where x.n < x.c or x.p <> ''), '{}')
  from (select u.p, u.n, count(*) over () as c from unnest(string_to_array(doc, E'\n')) with ordinality u(p, n)) x
$$;
comment on function gnomon.merge_text_lines(text) is 'Internal: the lines of a text, each with its newline.';

-- The hunks {base_start, base_end, side_start, side_end} (0-based, end exclusive, flattened four by four) that turn
-- base into side: a longest common subsequence after trimming the common prefix and suffix, walked exactly like the
-- Java reference (io.gnomon.merge.internal.LineDiff) so that both find the same hunks; a middle part whose table
-- would exceed 4,000,000 cells is one hunk.
create or replace function gnomon.merge_text_hunks(base text[], side text[]) returns integer[]
language plpgsql immutable parallel safe as $$
declare
  n integer := coalesce(array_length(base, 1), 0);
  m integer := coalesce(array_length(side, 1), 0);
  p integer := 0;
  s integer := 0;
  bn integer;
  sn integer;
  w integer;
  lcs integer[];
  i integer;
  j integer;
  hi integer := -1;
  hj integer := -1;
  h integer[] := '{}';
begin
  while p < n and p < m and base[p + 1] = side[p + 1] loop
    p := p + 1;
  end loop;
  while s < n - p and s < m - p and base[n - s] = side[m - s] loop
    s := s + 1;
  end loop;
  bn := n - p - s;
  sn := m - p - s;
  if bn = 0 and sn = 0 then
    return h;
  end if;
  if bn = 0 or sn = 0 or (bn + 1)::bigint * (sn + 1) > 4000000 then
    return array[p, p + bn, p, p + sn];
  end if;
  w := sn + 1;
  lcs := array_fill(0, array[(bn + 1) * w]); -- lcs[i*w + j + 1]: the LCS of base[p+i..] and side[p+j..]
  for i in reverse bn - 1 .. 0 loop
    for j in reverse sn - 1 .. 0 loop
      if base[p + i + 1] = side[p + j + 1] then
        lcs[i * w + j + 1] := lcs[(i + 1) * w + j + 2] + 1;
      else
        lcs[i * w + j + 1] := greatest(lcs[(i + 1) * w + j + 1], lcs[i * w + j + 2]);
      end if;
    end loop;
  end loop;
  i := 0;
  j := 0;
  while i < bn and j < sn loop
    if base[p + i + 1] = side[p + j + 1] then
      if hi >= 0 then
        h := h || array[p + hi, p + i, p + hj, p + j];
        hi := -1;
      end if;
      i := i + 1;
      j := j + 1;
      continue;
    end if;
    if hi < 0 then
      hi := i;
      hj := j;
    end if;
    if lcs[(i + 1) * w + j + 1] >= lcs[i * w + j + 2] then
      i := i + 1;
    else
      j := j + 1;
    end if;
  end loop;
  if hi < 0 and (i < bn or j < sn) then
    hi := i;
    hj := j;
  end if;
  if hi >= 0 then
    h := h || array[p + hi, p + bn, p + hj, p + sn];
  end if;
  return h;
end $$;
comment on function gnomon.merge_text_hunks(text[], text[]) is
  'Internal: the line hunks that turn base into side, exactly as the Java reference finds them.';

-- One side's lines for the base span [gs, ge), given that side's hunks k0 .. k1-1 inside the span.
create or replace function gnomon.merge_text_side(base text[], side text[], hunks integer[], k0 integer, k1 integer,
                                                  gs integer, ge integer)
returns text
language plpgsql immutable parallel safe as $$
declare
  res text := '';
  cur integer := gs;
  k integer;
begin
  for k in k0 .. k1 - 1 loop
    res := res || array_to_string(base[cur + 1 : hunks[4 * k + 1]], '')
               || array_to_string(side[hunks[4 * k + 3] + 1 : hunks[4 * k + 4]], '');
    cur := hunks[4 * k + 2];
  end loop;
  return res || array_to_string(base[cur + 1 : ge], '');
end $$;
comment on function gnomon.merge_text_side(text[], text[], integer[], integer, integer, integer, integer) is
  'Internal: one side''s lines for a span of base lines, given its hunks.';

create or replace function gnomon.merge_text_resolve(base text, ours text, theirs text,
                                                     out value text, out conflict text)
language plpgsql immutable parallel safe as $$
declare
  bl text[] collate "C";
  ol text[] collate "C";
  tl text[] collate "C";
  ho integer[];
  ht integer[];
  nho integer;
  nht integer;
  i integer := 0;
  j integer := 0;
  i0 integer;
  j0 integer;
  gs integer;
  ge integer;
  pos integer := 0;
  grew boolean;
  mine text collate "C";
  yours text collate "C";
  res text := '';
  problems text[] := '{}';
begin
  if ours is not distinct from theirs or theirs is not distinct from base then
    value := ours; return;
  elsif ours is not distinct from base then
    value := theirs; return;
  end if;
  value := ours;
  if ours is null or theirs is null then
    conflict := case when ours is null then 'ours' else 'theirs' end
                || ' set the column to NULL while the other side changed it';
    return;
  end if;
  bl := gnomon.merge_text_lines(coalesce(base, ''));
  ol := gnomon.merge_text_lines(ours);
  tl := gnomon.merge_text_lines(theirs);
  ho := gnomon.merge_text_hunks(bl, ol);
  ht := gnomon.merge_text_hunks(bl, tl);
  nho := coalesce(array_length(ho, 1), 0) / 4;
  nht := coalesce(array_length(ht, 1), 0) / 4;
  while i < nho or j < nht loop
    if j >= nht or (i < nho and ho[4 * i + 1] <= ht[4 * j + 1]) then
      gs := ho[4 * i + 1];
      ge := ho[4 * i + 2];
    else
      gs := ht[4 * j + 1];
      ge := ht[4 * j + 2];
    end if;
    i0 := i;
    j0 := j;
    grew := true;
    while grew loop -- hunks of either side that overlap or touch the group join it
      grew := false;
      if i < nho and ho[4 * i + 1] <= ge then
        ge := greatest(ge, ho[4 * i + 2]);
        i := i + 1;
        grew := true;
      end if;
      if j < nht and ht[4 * j + 1] <= ge then
        ge := greatest(ge, ht[4 * j + 2]);
        j := j + 1;
        grew := true;
      end if;
    end loop;
    res := res || array_to_string(bl[pos + 1 : gs], '');
    if i > i0 and j > j0 then
      mine := gnomon.merge_text_side(bl, ol, ho, i0, i, gs, ge);
      yours := gnomon.merge_text_side(bl, tl, ht, j0, j, gs, ge);
      if mine <> yours then
        problems := problems || case when gs = ge then 'different lines inserted after base line ' || gs
                                     else 'base lines ' || (gs + 1) || case when ge > gs + 1 then '–' || ge else '' end
                                          || ' changed differently' end;
      end if;
      res := res || mine;
    elsif i > i0 then
      res := res || gnomon.merge_text_side(bl, ol, ho, i0, i, gs, ge);
    else
      res := res || gnomon.merge_text_side(bl, tl, ht, j0, j, gs, ge);
    end if;
    pos := ge;
  end loop;
  res := res || array_to_string(bl[pos + 1 :], '');
  if cardinality(problems) = 0 then
    value := res;
  else
    conflict := 'text: ' || array_to_string(problems, '; ');
  end if;
end $$;
comment on function gnomon.merge_text_resolve(text, text, text) is
  'Internal: the text strategy for a column both sides changed, behind gnomon.merge_text.';

create or replace function gnomon.merge_text(base text, ours text, theirs text)
returns table (value text, conflict text)
language sql immutable parallel safe as $$
  select case when r.twice then s.value else r.value end, s.conflict
  from (select case when ours is not distinct from theirs or theirs is not distinct from base then ours
                    when ours is not distinct from base then theirs end as value,
               ours is distinct from theirs and ours is distinct from base and theirs is distinct from base as twice) r
  left join lateral (select m.value, m.conflict
                     from gnomon.merge_text_resolve(base, ours, theirs) m
                     where r.twice offset 0) s on true
$$;
comment on function gnomon.merge_text(text, text, text) is
  'Merge strategy text: a line-based three-way merge against the base, like diff3; overlapping or touching edits conflict.';

-- custom: a user's function fn(base T, ours T, theirs T, out value T, out conflict text), called only when both
-- sides changed the column differently. It returns conflict NULL and the merged value, or a conflict (its value is
-- then ignored: the result is ours). It must be deterministic.
create or replace function gnomon.merge_custom_resolve(base anycompatible, ours anycompatible, theirs anycompatible,
                                               fn regprocedure, out value anycompatible, out conflict text)
language plpgsql stable as $$
declare
  call text;
begin
  if ours is not distinct from theirs or theirs is not distinct from base then
    value := ours; return;
  elsif ours is not distinct from base then
    value := theirs; return;
  end if;
  select format('select f.* from %I.%I($1, $2, $3) f', n.nspname, p.proname) into call
  from pg_proc p join pg_namespace n on n.oid = p.pronamespace
  where p.oid = fn and p.pronargs = 3 and p.proargmodes = '{i,i,i,o,o}' and p.proallargtypes[5] = 'text'::regtype;
  if call is null then
    raise exception using errcode = 'GN021',
      message = format('%s is not a merge function', coalesce(fn::text, 'NULL')),
      hint = 'A custom strategy is a function (base T, ours T, theirs T, out value T, out conflict text).';
  end if;
  execute call into value, conflict using base, ours, theirs;
  if conflict is not null then
    value := ours;
  end if;
end $$;
comment on function gnomon.merge_custom_resolve(anycompatible, anycompatible, anycompatible, regprocedure) is
  'Internal: the custom strategy for a column both sides changed, behind gnomon.merge_custom.';

create or replace function gnomon.merge_custom(base anycompatible, ours anycompatible, theirs anycompatible,
                                               fn regprocedure)
returns table (value anycompatible, conflict text)
language sql stable as $$
  select case when r.twice then s.value else r.value end, s.conflict
  from (select case when ours is not distinct from theirs or theirs is not distinct from base then ours
                    when ours is not distinct from base then theirs end as value,
               ours is distinct from theirs and ours is distinct from base and theirs is distinct from base as twice) r
  left join lateral (select m.value, m.conflict
                     from gnomon.merge_custom_resolve(base, ours, theirs, fn) m
                     where r.twice offset 0) s on true
$$;
comment on function gnomon.merge_custom(anycompatible, anycompatible, anycompatible, regprocedure) is
  'Merge strategy custom: applies the per-column rule, then calls a user''s function (base, ours, theirs, out value, out conflict text).';
