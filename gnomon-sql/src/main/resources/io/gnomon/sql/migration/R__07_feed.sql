-- The change feed: the versions of chosen tables in commit order, cut into batches by ticks, read in pages.
--
-- Batch i holds the versions whose transactions became visible between tick i-1 and tick i: visible in tick i's
-- snapshot and not in tick i-1's. Ticks are serialised (gnomon.tick()), so every committed transaction falls into
-- exactly one batch, whenever it took its xid, and a batch never changes once its tick exists. Inside a batch,
-- transactions are ordered by their largest version key: a transaction that waited for another's row lock wrote
-- after the other committed, so it orders after it; versions inside a transaction by version key.
-- A position 'v1:tick:txn_key:vid' says: every batch up to tick is delivered, and of the next batch every version
-- ordered at or before (txn_key, vid).

-- A consumer follows the writes on main (gnomon.consumer.branch_id null, catalog version 6) or on one branch.

-- The SQL expression of a version's key as compact json text, for the generated feed functions (history alias h):
-- '{"a":' || to_json(h.a) || ',"b":' || to_json(h.b) || '}'
create or replace function gnomon.feed_key_json_sql(key_columns text[]) returns text
language sql immutable strict as $$
  select format('(%L', '{') || string_agg(format(' || %L || to_json(h.%I)', case when o > 1 then ',' else '' end
                                                  || to_json(k::text)::text || ':', k), '' order by o) || ' || ''}'')::json'
    from unnest(key_columns) with ordinality u(k, o)
$$;
comment on function gnomon.feed_key_json_sql(text[]) is
  'Internal: the SQL expression of a version''s key as compact json text, used by the generated feed functions.';

create or replace function gnomon.parse_position(pos text, out tick_id bigint, out txn_key bigint, out vid bigint)
language plpgsql immutable strict as $$
declare
  parts text[] := string_to_array(pos, ':');
begin
  if array_length(parts, 1) <> 4 or parts[1] <> 'v1' or parts[2] !~ '^\d{1,18}$' or parts[3] !~ '^\d{1,18}$'
     or parts[4] !~ '^\d{1,18}$' then
    raise exception using errcode = 'GN033', message = format('malformed feed position %L', left(pos, 100)),
      hint = 'Pass back the position of an event returned by gnomon.feed_read() unchanged.';
  end if;
  tick_id := parts[2]::bigint; txn_key := parts[3]::bigint; vid := parts[4]::bigint;
end $$;

-- How far behind a consumer is: from the tick it has acknowledged (or its registration, before any tick) to the
-- last tick.
create or replace function gnomon.consumer_lag(c gnomon.consumer) returns interval
language sql stable as $$
  select (select max(k.tick_at) from gnomon.tick k)
         - coalesce((select k.tick_at from gnomon.tick k where k.tick_id = c.tick_id), c.registered_at)
$$;
comment on function gnomon.consumer_lag(gnomon.consumer) is 'How far behind a feed consumer is: last tick minus the time of its acknowledged tick.';

create or replace function gnomon.consumer_row(consumer_name text) returns gnomon.consumer
language plpgsql stable as $$
declare
  c gnomon.consumer;
begin
  select * into c from gnomon.consumer k where k.consumer_name = consumer_row.consumer_name;
  if not found then
    raise exception using errcode = 'GN030', message = format('no feed consumer is named %L', consumer_name),
      hint = 'Register it first: select gnomon.feed_register(''name'', array[''schema.table'']);';
  end if;
  if c.expired_at is not null then
    raise exception using errcode = 'GN032',
      message = format('feed consumer %L was expired at %s: %s', consumer_name, c.expired_at, c.expired_reason),
      hint = 'Its position can no longer be served without a gap. Drop it (gnomon.feed_unregister) and register it again with a backfill.';
  end if;
  return c;
end $$;

-- Registers a consumer of the changes of some tables, from now or from a coordinate. Returns its start coordinate:
-- a consistent backfill reads every table as of it (gnomon_t.<table>_as_of(coordinate)), then the feed, with no gap
-- and no overlap.
drop function if exists gnomon.feed_register(text, text[], text, boolean, interval);
create or replace function gnomon.feed_register(consumer_name text, tables text[], start text default 'now',
                                                with_images boolean default true, max_lag interval default null,
                                                branch text default 'main')
returns text
language plpgsql as $$
declare
  ids integer[];
  snap pg_snapshot;
  t0 bigint;
  b gnomon.branch;
begin
  if consumer_name is null or length(consumer_name) not between 1 and 200 or consumer_name ~ '[[:cntrl:]]' then
    raise exception using errcode = 'GN021', message = 'a consumer name needs 1 to 200 characters, none of them a control character';
  end if;
  if with_images is null then
    raise exception using errcode = 'GN021', message = format('consumer %L: with_images is null', consumer_name),
      hint = 'Pass true (events carry the row before and after) or false (keys only).';
  end if;
  if max_lag <= interval '0' then
    raise exception using errcode = 'GN021', message = format('consumer %L: max_lag %s is not positive', consumer_name, max_lag),
      hint = 'Pass how far behind the consumer may fall before it is expired, such as interval ''7 days'', or null for no limit.';
  end if;
  if tables is null or cardinality(tables) = 0 then
    raise exception using errcode = 'GN021', message = format('consumer %L names no table', consumer_name),
      hint = 'Pass the tracked tables to follow: array[''public.orders'', ''public.customers''].';
  end if;
  select array_agg(distinct (gnomon.tracked(t)).table_id) into ids from unnest(tables) t;
  if exists (select 1 from gnomon.consumer k where k.consumer_name = feed_register.consumer_name) then
    raise exception using errcode = 'GN031', message = format('feed consumer %L is already registered', consumer_name),
      hint = 'Use it as it is, or drop it first with gnomon.feed_unregister.';
  end if;
  snap := case when start is null or start = 'now' then pg_current_snapshot() else gnomon.parse_coordinate(start) end;
  if pg_snapshot_xmax(snap) > pg_snapshot_xmax(pg_current_snapshot()) then
    raise exception using errcode = 'GN011', message = format('start coordinate %s is in the future', start);
  end if;
  if exists (select 1 from gnomon.tracked_table t where t.table_id = any (ids) and not pg_visible_in_snapshot(t.track_xid, snap)) then
    raise exception using errcode = 'GN012', message = format('start coordinate %s is older than the history of a table of consumer %L', start, consumer_name),
      hint = 'Start at a coordinate captured after every table was tracked.';
  end if;
  -- the last tick that saw nothing the start coordinate did not see; batches after it are filtered by the start
  select coalesce(max(k.tick_id), 0) into t0 from gnomon.tick k
   where pg_snapshot_xmax(k.snapshot) <= pg_snapshot_xmax(snap)
     and not exists (select 1 from pg_snapshot_xip(snap) x where pg_visible_in_snapshot(x, k.snapshot));
  if branch is not null and branch <> 'main' then
    b := gnomon.check_intact(gnomon.find_branch(branch));
  end if;
  insert into gnomon.consumer (consumer_name, table_ids, with_images, tick_id, start_snapshot, max_lag, branch_id)
  values (consumer_name, ids, with_images, t0, snap, max_lag, b.branch_id);
  -- (a committed snapshot needs no guard across faults: it is labelled with the incarnation reading it)
  return gnomon.coordinate_text(snap::text);
