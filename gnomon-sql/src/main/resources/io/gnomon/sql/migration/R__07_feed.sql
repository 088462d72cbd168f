-- The change feed: the versions of chosen tables in commit order, cut into batches by ticks, read in pages.
--
-- Batch i holds the versions whose transactions became visible between tick i-1 and tick i: visible in tick i's
-- snapshot and not in tick i-1's. Ticks are serialised (gnomon.tick()), so every committed transaction falls into
-- exactly one batch, whenever it took its xid, and a batch never changes once its tick exists. Inside a batch,
-- transactions are ordered by their largest version key: a transaction that waited for another's row lock wrote
-- after the other committed, so it orders after it; versions inside a transaction by version key.
-- A position 'v1:tick:txn_key:vid' says: every batch up to tick is delivered, and of the next batch every version
-- ordered at or before (txn_key, vid).

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
create or replace function gnomon.feed_register(consumer_name text, tables text[], start text default 'now',
                                                with_images boolean default true, max_lag interval default null)
returns text
language plpgsql as $$
declare
  ids integer[];
  snap pg_snapshot;
  t0 bigint;
begin
  if consumer_name is null or length(consumer_name) not between 1 and 200 then
    raise exception using errcode = 'GN021', message = 'a consumer name needs 1 to 200 characters';
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
  insert into gnomon.consumer (consumer_name, table_ids, with_images, tick_id, start_snapshot, max_lag)
  values (consumer_name, ids, with_images, t0, snap, max_lag);
  -- (a committed snapshot needs no guard across faults: it is labelled with the incarnation reading it)
  return 'v2:' || gnomon.incarnation()::text || ':' || snap::text;
end $$;
comment on function gnomon.feed_register(text, text[], text, boolean, interval) is
  'Registers a change-feed consumer of tracked tables, from now or from a coordinate; returns its start coordinate (read tables as of it for a backfill).';

create or replace function gnomon.feed_unregister(consumer_name text) returns void
language plpgsql as $$
begin
  delete from gnomon.consumer k where k.consumer_name = feed_unregister.consumer_name;
  if not found then
    raise exception using errcode = 'GN030', message = format('no feed consumer is named %L', consumer_name);
  end if;
end $$;
comment on function gnomon.feed_unregister(text) is 'Drops a change-feed consumer and its position.';

-- One page of events after the consumer's acknowledged position: whole transactions, at most max_events rows
-- (a transaction larger than a page is split, and the next page resumes inside it). Each row carries the position
-- to acknowledge once it is handled. A page that skipped only empty batches returns one 'h' (heartbeat) row.
-- Row images are json (compact text); they were jsonb before, hence the drop.
drop function if exists gnomon.feed_read(text, integer);
create function gnomon.feed_read(consumer_name text, max_events integer default 1000)
returns table (event_position text, tick_id bigint, tick_at timestamptz, xid xid8, txn_key bigint, vid bigint,
               table_name text, op text, key json, before json, after json)
-- No JIT: a page's queries run in milliseconds, and their probes' costs would otherwise buy 50 ms of compilation.
-- Memory enough to order a page of 10,000 events with their images without spilling to disk. No nested loops: every
-- join here is a set of versions against a set of versions, and a row estimate of 1 (the planner cannot see how
-- many versions a snapshot range holds) otherwise turns one into a million comparisons.
language plpgsql set jit = off set work_mem = '32MB' set enable_nestloop = off as $$
declare
  c gnomon.consumer := gnomon.consumer_row(consumer_name);
  latest bigint;
  t bigint; tk bigint; v bigint;
  prev pg_snapshot; cur pg_snapshot; cur_id bigint; cur_at timestamptz;
  remaining integer;
  q_ids text; q_keys text; q_rows text;
  n integer;
  batch_left bigint;
  vids bigint[];
  tkeys bigint[];
  split xid8;
  xid_lo xid8; xid_hi xid8;
  b_xids xid8[]; b_tkeys bigint[]; b_ns bigint[];
  p_xids xid8[]; p_tkeys bigint[];
  i integer;
  n_first bigint;
  dups bigint[];
  recent xid8;
  emitted boolean := false;
  lag interval;