end $$;
comment on function gnomon.feed_register(text, text[], text, boolean, interval, text) is
  'Registers a change-feed consumer of tracked tables, on main or on a branch, from now or from a coordinate; returns its start coordinate (read the tables as of it for a backfill).';

create or replace function gnomon.feed_unregister(consumer_name text) returns void
language plpgsql as $$
begin
  delete from gnomon.consumer k where k.consumer_name = feed_unregister.consumer_name;
  if not found then
    raise exception using errcode = 'GN030', message = format('no feed consumer is named %L', consumer_name);
  end if;
end $$;
comment on function gnomon.feed_unregister(text) is 'Drops a change-feed consumer and its position.';

-- The change feed's per-table sources, generated for each tracked table (by gnomon.install_objects):
--   gnomon_t.<t>_changes(prev, cur, start, images): the versions whose transactions became visible between two
--     snapshots (and not at the consumer's start): xid, version key, operation, the key as compact json, the before
--     image (the version's own columns; json, not jsonb: far cheaper), and the key's columns (gk1, gk2, ...). Without
--     images, what gnomon.feed_read uses to choose a page.
--   gnomon_t.<t>_page(prev, cur, start, images, sx, st, lo, hi, from_tkey, from_vid, to_tkey, to_vid, split, recent):
--     the page's versions with their transaction keys and images: the batch's versions ordered after (from_tkey,
--     from_vid) and up to (to_tkey, to_vid), each version's transaction key found by a binary search of the batch's
--     transactions sorted by xid (sx, with their keys in st; no array the planner would estimate element by element),
--     the scan bounded by the page's xids (lo..hi). A version's after image is the image its key's next version holds (every
--     version holds the row from before its change); set-based, per page:
--       - the next version of the key inside the page (a window over the page's versions: no probe). Versions in a
--         page are a contiguous run in commit order, and a transaction that writes a key another wrote waits for it to
--         commit, so a key's next version, if it is in the batch at all, is in the page when a later one is;
--       - for a key's last version in the page, the live row when its xmin is the version's transaction (one
--         primary-key probe), unless that transaction continues on the next page (split) or is 2^32 xids old (recent:
--         a 32-bit xmin cannot name it);
--       - else the key's next version in the history (one probe of its (key, g_vid) index), else the live row.
-- Images are built from the columns cast to the table's row type, so their keys are the table's (a row constructor:
-- a third cheaper than row_to_json of a whole-row reference). The arguments of both never change (gnomon.untrack and
-- gnomon.drop_feed_objects drop them by them); the result of _changes did (jsonb images, then after images), hence
-- the drop.
create or replace function gnomon.install_changes(p_table_id integer) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  tab text; hist text; chg name; pg name;
  key_json text; gk_cols text; gk_ret text; gk_part text; cols_h text; cols_n text; cols_l text; n_eq text; l_eq text;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  tab  := format('%I.%I', tt.schema_name, tt.table_name);
  hist := format('gnomon_t.%I', tt.history_table);
  chg  := gnomon.object_name(tt.base_name, '_changes');
  pg   := gnomon.object_name(tt.base_name, '_page');
  select gnomon.feed_key_json_sql(tt.key_columns),
         string_agg(format('h.%I as gk%s', k, o), ', ' order by o),
         string_agg(format('gk%s %s', o, (select c->>'storetype' from jsonb_array_elements(tt.columns) c where c->>'name' = k)), ', ' order by o),
         string_agg(format('y.gk%s', o), ', ' order by o),
         string_agg(format('n.%I = z.gk%s', k, o), ' and ' order by o),
         string_agg(format('l.%I = z.gk%s', k, o), ' and ' order by o)
    into key_json, gk_cols, gk_ret, gk_part, n_eq, l_eq
    from unnest(tt.key_columns) with ordinality u(k, o);
  select string_agg(format('h.%I', c->>'name'), ', ' order by (c->>'attnum')::int),
         string_agg(format('n.%I', c->>'name'), ', ' order by (c->>'attnum')::int),
         string_agg(format('l.%I', c->>'name'), ', ' order by (c->>'attnum')::int)
    into cols_h, cols_n, cols_l from jsonb_array_elements(tt.columns) c;
  if to_regprocedure(format('gnomon_t.%I(pg_snapshot, pg_snapshot, pg_snapshot, boolean)', chg)) is not null then
    execute format('drop function gnomon_t.%I(pg_snapshot, pg_snapshot, pg_snapshot, boolean)', chg);
  end if;
  execute format($f$create function gnomon_t.%1$I(prev pg_snapshot, cur pg_snapshot, start pg_snapshot, images boolean)
    returns table (xid xid8, vid bigint, op "char", key json, before json, %2$s)
    language sql stable as $b$
    select h.g_xid, h.g_vid, h.g_op, %3$s,
           case when images and h.g_op <> 'I' then row_to_json(row(%4$s)::%5$s) end, %6$s
      from %7$s h
     where h.g_xid >= pg_snapshot_xmin(prev) and h.g_xid < pg_snapshot_xmax(cur)
       and pg_visible_in_snapshot(h.g_xid, cur) and not pg_visible_in_snapshot(h.g_xid, prev)
       and not pg_visible_in_snapshot(h.g_xid, start)
  $b$
  $f$, chg, gk_ret, key_json, cols_h, tab, gk_cols, hist);
  execute format($f$create or replace function gnomon_t.%1$I(prev pg_snapshot, cur pg_snapshot, start pg_snapshot,
      images boolean, sx xid8[], st bigint[], lo xid8, hi xid8, from_tkey bigint, from_vid bigint, to_tkey bigint,
      to_vid bigint, split xid8, recent xid8)
    returns table (xid xid8, vid bigint, tkey bigint, op "char", key json, before json, after json)
    language sql stable as $b$
    select z.xid, z.vid, z.tkey, z.op, z.key, z.before,
           case when not images or z.op = 'D' then null
                when z.has_next then z.next_before
                else coalesce(
                  case when z.xid >= recent and z.xid is distinct from split then
                    (select row_to_json(row(%2$s)::%3$s) from %3$s l where %4$s and l.xmin = z.xid::xid) end,
                  -- (the next version's transaction wrote the key after this one committed, so it had not
                  -- finished before prev: its xid is at least prev's xmin, a range of the history index (key, g_xid))
                  (select row_to_json(row(%5$s)::%3$s) from %6$s n where %7$s and n.g_xid >= pg_snapshot_xmin(prev)
                      and n.g_vid > z.vid order by n.g_vid limit 1),
                  (select row_to_json(row(%2$s)::%3$s) from %3$s l where %4$s)) end
      from (select y.*, lead(y.vid) over w is not null as has_next, lead(y.before) over w as next_before
              from (select ch.*, st[width_bucket(ch.xid, sx)] as tkey
                      from gnomon_t.%8$I(prev, cur, start, images) ch
                     where ch.xid between lo and hi) y
             where (y.tkey, y.vid) > (from_tkey, from_vid) and (y.tkey, y.vid) <= (to_tkey, to_vid)
            window w as (partition by %9$s order by y.vid)) z
  $b$
  $f$, pg, cols_l, tab, l_eq, cols_n, hist, n_eq, chg, gk_part);
end $$;
comment on function gnomon.install_changes(integer) is 'Internal: (re)creates a tracked table''s change-feed sources, gnomon_t.<t>_changes and gnomon_t.<t>_page.';

-- The change feed's per-table sources for writes on a branch, generated with the branch objects (by
-- gnomon.install_branch_objects, once the branch tables exist). A branch write leaves one row in gnomon_t.<t>_bh: the
-- branch row's image from before it ('U'; g_del when that was a tombstone), or 'I' when the write created the
-- branch row (copy on write: the row before it is the parent's at the branch's cutoff). The branch row in
-- gnomon_t.<t>_b holds the state after the last write and, in g_xid, its writer.
--   gnomon_t.<t>_bchanges(prev, cur, start, images, branch): as <t>_changes, for one branch: op is the history's
--     ('U' or 'I'), del whether the image before was a tombstone.
--   gnomon_t.<t>_bpage(…, branch, parent): as <t>_page. The event's operation needs the states before and after:
--     before: the history's image ('U'), a tombstone ('U' with del), or the parent's row at the cutoff (read through
--     gnomon_t.<t>_at(parent), 'I'; none when the parent had no such key); after: the key's next version in the page
--     (a window), else the branch row when its g_xid is the version's transaction (64 bits: no age limit) and that
--     transaction does not continue on the next page, else the key's next branch version, else the branch row.
--     'c' when there was no row before, 'd' when there is none after (a tombstone), else 'u'; without images, the
--     states are probed all the same (an empty object stands for a row) and the images left out.
create or replace function gnomon.install_branch_changes(p_table_id integer) returns void
language plpgsql as $$
declare
  tt gnomon.tracked_table;
  tab text; bt name; bh name; chg name; pg name; at_fn name;
  key_json text; gk_cols text; gk_ret text; gk_part text; cols_h text; cols_n text; cols_b text; cols_a text;
  n_eq text; b_eq text; a_eq text;
begin
  select * into tt from gnomon.tracked_table where table_id = p_table_id;
  tab   := format('%I.%I', tt.schema_name, tt.table_name);
  bt    := gnomon.object_name(tt.base_name, '_b');
  bh    := gnomon.object_name(tt.base_name, '_bh');
  chg   := gnomon.object_name(tt.base_name, '_bchanges');
  pg    := gnomon.object_name(tt.base_name, '_bpage');
  at_fn := gnomon.object_name(tt.base_name, '_at');
  select gnomon.feed_key_json_sql(tt.key_columns),
         string_agg(format('h.%I as gk%s', k, o), ', ' order by o),
         string_agg(format('gk%s %s', o, (select c->>'storetype' from jsonb_array_elements(tt.columns) c where c->>'name' = k)), ', ' order by o),
         string_agg(format('y.gk%s', o), ', ' order by o),
         string_agg(format('n.%I = y.gk%s', k, o), ' and ' order by o),
         string_agg(format('b.%I = y.gk%s', k, o), ' and ' order by o),
         string_agg(format('a.%I = y.gk%s', k, o), ' and ' order by o)
    into key_json, gk_cols, gk_ret, gk_part, n_eq, b_eq, a_eq
    from unnest(tt.key_columns) with ordinality u(k, o);
  select string_agg(format('h.%I', c->>'name'), ', ' order by (c->>'attnum')::int),
         string_agg(format('n.%I', c->>'name'), ', ' order by (c->>'attnum')::int),
         string_agg(format('b.%I', c->>'name'), ', ' order by (c->>'attnum')::int),
         string_agg(format('a.%I', c->>'name'), ', ' order by (c->>'attnum')::int)
    into cols_h, cols_n, cols_b, cols_a from jsonb_array_elements(tt.columns) c;
  -- the batch of a branch is found by the writing xid, as on main (the history's other indexes lead with the key or
  -- the branch alone). The branch's condition is written g_branch + 0 so that no index on g_branch serves it: on a
  -- branch history without statistics the planner took the (g_branch) B-tree, reading every version of the branch
  -- for each batch and page (FeedPlanningIT); the two leaves are then both read through their BRIN, the scratch one
  -- usually empty
  execute format('create index if not exists %I on gnomon_t.%I using brin (g_xid)', gnomon.object_name(bh, '_g_xid_idx'), bh);
  execute format($f$create or replace function gnomon_t.%1$I(prev pg_snapshot, cur pg_snapshot, start pg_snapshot,
      images boolean, branch integer)
    returns table (xid xid8, vid bigint, op "char", del boolean, key json, before json, %2$s)
    language sql stable as $b$
    select h.g_xid, h.g_vid, h.g_op, coalesce(h.g_del, false), %3$s,
           case when images and h.g_op = 'U' and not coalesce(h.g_del, false) then row_to_json(row(%4$s)::%5$s) end, %6$s
      from gnomon_t.%7$I h
     where h.g_branch + 0 = branch
       and h.g_xid >= pg_snapshot_xmin(prev) and h.g_xid < pg_snapshot_xmax(cur)
       and pg_visible_in_snapshot(h.g_xid, cur) and not pg_visible_in_snapshot(h.g_xid, prev)
       and not pg_visible_in_snapshot(h.g_xid, start)
  $b$
  $f$, chg, gk_ret, key_json, cols_h, tab, gk_cols, bh);
  execute format($f$create or replace function gnomon_t.%1$I(prev pg_snapshot, cur pg_snapshot, start pg_snapshot,
      images boolean, sx xid8[], st bigint[], lo xid8, hi xid8, from_tkey bigint, from_vid bigint, to_tkey bigint,
      to_vid bigint, split xid8, recent xid8, branch integer, parent gnomon.point)
    returns table (xid xid8, vid bigint, tkey bigint, op "char", key json, before json, after json)
    language sql stable as $b$
    select z.xid, z.vid, z.tkey,
           case when z.bef is null then 'I' when z.aft::text = 'null' then 'D' else 'U' end,
           z.key, case when images then z.bef end, case when images and z.aft::text <> 'null' then z.aft end
      from (select y.xid, y.vid, y.tkey, y.key,
                   case when y.op = 'U' then case when y.del then null else coalesce(y.before, '{}'::json) end
                        else (select case when images then row_to_json(row(%2$s)::%3$s) else '{}'::json end
                                from gnomon_t.%4$I(parent) a where %5$s) end as bef,
                   case when y.has_next then case when y.next_del then 'null'::json else coalesce(y.next_before, '{}'::json) end
                        else coalesce(
                          case when y.xid is distinct from split then
                            (select case when b.g_del then 'null'::json when images then row_to_json(row(%6$s)::%3$s) else '{}'::json end
                               from gnomon_t.%7$I b where b.g_branch = branch and %8$s and b.g_xid = y.xid) end,
                          (select case when n.g_del then 'null'::json when images then row_to_json(row(%9$s)::%3$s) else '{}'::json end
                             from gnomon_t.%10$I n where n.g_branch = branch and %11$s and n.g_vid > y.vid order by n.g_vid limit 1),
                          (select case when b.g_del then 'null'::json when images then row_to_json(row(%6$s)::%3$s) else '{}'::json end
                             from gnomon_t.%7$I b where b.g_branch = branch and %8$s)) end as aft
              from (select y.*, lead(y.vid) over w is not null as has_next, lead(y.del) over w as next_del,
                           lead(y.before) over w as next_before
                      from (select ch.*, st[width_bucket(ch.xid, sx)] as tkey
                              from gnomon_t.%12$I(prev, cur, start, images, branch) ch
                             where ch.xid between lo and hi) y
                     where (y.tkey, y.vid) > (from_tkey, from_vid) and (y.tkey, y.vid) <= (to_tkey, to_vid)
                    window w as (partition by %13$s order by y.vid)) y) z
  $b$
  $f$, pg, cols_a, tab, at_fn, a_eq, cols_b, bt, b_eq, cols_n, bh, n_eq, chg, gk_part);
end $$;
comment on function gnomon.install_branch_changes(integer) is 'Internal: (re)creates a tracked table''s change-feed sources for branch writes, gnomon_t.<t>_bchanges and gnomon_t.<t>_bpage.';

-- The new BRIN ranges of the open history partitions of the tables a feed consumer follows, and of the leaf partitions
-- of their branch histories (gnomon_t.<t>_bh, which a consumer of a branch reads: gnomon_t.<t>_bchanges) when one
-- follows a branch, summarized: a range is
-- summarized when autovacuum comes by (once a minute at best; its queue of requests overflows at bulk rates), and
-- until then the BRIN returns it for every condition, so a live consumer's batch and page scans read every range
-- written since. gnomon.tick() calls this once a tick: about five new ranges a second at 3,000 single-row writes a
-- second. Never waits: a partition another session is vacuuming, summarizing or rolling (SHARE UPDATE EXCLUSIVE) is
-- left for the next tick; nor fails the tick when its owner may not summarize. Returns the ranges summarized.
-- (Summarizing the range the writers are filling makes each of its next versions update the range's summary in
-- place, as in every summarized range: one index tuple rewritten per version until the range is full.)
create or replace function gnomon.feed_summarize() returns integer
language plpgsql as $$
declare
  r record;
  n integer := 0;
begin
  for r in
    select format('gnomon_t.%I', p.relname) as part, format('gnomon_t.%I', ic.relname) as idx
      from gnomon.tracked_table tt
      cross join lateral (
        select gnomon.open_history_partition(to_regclass(format('gnomon_t.%I', tt.history_table))) as relid
        union all
        select pt.relid from pg_partition_tree(to_regclass(format('gnomon_t.%I', gnomon.object_name(tt.base_name, '_bh')))) pt
         where pt.isleaf
           and exists (select from gnomon.consumer k where tt.table_id = any (k.table_ids) and k.expired_at is null
                          and k.branch_id is not null)) h
      join pg_class p on p.oid = h.relid
      join pg_index i on i.indrelid = p.oid
      join pg_class ic on ic.oid = i.indexrelid
      join pg_am am on am.oid = ic.relam
     where am.amname = 'brin'
       and exists (select from gnomon.consumer k where tt.table_id = any (k.table_ids) and k.expired_at is null)
  loop
    begin
      execute format('lock table %s in share update exclusive mode nowait', r.part);
      n := n + brin_summarize_new_values(r.idx::regclass);
    exception when lock_not_available or insufficient_privilege then
      null;  -- the next tick tries again; meanwhile the BRIN still finds every version, reading more ranges
    end;
  end loop;
  return n;
end $$;
comment on function gnomon.feed_summarize() is
  'Internal: summarizes the new BRIN ranges of the open history partitions, and the branch histories, that feed consumers read (called by gnomon.tick()); returns how many.';

-- Kept batch orders are written once and read a few times: stored uncompressed (pglz took 15-20 ms of CPU per batch
-- of 3,000 transactions, the five arrays' compression, where writing them out of line takes about 1 ms).
alter table gnomon.feed_batch alter column txn_xid set storage external, alter column txn_key set storage external,
  alter column txn_upto set storage external, alter column xid_sorted set storage external,
  alter column key_by_xid set storage external;

-- How the feed's statements over the history are planned: the batch's or the page's versions through the BRIN index
-- on g_xid (16 pages per range). The planner cannot see that a snapshot range holds few versions, and a history
-- partition often has no statistics (a new one, or the open one before autovacuum analyzes it): it then chose a
-- sequential scan of the whole partition for a batch (171,000 rows read to keep none, session 14) or, for a page, a
-- full scan of the (key, g_xid) B-tree (no condition on the key: every entry read, for the key order the page's
-- window wants). So statements that only scan the history run with sequential and plain index scans off: the
-- batch's order (gnomon.feed_batch_of) and gnomon.feed_page_plan's own two (gnomon.feed_history_planning around them:
-- its lookups of ticks and consumers keep their indexes, and index-only scans need enable_indexscan). A page's
-- statement also probes the live table and the (key, g_xid) index once per event, where an index scan costs less
-- than a bitmap scan of one row, and with statistics on g_xid the planner takes the BRIN for the page's versions by
-- itself: gnomon.feed_read turns both off only while a history it reads has none (gnomon.feed_history_unanalyzed).
-- The BRIN finds only summarized ranges: gnomon.tick() summarizes the new ranges of the histories consumers follow
-- (gnomon.feed_summarize), else a live batch's scan read every range written since autovacuum last came by.
create or replace function gnomon.feed_history_planning(scan_history boolean) returns void
language sql volatile as $$
  select set_config('enable_seqscan', case when scan_history then 'off' else 'on' end, true),
         set_config('enable_indexscan', case when scan_history then 'off' else 'on' end, true)
$$;
comment on function gnomon.feed_history_planning(boolean) is
  'Internal: the planner settings of the change feed''s statements over the history (true: through the BRIN index on g_xid), for the rest of the calling function, which must SET both.';

-- Whether a history the feed reads for these tables (main's, or the branch writes' with on_branch) has a leaf
-- partition holding pages without statistics on g_xid. As the catalog's owner: pg_statistic says only whether there are any (the
-- pg_stats view, which any role may read, cost 2 ms a call to plan, a tenth of a page of 1,000); in PL/pgSQL, whose
-- plan is kept for the session. Planned as catalog lookups (gnomon.feed_read's settings are for the history: under
-- them, hash joins of the whole of pg_class).
create or replace function gnomon.feed_history_unanalyzed(table_ids integer[], on_branch boolean) returns boolean
language plpgsql stable security definer set search_path = pg_catalog, pg_temp set enable_nestloop = on
set enable_seqscan = on as $$
declare
  leaf regclass;
begin
  -- one partition at a time: as one anti-join, the plan hashed every g_xid row of pg_attribute (5 ms a page in the
  -- bench's database)
  for leaf in
    select pt.relid from gnomon.tracked_table tt
           cross join lateral pg_partition_tree(to_regclass(format('gnomon_t.%I',
             case when on_branch then gnomon.object_name(tt.base_name, '_bh') else tt.history_table end))) pt
     where tt.table_id = any (feed_history_unanalyzed.table_ids) and pt.isleaf
  loop
    -- an empty leaf has nothing to plan badly, and never gets statistics: the branch history's scratch leaf, empty
    -- where no scratch branch was written, made every branch consumer's pages run as if unanalyzed
    if not exists (select from pg_attribute a join pg_statistic s on s.starelid = a.attrelid and s.staattnum = a.attnum
                    where a.attrelid = leaf and a.attname = 'g_xid')
       and pg_relation_size(leaf) > 0 then
      return true;
    end if;
  end loop;
  return false;
end $$;
comment on function gnomon.feed_history_unanalyzed(integer[], boolean) is
  'Internal: whether a history partition the feed reads for these tables has no statistics on g_xid (then gnomon.feed_read plans its pages without index scans).';

-- A batch's order for gnomon.feed_read (the gnomon.feed_batch row of a tick, main (0) or a branch, and a set of
-- tables): read from the catalog, or computed from the consumer's sources without images (q_ids: xid and version key
-- of the batch's versions, over $1 prev, $2 cur and $3 start) and kept there, when the batch is larger than the page
-- being read (p_page), for the batch's later pages and other consumers of the same tables. Only for a batch the start
-- does not filter (the caller checks). Keeping it is best effort: a session that may not or cannot write (a read-only
-- transaction, no privilege), or that meets another session keeping the same row (advisory lock 7388, hash of the
-- tick, branch and tables), uses what it computed.
create or replace function gnomon.feed_batch_of(p_tick bigint, p_branch integer, p_ids integer[], prev pg_snapshot,
                                                cur pg_snapshot, start pg_snapshot, q_ids text, p_page integer)
returns gnomon.feed_batch
-- (its statement over the history through the BRIN index: see gnomon.feed_history_planning)
language plpgsql set enable_seqscan = off set enable_indexscan = off as $$
declare
  fb gnomon.feed_batch;
begin
  select * into fb from gnomon.feed_batch b where b.tick_id = p_tick and b.branch_id = p_branch and b.table_ids = p_ids;
  if found then
    return fb;
  end if;
  if p_branch = 0 and cardinality(p_ids) = 1 and gnomon.c_feed_page_enabled() then
    -- one table of main with the C module's page reader: the same arrays from its gnomon.feed_batch_c (which
    -- gnomon.use_c_module creates with the page reader that c_feed_page_enabled looks for), a third of the
    -- statement's time below
    select p_tick, p_branch, p_ids, b.* into fb from gnomon.feed_batch_c(p_ids[1], prev, cur, start) b;
  else
    execute format($q$
      with x as materialized (select u.xid, max(u.vid) as tkey, count(*) as n from (%s) u group by u.xid)
      select $4, $6, $5,
             coalesce(array_agg(o.xid order by o.tkey), '{}'), coalesce(array_agg(o.tkey order by o.tkey), '{}'),
             coalesce(array_agg(o.upto order by o.tkey), '{}'),
             (select coalesce(array_agg(x.xid order by x.xid), '{}') from x),
             (select coalesce(array_agg(x.tkey order by x.xid), '{}') from x)
        from (select x.xid, x.tkey, (sum(x.n) over (order by x.tkey))::bigint as upto from x) o$q$, q_ids)
      into fb using prev, cur, start, p_tick, p_ids, p_branch;
  end if;
  -- Kept only when the batch holds more versions than the page being read, so that its reader comes back for it: a
  -- batch read whole by one page (most batches, when ticks are frequent, and every empty one) costs no write.
  -- Never waits: a session whose transaction is keeping the same row (a consumer applying its page in a long
  -- transaction) holds the advisory lock until it ends, and this one then uses its own copy; a row committed since
  -- this transaction's snapshot fails the insert at once (unique or serialization failure).
  if coalesce(fb.txn_upto[cardinality(fb.txn_upto)], 0) > p_page
     and pg_try_advisory_xact_lock(7388, hashtext(p_tick || ':' || p_branch || ':' || p_ids::text)) then
    begin
      insert into gnomon.feed_batch values (fb.*);
    exception when unique_violation or serialization_failure or read_only_sql_transaction or insufficient_privilege
                   or foreign_key_violation then
      null;  -- another session kept the same order, or this one may not keep it: use it without keeping it
    end;
  end if;
  return fb;
end $$;
comment on function gnomon.feed_batch_of(bigint, integer, integer[], pg_snapshot, pg_snapshot, pg_snapshot, text, integer) is
  'Internal: a change-feed batch''s order for gnomon.feed_read, from gnomon.feed_batch or computed and kept there.';

-- Whether gnomon.feed_read reads main's pages with images through the C module's page reader: the module created
-- gnomon.feed_page_c, and the setting gnomon.feed_page_c is on.
create or replace function gnomon.c_feed_page_enabled() returns boolean
language sql stable as $$
  select pg_catalog.to_regprocedure('gnomon.feed_page_c(integer,pg_snapshot,pg_snapshot,pg_snapshot,boolean,xid8[],bigint[],xid8,xid8,bigint,bigint,bigint,bigint,xid8,xid8,boolean,bigint,bigint)') is not null
     and gnomon.setting('gnomon.feed_page_c')::boolean
$$;
comment on function gnomon.c_feed_page_enabled() is 'Internal: whether gnomon.feed_read reads main''s pages with images through the optional C module (gnomon.feed_page_c, and the setting gnomon.feed_page_c on).';

-- One page of events after the consumer's acknowledged position: whole transactions, at most max_events rows
-- (a transaction larger than a page is split, and the next page resumes inside it). Each row carries the position
-- to acknowledge once it is handled. A page that skipped only empty batches returns one 'h' (heartbeat) row.
-- Per batch it reads, up to two statements: the batch's order, to choose the page (its transactions in order, whole,
-- up to max_events), kept in gnomon.feed_batch by the batch's first page (else a scan of the batch's versions without
-- images); then the page's versions with their images, in order.
-- With read_after (a position at or after the acknowledged one, no later than the last tick), the page after it
-- instead: a consumer reads its next page while it handles this one, and acknowledges each once handled.
-- gnomon.feed_page_plan chooses the page: for each batch it reads, the statement of the page's events (q, over the
-- parameters in the other columns, $1 to $19 in their order), or the heartbeat's; gnomon.feed_read runs them (both of
-- its versions, gnomon.install_feed_read: the C one reads a C page straight into its result, q_c_table naming it).
drop function if exists gnomon.feed_read(text, integer);
drop function if exists gnomon.feed_read(text, integer, text);
drop function if exists gnomon.feed_page_plan(text, integer, text);
create function gnomon.feed_page_plan(consumer_name text, max_events integer, read_after text)
returns table (q text, q_prev pg_snapshot, q_cur pg_snapshot, q_start pg_snapshot, q_sx xid8[], q_st bigint[],
               q_lo xid8, q_hi xid8, q_tk bigint, q_v bigint, q_to_tkey bigint, q_to_vid bigint, q_split xid8,
               q_recent xid8, q_whole boolean, q_cur_id bigint, q_t bigint, q_cur_at timestamptz, q_parent gnomon.point,
               q_bname text, q_c_table integer, q_table_name text)
-- No JIT: a page's queries run in milliseconds, and their probes' costs would otherwise buy 50 ms of compilation.
-- Memory enough to order a page of 10,000 events with their images without spilling to disk. No nested loops: every
-- join here is a set of versions against a set of versions, and a row estimate of 1 (the planner cannot see how
-- many versions a snapshot range holds) otherwise turns one into a million comparisons. Its lookups of ticks and
-- consumers by index, its own statements over the history by the BRIN (gnomon.feed_history_planning).
language plpgsql set jit = off set work_mem = '32MB' set enable_nestloop = off set enable_seqscan = on
set enable_indexscan = on as $$
declare
  c gnomon.consumer := gnomon.consumer_row(consumer_name);
  latest bigint;
  t bigint; tk bigint; v bigint;
  t0 bigint;
  p record;
  prev pg_snapshot; cur pg_snapshot; cur_id bigint; cur_at timestamptz;
  remaining integer;
  q_ids text; q_rows text;
  n integer;
  batch_left bigint;
  sx xid8[]; st bigint[];
  to_tkey bigint; to_vid bigint;
  split xid8;
  ids integer[];
  fb gnomon.feed_batch;
  j integer; e integer; base bigint;
  -- the kept batch orders (gnomon.feed_batch); set gnomon.feed_batches = off to choose every page by a scan
  use_batches boolean := gnomon.setting('gnomon.feed_batches')::boolean;
  xid_lo xid8; xid_hi xid8;
  recent xid8;
  emitted boolean := false;
  lag interval;
  b gnomon.branch;
  bname text := 'main';
  parent gnomon.point;
  -- main's pages with images through the C module's page reader (gnomon-c/src/feed_page.c): same rows, same images
  use_c_page boolean := gnomon.c_feed_page_enabled();
  -- the page's rows come in their order from their one source (the C page of one table sorts them itself, and
  -- writes their positions and operations' letters): no sort, no expressions per row; gnomon.feed_read in C then
  -- reads the page straight into its result (q_c_table, q_table_name)
  in_order boolean;
  one_name text;