begin
  if max_events is null or max_events < 1 or max_events > 1000000 then
    raise exception using errcode = 'GN021', message = format('max_events must be between 1 and 1000000, got %s', max_events);
  end if;
  select max(k.tick_id) into latest from gnomon.tick k;
  t := c.tick_id; tk := c.txn_key; v := c.vid;
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
  -- the consumer's tables' change functions, three ways: versions only; versions with their keys; whole events
  select string_agg(format('select ch.xid, ch.vid from gnomon_t.%I($1, $2, $3, false) ch',
                           gnomon.object_name(tt.base_name, '_changes')), ' union all '),
         string_agg(format('select %L::text as table_name, ch.xid, ch.vid, ch.key::text as key from gnomon_t.%I($1, $2, $3, false) ch'
                           ' where ch.xid between $5 and $6',
                           format('%I.%I', tt.schema_name, tt.table_name), gnomon.object_name(tt.base_name, '_changes')), ' union all '),
         -- after: the live row when its xmin says this version's transaction wrote it last (one probe), unless that
         -- transaction wrote the key again ($8: found in the page; $9: the page ends inside it) or is too old for a
         -- 32-bit xmin to name it ($10); else the next version's image or the live row
         string_agg(format('select %L::text as table_name, ch.xid, ch.vid, ch.op, ch.key, ch.before,'
                           ' case when ch.xid >= $10 and ch.xid is distinct from $9 and not ch.vid = any ($8)'
                           ' then coalesce(ch.after_live, ch.after) else ch.after end as after'
                           ' from gnomon_t.%I($1, $2, $3, $4) ch where ch.vid = any ($5) and ch.xid between $15 and $16',
                           format('%I.%I', tt.schema_name, tt.table_name), gnomon.object_name(tt.base_name, '_changes')), ' union all ')
    into q_ids, q_keys, q_rows from gnomon.tracked_table tt where tt.table_id = any (c.table_ids);
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
    -- The batch's transactions in order (by their largest version key) with their sizes, at every page (a
    -- per-session cache of it lost a page now and then in FeedExactlyOnceIT; see docs/feed.md).
    execute format($q$
      select coalesce(array_agg(x.xid order by x.tkey), '{}'), coalesce(array_agg(x.tkey order by x.tkey), '{}'),
             coalesce(array_agg(x.n order by x.tkey), '{}')
        from (select u.xid, max(u.vid) as tkey, count(*) as n from (%s) u group by u.xid) x$q$, q_ids)
      into b_xids, b_tkeys, b_ns using prev, cur, c.start_snapshot;
    -- what is left of the transaction the position is inside, if any (it was larger than a page)
    i := array_position(b_tkeys, tk);
    n_first := null;
    if i is not null then
      execute format('select count(*) from (%s) u where u.xid = $4 and u.vid > $5', q_ids)
        into n_first using prev, cur, c.start_snapshot, b_xids[i], v;
    end if;
    -- the whole transactions after the position that fit in the page (or, on an empty page, the first one, split
    -- when it is larger than the page), and their versions after the position, in order
    select coalesce(array_agg(w.xid order by w.tkey) filter (where w.upto <= remaining or (w.k = 1 and not emitted)), '{}'),
           coalesce(array_agg(w.tkey order by w.tkey) filter (where w.upto <= remaining or (w.k = 1 and not emitted)), '{}'),
           min(w.xid) filter (where w.k = 1 and w.n > remaining and not emitted),
           coalesce(sum(w.n), 0)
      into p_xids, p_tkeys, split, batch_left
      from (select o.*, sum(o.n) over (order by o.tkey) as upto, row_number() over (order by o.tkey) as k
              from (select b.xid, b.tkey, case when b.tkey = tk then n_first else b.n end as n
                      from unnest(b_xids, b_tkeys, b_ns) b(xid, tkey, n)
                     where b.tkey > tk or (b.tkey = tk and n_first > 0)) o) w;
    vids := '{}'; tkeys := '{}'; xid_lo := null; xid_hi := null;
    if cardinality(p_xids) > 0 then
      select min(x), max(x) into xid_lo, xid_hi from unnest(p_xids) x;
      execute format($q$
        select coalesce(array_agg(s.vid order by s.tkey, s.vid), '{}'), coalesce(array_agg(s.tkey order by s.tkey, s.vid), '{}')
          from (select u.vid, p.tkey
                  from unnest($4::xid8[], $5::bigint[]) p(xid, tkey)
                  join (%s) u on u.xid = p.xid
                 where u.xid between $8 and $9 and (p.tkey, u.vid) > ($6, $7)
                 order by p.tkey, u.vid limit $10) s$q$, q_ids)
        into vids, tkeys using prev, cur, c.start_snapshot, p_xids, p_tkeys, tk, v, xid_lo, xid_hi, remaining;
    end if;
    n := cardinality(vids);
    if n > 0 then
      -- the page's versions whose key their own transaction writes again later in the page: their after image is
      -- the next version's, never the live row's (rare; found without images, by key)
      dups := '{}';
      if c.with_images and n > 1 then
        execute format($q$
          select coalesce(array_agg(d.vid), '{}') from (
            select u.vid, lead(u.xid) over (partition by u.table_name, u.key collate "C" order by u.vid) = u.xid as again
              from (%s) u where u.vid = any ($4)) d
           where d.again$q$, q_keys)
          into dups using prev, cur, c.start_snapshot, vids, xid_lo, xid_hi;
      end if;
      -- the picked versions with their images: the filters on vid and on the picked transactions' xids reach each
      -- table's scan (the _changes functions are inlined), so images are built for this page's versions only, and
      -- a page smaller than its batch reads only the part of the batch's history its transactions span
      return query execute format($q$
        select case when p.i = $6 and $6 = $11 then format('v1:%%s:0:0', $12) else format('v1:%%s:%%s:%%s', $13, p.tkey, p.vid) end,
               $12, $14, u.xid, p.tkey, p.vid, u.table_name,
               case u.op when 'I' then 'c' when 'U' then 'u' else 'd' end, u.key, u.before, u.after
          from unnest($5::bigint[], $7::bigint[]) with ordinality p(vid, tkey, i)
          join (%s) u on u.vid = p.vid
         order by p.i$q$, q_rows)
        using prev, cur, c.start_snapshot, c.with_images, vids, n, tkeys, dups, split, recent, batch_left, cur_id, t, cur_at,
              xid_lo, xid_hi;
      emitted := true;
    end if;
    remaining := remaining - n;
    -- did this page take the rest of the batch? Then the next one starts after it.
    if batch_left > n then
      exit; -- page full inside this batch
    end if;
    t := cur_id; tk := 0; v := 0;
  end loop;
  if not emitted and t > c.tick_id then
    -- only empty batches: a heartbeat row moves the position past them
    return query select format('v1:%s:0:0', t), t, (select k.tick_at from gnomon.tick k where k.tick_id = t),
                        null::xid8, null::bigint, null::bigint, null::text, 'h'::text, null::json, null::json, null::json;
  end if;
end $$;
comment on function gnomon.feed_read(text, integer) is
  'A page of change events after the consumer''s acknowledged position; acknowledge with gnomon.feed_ack(name, event_position).';

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
  p record := gnomon.parse_position(event_position);
  a record := p;
begin
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
  if p.tick_id > coalesce((select max(k.tick_id) from gnomon.tick k), 0) then
    raise exception using errcode = 'GN033', message = format('position %s is after the last tick: no page delivered it', event_position);
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

-- Tables tracked before the feed's images became json keep change functions that return jsonb: regenerate them.
do $$
declare
  id integer;
begin
  for id in select tt.table_id from gnomon.tracked_table tt
             where not exists (select 1 from pg_proc f
                                where f.pronamespace = 'gnomon_t'::regnamespace
                                  and f.proname = gnomon.object_name(tt.base_name, '_changes')
                                  and 'after_live' = any (f.proargnames)) loop
    perform gnomon.install_objects(id);
  end loop;
end $$;