begin
  if max_events is null or max_events < 1 or max_events > 1000000 then
    raise exception using errcode = 'GN021', message = format('max_events must be between 1 and 1000000, got %s', max_events);
  end if;
  select max(k.tick_id) into latest from gnomon.tick k;
  t := c.tick_id; tk := c.txn_key; v := c.vid;
  if read_after is not null then
    p := gnomon.parse_position(read_after);
    if (p.tick_id, p.txn_key, p.vid) < (c.tick_id, c.txn_key, c.vid) then
      raise exception using errcode = 'GN033',
        message = format('position %s of consumer %L is before its acknowledged position v1:%s:%s:%s: its events were handled',
                         read_after, consumer_name, c.tick_id, c.txn_key, c.vid),
        hint = 'Read after the acknowledged position (gnomon.feed_position) or a later one that gnomon.feed_read returned.';
    end if;
    if p.tick_id > coalesce(latest, 0) then
      raise exception using errcode = 'GN033',
        message = format('position %s is after the last tick: no page delivered it', read_after),
        hint = 'Read after a position that gnomon.feed_read returned (event_position of a row).';
    end if;
    t := p.tick_id; tk := p.txn_key; v := p.vid;
  end if;
  t0 := t;
  -- a consumer further behind than its max_lag is expired: it gets an error, never a page with a gap
  if c.max_lag is not null then
    lag := gnomon.consumer_lag(c);
    if lag > c.max_lag then
      raise exception using errcode = 'GN032',
        message = format('feed consumer %L is %s behind, more than its max_lag of %s, and is expired', consumer_name, lag, c.max_lag),
        hint = 'Drop it (gnomon.feed_unregister) and register it again with a backfill, or raise its max_lag.';
    end if;
  end if;
  remaining := max_events;
  -- a consumer of a branch: the branch must still be there, with its rows (a scratch branch emptied by a crash would
  -- otherwise read as a gap)
  if c.branch_id is not null then
    select * into b from gnomon.branch x where x.branch_id = c.branch_id;
    if not found then
      raise exception using errcode = 'GN050',
        message = format('the branch (id %s) that feed consumer %L follows was dropped', c.branch_id, consumer_name),
        hint = 'Unregister the consumer (gnomon.feed_unregister).';
    end if;
    b := gnomon.check_intact(b);
    bname := b.branch_name;
    parent := gnomon.parent_point(b);
  end if;
  -- the consumer's tables' sources, two ways: versions only (to choose a page); the page's events with their images
  -- (on a branch, the branch's sources, with the branch id and the point its keys are inherited from)
  select string_agg(case when c.branch_id is null
                         then format('select ch.xid, ch.vid from gnomon_t.%I($1, $2, $3, false) ch',
                                     gnomon.object_name(tt.base_name, '_changes'))
                         else format('select ch.xid, ch.vid from gnomon_t.%I($1, $2, $3, false, %s) ch',
                                     gnomon.object_name(tt.base_name, '_bchanges'), c.branch_id) end, ' union all '),
         string_agg(case when c.branch_id is not null
                         then format('select %L::text as table_name, pg.xid, pg.vid, pg.tkey, pg.op, pg.key, pg.before, pg.after'
                                     ' from gnomon_t.%I($1, $2, $3, %L, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, %s, $18) pg',
                                     format('%I.%I', tt.schema_name, tt.table_name), gnomon.object_name(tt.base_name, '_bpage'),
                                     c.with_images, c.branch_id)
                         when c.with_images and use_c_page
                         then format('select %L::text as table_name, pg.xid, pg.vid, pg.tkey, pg.op, pg.key, pg.before, pg.after,'
                                     ' pg.event_position, pg.event_op'
                                     ' from gnomon.feed_page_c(%s, $1, $2, $3, true, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13,'
                                     ' $14, $15, $16) pg',
                                     format('%I.%I', tt.schema_name, tt.table_name), tt.table_id)
                         when c.with_images
                         then format('select %L::text as table_name, pg.xid, pg.vid, pg.tkey, pg.op, pg.key, pg.before, pg.after'
                                     ' from gnomon_t.%I($1, $2, $3, true, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) pg',
                                     format('%I.%I', tt.schema_name, tt.table_name), gnomon.object_name(tt.base_name, '_page'))
                         else format('select %L::text as table_name, ch.xid, ch.vid, ch.tkey, ch.op, ch.key, null::json as before, null::json as after'
                                     ' from (select ch.*, $5[width_bucket(ch.xid, $4)] as tkey from gnomon_t.%I($1, $2, $3, false) ch'
                                     ' where ch.xid between $6 and $7) ch where (ch.tkey, ch.vid) > ($8, $9) and (ch.tkey, ch.vid) <= ($10, $11)',
                                     format('%I.%I', tt.schema_name, tt.table_name), gnomon.object_name(tt.base_name, '_changes')) end,
                    ' union all '),
         array_agg(tt.table_id order by tt.table_id),
         count(*) = 1 and c.branch_id is null and c.with_images and use_c_page,
         min(format('%I.%I', tt.schema_name, tt.table_name))
    into q_ids, q_rows, ids, in_order, one_name from gnomon.tracked_table tt where tt.table_id = any (c.table_ids);
  if q_ids is null then
    raise exception using errcode = 'GN001', message = format('no table of consumer %L is tracked any more', consumer_name),
      hint = 'Unregister the consumer.';
  end if;
  -- a live row's xmin names this version's transaction only if it is less than 2^32 transactions old
  recent := greatest(pg_snapshot_xmax(pg_current_snapshot())::text::numeric - 4294967295, 0)::text::xid8;
  while remaining > 0 and t < coalesce(latest, 0) loop
    prev := case when t = 0 then c.start_snapshot else (select k.snapshot from gnomon.tick k where k.tick_id = t) end;
    if prev is null then
      raise exception using errcode = 'GN032', message = format('tick %s of consumer %L is no longer retained', t, consumer_name);
    end if;
    select k.tick_id, k.snapshot, k.tick_at into cur_id, cur, cur_at from gnomon.tick k where k.tick_id > t order by k.tick_id limit 1;
    split := null;
    if v >= tk and pg_snapshot_xmax(c.start_snapshot) <= pg_snapshot_xmin(prev) and use_batches then
      -- The page, chosen from the batch's order (gnomon.feed_batch_of: computed by the batch's first page and kept),
      -- when the position is between two of its transactions and the consumer's start filters nothing out of the
      -- batch (every transaction the start saw had ended before the batch's previous tick). Exactly what the scan
      -- below would choose: the transactions after the position (largest version key above it) taken whole while
      -- their running sum fits, or, on an empty page, the first one's first versions (split).
      fb := gnomon.feed_batch_of(cur_id, coalesce(c.branch_id, 0), ids, prev, cur, c.start_snapshot, q_ids, remaining);
      sx := fb.xid_sorted; st := fb.key_by_xid;
      j := coalesce(width_bucket(tk, fb.txn_key), 0);    -- the transactions at or before the position
      base := case when j = 0 then 0 else fb.txn_upto[j] end;
      batch_left := coalesce(fb.txn_upto[cardinality(fb.txn_upto)], 0) - base;
      e := coalesce(width_bucket(base + remaining, fb.txn_upto), 0);   -- the last that fits whole
      if e <= j and j < cardinality(fb.txn_key) and not emitted then
        e := j + 1;
        split := fb.txn_xid[e];
      end if;
      if e > j then
        n := least(fb.txn_upto[e] - base, remaining);
        to_tkey := fb.txn_key[e];
        select min(x), max(x) into xid_lo, xid_hi from unnest(fb.txn_xid[j + 1:e]) x;
      else
        n := 0; to_tkey := null; xid_lo := null; xid_hi := null;
      end if;
    else
      -- The page, chosen over the batch's versions without images (inside a split transaction, in a batch the
      -- consumer's start cuts into, or with gnomon.feed_batches off): one scan grouped by transaction (a hash
      -- aggregate, no sort of the versions), then the transactions after the position ordered by their largest version
      -- key (tkey), taken whole while they fit, or, on an empty page, the first one's first versions (split).
      perform gnomon.feed_history_planning(true);
      execute format($q$
        with x as materialized (
          select u.xid, max(u.vid) as tkey, count(*) as n, count(*) filter (where u.vid > $5) as n_after
            from (%s) u group by u.xid),
        o as (select x.xid, x.tkey, case when x.tkey = $4 then x.n_after else x.n end as n
                from x where x.tkey > $4 or (x.tkey = $4 and x.n_after > 0)),
        w as (select o.*, o.upto <= $6 or (o.k = 1 and not $7) as taken
                from (select o.*, sum(o.n) over (order by o.tkey) as upto, row_number() over (order by o.tkey) as k from o) o)
        -- every transaction of the batch goes into the lookup (sx, st): the page's scan meets versions of transactions
        -- before the position too, and each must find its own
        select (select coalesce(array_agg(x.xid order by x.xid), '{}') from x),
               (select coalesce(array_agg(x.tkey order by x.xid), '{}') from x),
               least(coalesce(sum(w.n) filter (where w.taken), 0), $6), max(w.tkey) filter (where w.taken),
               min(w.xid) filter (where w.taken and w.n > $6), min(w.xid) filter (where w.taken),
               max(w.xid) filter (where w.taken), coalesce(sum(w.n), 0)
          from w$q$, q_ids)
        into sx, st, n, to_tkey, split, xid_lo, xid_hi, batch_left
        using prev, cur, c.start_snapshot, tk, v, remaining, emitted;
      perform gnomon.feed_history_planning(false);
    end if;
    -- the page ends where its last transaction does (its largest version key), or, when it splits one, at its
    -- remaining-th version after the position
    to_vid := to_tkey;
    if split is not null then
      perform gnomon.feed_history_planning(true);
      execute format('select u.vid from (%s) u where u.xid = $4 and u.vid > $5 order by u.vid offset $6 - 1 limit 1', q_ids)
        into to_vid using prev, cur, c.start_snapshot, split, case when to_tkey = tk then v else 0 end, remaining;
      perform gnomon.feed_history_planning(false);
    end if;
    if n > 0 then
      -- the page's versions with their images, in order; the last event of a batch taken whole carries the position
      -- past the batch (positions by concatenation: format() looked up its arguments' output functions again for
      -- every row, 6% of a C page's instructions)
      -- (the C page of one table writes its rows' positions and letters itself, the same way: their text, two
      -- numbers' and three concatenations per row were a sixth of its page's instructions)
      q := case when in_order then format($q$
        select u.event_position, $15, $17, u.xid, u.tkey, u.vid, u.table_name, u.event_op, u.key, u.before, u.after, $19
          from (%s) u$q$, q_rows)
        else format($q$
        select case when u.vid = $11 and $14 then 'v1:' || $15::text || ':0:0'
                    else 'v1:' || $16::text || ':' || u.tkey::text || ':' || u.vid::text end,
               $15, $17, u.xid, u.tkey, u.vid, u.table_name,
               case u.op when 'I' then 'c' when 'U' then 'u' else 'd' end, u.key, u.before, u.after, $19
          from (%s) u
         order by u.tkey, u.vid$q$, q_rows) end;
      q_prev := prev; q_cur := cur; q_start := c.start_snapshot; q_sx := sx; q_st := st; q_lo := xid_lo;
      q_hi := xid_hi; q_tk := tk; q_v := v; q_to_tkey := to_tkey; q_to_vid := to_vid; q_split := split;
      q_recent := recent; q_whole := batch_left = n; q_cur_id := cur_id; q_t := t; q_cur_at := cur_at;
      q_parent := parent; q_bname := bname;
      q_c_table := case when in_order then ids[1] end; q_table_name := case when in_order then one_name end;
      return next;
      emitted := true;
    end if;
    remaining := remaining - n;
    -- did this page take the rest of the batch? Then the next one starts after it.
    if batch_left > n then
      exit; -- page full inside this batch
    end if;
    t := cur_id; tk := 0; v := 0;
  end loop;
  if not emitted and t > t0 then
    -- only empty batches: a heartbeat row moves the position past them
    q := $q$select format('v1:%s:0:0', $16), $16, (select k.tick_at from gnomon.tick k where k.tick_id = $16),
                   null::xid8, null::bigint, null::bigint, null::text, 'h'::text, null::json, null::json, null::json, $19$q$;
    q_prev := null; q_cur := null; q_start := null; q_sx := null; q_st := null; q_lo := null; q_hi := null;
    q_tk := null; q_v := null; q_to_tkey := null; q_to_vid := null; q_split := null; q_recent := null;
    q_whole := null; q_cur_id := null; q_t := t; q_cur_at := null; q_parent := null; q_bname := bname;
    q_c_table := null; q_table_name := null;
    return next;
  end if;
end $$;
comment on function gnomon.feed_page_plan(text, integer, text) is
  'Internal: chooses a change-feed page for gnomon.feed_read: per batch, the statement of its events and its parameters.';

-- Creates gnomon.feed_read, the one definition of it: in C (gnomon-c/src/feed_read.c) when the C module's page reader
-- is there (gnomon.feed_page_c, created by gnomon.use_c_module(true), which calls this again), else in PL/pgSQL. Both
-- run the statements gnomon.feed_page_plan chooses with the same settings; the C one reads a page the plan gives the
-- C page straight into its result, where the PL/pgSQL one copied it again (RETURN QUERY). A library without it (an
-- earlier release's) keeps the PL/pgSQL one. Returns the language chosen.
create or replace function gnomon.install_feed_read() returns text
language plpgsql set client_min_messages = warning as $i$
declare
  head constant text := 'gnomon.feed_read(consumer_name text, max_events integer default 1000, read_after text default null) '
    'returns table (event_position text, tick_id bigint, tick_at timestamptz, xid xid8, txn_key bigint, vid bigint, '
    'table_name text, op text, key json, before json, after json, branch text) ';
  -- (the page statements over the history through the BRIN index: see gnomon.feed_history_planning)
  settings constant text := 'set jit = off set work_mem = ''32MB'' set enable_nestloop = off set enable_seqscan = on '
    'set enable_indexscan = on';
  lib text := (select p.probin from pg_proc p
                where p.oid = to_regprocedure('gnomon.feed_page_c(integer,pg_snapshot,pg_snapshot,pg_snapshot,boolean,xid8[],bigint[],xid8,xid8,bigint,bigint,bigint,bigint,xid8,xid8,boolean,bigint,bigint)'));
  chosen text := 'plpgsql';
begin
  if lib is not null then
    begin
      execute format('create or replace function %s language c volatile %s as %L, %L', head, settings, lib, 'gnomon_feed_read');
      chosen := 'c';
    exception
      when undefined_function then
        null;  -- a library of an earlier release: the PL/pgSQL one
      when insufficient_privilege then
        -- (a catalog upgraded by a role that may not create C functions: the same pages, read more slowly)
        raise warning using message = 'gnomon.feed_read is the PL/pgSQL one: only a superuser may create its C version',
          hint = 'Run select gnomon.use_c_module(true); as a superuser.';
    end;
  end if;
  if chosen = 'plpgsql' then
    execute format('create or replace function %s language plpgsql volatile %s as %L', head, settings, $b$
declare
  s record;
begin
  if (select gnomon.feed_history_unanalyzed(k.table_ids, k.branch_id is not null) from gnomon.consumer k
       where k.consumer_name = feed_read.consumer_name) then
    perform gnomon.feed_history_planning(true);
  end if;
  for s in select * from gnomon.feed_page_plan(consumer_name, max_events, read_after) loop
    return query execute s.q using s.q_prev, s.q_cur, s.q_start, s.q_sx, s.q_st, s.q_lo, s.q_hi, s.q_tk, s.q_v,
      s.q_to_tkey, s.q_to_vid, s.q_split, s.q_recent, s.q_whole, s.q_cur_id, s.q_t, s.q_cur_at, s.q_parent, s.q_bname;
  end loop;
end $b$);
  end if;
  comment on function gnomon.feed_read(text, integer, text) is
    'A page of change events after the consumer''s acknowledged position (or after read_after, at or after it); acknowledge with gnomon.feed_ack(name, event_position).';
  return chosen;
end $i$;
comment on function gnomon.install_feed_read() is
  'Internal: creates gnomon.feed_read, in C when the C module''s page reader is there (gnomon.use_c_module), else in PL/pgSQL; returns the language.';
select gnomon.install_feed_read();

-- The consumer's acknowledged position, as feed_read's positions are written: pass it to feed_ack as read_after.
create or replace function gnomon.feed_position(consumer_name text) returns text
language sql stable as $$
  select format('v1:%s:%s:%s', c.tick_id, c.txn_key, c.vid) from gnomon.consumer_row(consumer_name) c
$$;
comment on function gnomon.feed_position(text) is
  'The acknowledged position of a feed consumer: every event up to it is delivered (the read_after of feed_ack).';

-- Acknowledges every event up to a position. With read_after (the position the page was read after, from
-- gnomon.feed_position before gnomon.feed_read), only if the consumer is still there: a compare-and-set, so two
-- sessions that applied the same page cannot both acknowledge it (the second gets SQLSTATE 40001: roll back).
drop function if exists gnomon.feed_ack(text, text);
create or replace function gnomon.feed_ack(consumer_name text, event_position text, read_after text default null)
returns void
language plpgsql as $$
declare
  c gnomon.consumer := gnomon.consumer_row(consumer_name);
  p record;
  a record;
begin
  if event_position is null then
    raise exception using errcode = 'GN033', message = format('no position to acknowledge for consumer %L: it is null', consumer_name),
      hint = 'Acknowledge a position that gnomon.feed_read returned (event_position of a row).';
  end if;
  p := gnomon.parse_position(event_position);
  a := p;
  if read_after is not null then
    a := gnomon.parse_position(read_after);
  end if;
  if (p.tick_id, p.txn_key, p.vid) < (c.tick_id, c.txn_key, c.vid) and read_after is null then
    raise exception using errcode = 'GN033',
      message = format('position %s of consumer %L is before its acknowledged position v1:%s:%s:%s: positions never go backwards',
                       event_position, consumer_name, c.tick_id, c.txn_key, c.vid),
      hint = 'Acknowledge the position of the last event you handled, once.';
  end if;
  if read_after is not null and (p.tick_id, p.txn_key, p.vid) < (a.tick_id, a.txn_key, a.vid) then
    raise exception using errcode = 'GN033',
      message = format('position %s is before the position %s its page was read after', event_position, read_after),
      hint = 'Pass the position of the last event of the page, and the position the page was read after.';
  end if;
  -- (tick, 0, 0) ends the batches up to tick; (tick, txn_key, vid) names an event of the batch after tick, which
  -- exists only once the next tick has cut it
  if (p.tick_id, p.txn_key, p.vid) > (coalesce((select max(k.tick_id) from gnomon.tick k), 0), 0, 0) then
    raise exception using errcode = 'GN033',
      message = format('position %s is after the last tick: no page delivered it', event_position),
      hint = 'Acknowledge a position that gnomon.feed_read returned (event_position of a row).';
  end if;
  -- the check again, atomically: a concurrent ack that committed since c was read must win
  update gnomon.consumer k set tick_id = p.tick_id, txn_key = p.txn_key, vid = p.vid, acked_at = clock_timestamp()
   where k.consumer_name = feed_ack.consumer_name
     and case when read_after is null then (k.tick_id, k.txn_key, k.vid) <= (p.tick_id, p.txn_key, p.vid)
              else (k.tick_id, k.txn_key, k.vid) = (a.tick_id, a.txn_key, a.vid) end;
  if not found then
    c := gnomon.consumer_row(consumer_name);
    if read_after is not null then
      raise exception using errcode = '40001',
        message = format('feed consumer %L is at v1:%s:%s:%s, not at %s where this page was read: another session acknowledged meanwhile',
                         consumer_name, c.tick_id, c.txn_key, c.vid, read_after),
        hint = 'Roll back this transaction (its writes would apply those events twice) and read the next page again.';
    end if;
    raise exception using errcode = 'GN033',
      message = format('position %s of consumer %L is before its acknowledged position v1:%s:%s:%s: positions never go backwards',
                       event_position, consumer_name, c.tick_id, c.txn_key, c.vid),
      hint = 'Another session acknowledged a later position concurrently; acknowledge each position once, from one session.';
  end if;
end $$;
comment on function gnomon.feed_ack(text, text, text) is
  'Acknowledges every event up to a position; with read_after, only if the consumer is still at it (compare-and-set). Run it in the same transaction as your own writes for exactly-once.';

-- The generated sources follow this file: regenerated for every tracked table whenever it changes (they changed
-- shape: jsonb images, then after images inside _changes; branch sources came later). Branch sources only where the
-- branch tables exist (gnomon.install_branch_objects creates both otherwise).
do $$
declare
  tt gnomon.tracked_table;
begin
  for tt in select * from gnomon.tracked_table order by table_id loop
    perform gnomon.install_changes(tt.table_id);
    if to_regclass(format('gnomon_t.%I', gnomon.object_name(tt.base_name, '_bh'))) is not null then
      perform gnomon.install_branch_changes(tt.table_id);
    end if;
  end loop;
end $$;
