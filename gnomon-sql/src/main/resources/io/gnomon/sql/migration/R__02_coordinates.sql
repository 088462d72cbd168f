-- Coordinates and ticks.
-- A coordinate is a PostgreSQL snapshot: past reads through it are exact. Its text form is
-- 'v2:' || incarnation || ':' || snapshot, for example 'v2:1796130898995571:7420:7424:7421,7423'; the older form
-- 'v1:' || snapshot (catalog versions before 6) is still read, through the same crash guard: it names no incarnation,
-- so it is guarded as one of the earliest incarnation Gnomon recorded (see gnomon.parse_coordinate()).
--
-- The incarnation guards coordinates across crashes and failovers (catalog version 6 explains why): after one, the
-- server may give new transactions the ids of transactions that had ended before a coordinate without their WAL
-- surviving. A coordinate of the current incarnation is read directly; one of an earlier incarnation only when a tick
-- of that incarnation recorded after it survived (gnomon.incarnation.anchor_xmax), and otherwise refused with GN013.

-- The current server incarnation: the time PostgreSQL last reset its checkpointer statistics, in microseconds. The
-- server discards its statistics whenever it recovers from a crash (of the postmaster or of any backend) and a standby
-- starts with its own, so the value changes with every event that can lose WAL; a clean restart keeps it (nothing is
-- lost then). pg_stat_reset_shared('bgwriter') also changes it: coordinates from before stay readable up to the last
-- tick, like after a crash.
create or replace function gnomon.incarnation() returns bigint
language sql stable parallel safe as $$
  select (extract(epoch from pg_stat_get_bgwriter_stat_reset_time()) * 1000000)::bigint
$$;
comment on function gnomon.incarnation() is
  'The current server incarnation (changes with every crash recovery or failover); coordinates carry it.';

-- pg_current_snapshot() never lists the calling transaction's own xid as in progress, so once that transaction
-- commits, a read as of the snapshot would see all its writes, even those made after the capture: when the caller
-- has an xid, it is added to the in-progress list (the history checker found this). The text is built by an
-- immutable helper so that gnomon.coordinate() stays a plain expression PostgreSQL inlines: called in a statement, it
-- then takes that statement's snapshot, not one of its own.
-- (The list is built by a function of its own: a sub-select in snapshot_text's body kept PostgreSQL from inlining
-- it, and gnomon.coordinate() then ran it as a SQL function, planned on every call: four times select 1.)
-- An own xid at or past xmax is invisible to the snapshot already: the snapshot's own text.
create or replace function gnomon.snapshot_text_own(snap pg_snapshot, own xid8) returns text
language sql immutable parallel safe as $$
  select case when own >= pg_snapshot_xmax(snap) then snap::text
              else least(pg_snapshot_xmin(snap), own)::text || ':' || pg_snapshot_xmax(snap)::text || ':'
                   || (select string_agg(v::text, ',' order by v) from (select pg_snapshot_xip(snap) as v union select own) u)
              end
$$;
comment on function gnomon.snapshot_text_own(pg_snapshot, xid8) is 'Internal: a snapshot''s text with an own (not null) xid added to its in-progress list when it is below the snapshot''s xmax.';

create or replace function gnomon.snapshot_text(snap pg_snapshot, own xid8) returns text
language sql immutable parallel safe as $$
  -- (an own xid at or past xmax is invisible to the snapshot already)
  select case when own is null or own >= pg_snapshot_xmax(snap) then snap::text
              else gnomon.snapshot_text_own(snap, own) end
$$;
comment on function gnomon.snapshot_text(pg_snapshot, xid8) is 'Internal: a snapshot''s text with an own xid added to its in-progress list.';

-- The text of a coordinate of the current incarnation, from a snapshot's text: the one place the form is written.
create or replace function gnomon.coordinate_text(snapshot text) returns text
language sql stable parallel safe as $$
  select 'v2:' || gnomon.incarnation()::text || ':' || snapshot
$$;
comment on function gnomon.coordinate_text(text) is
  'Internal: the coordinate of the current incarnation with this snapshot text (committed snapshots need no other guard).';

-- Written for the cost of its expression: PostgreSQL inlines it into the caller's statement and builds the
-- expression's state on every execution, at about 1,500 instructions a node (function lookup and permission check
-- each). So the own-xid case is one call of snapshot_text_own (not gnomon.snapshot_text, whose inlined CASE would add
-- its nodes here too), and the text is one format() rather than three concatenations and a cast: 48,800 instructions
-- per prepared `select gnomon.coordinate()` against 54,800 before and 32,200 for `select 1` (callgrind, session 16).
-- coordinate_text() is the same text for a given snapshot text (CoordinatesIT compares them).
create or replace function gnomon.coordinate() returns text
language sql volatile parallel safe as $$
  select format('v2:%s:%s', gnomon.incarnation(),
                case when pg_current_xact_id_if_assigned() is null then pg_current_snapshot()::text
                     else gnomon.snapshot_text_own(pg_current_snapshot(), pg_current_xact_id_if_assigned()) end)
$$;
comment on function gnomon.coordinate() is
  'The coordinate of the current statement (READ COMMITTED) or transaction (REPEATABLE READ, SERIALIZABLE), as text: store it and read as of it later. It does not include the calling transaction''s own uncommitted writes.';

-- Parses the text form; raises GN010 on anything else, and GN013 for a coordinate of an earlier incarnation taken
-- after the last tick of that incarnation that survived.
create or replace function gnomon.parse_coordinate(coordinate text) returns pg_snapshot
language plpgsql stable strict parallel safe as $$
declare
  parts text[];
  xmin numeric; xmax numeric; prev numeric;
  x text;
  inc bigint;
  anchor xid8;
begin
  if coordinate !~ '^(v1|v2:[0-9]{1,20}):[0-9]{1,19}:[0-9]{1,19}:([0-9]{1,19}(,[0-9]{1,19})*)?$' then
    raise exception using errcode = 'GN010',
      message = format('malformed coordinate %L: it must have the form v2:incarnation:xmin:xmax:xip,...', left(coordinate, 100)),
      hint = 'Pass back a value returned by gnomon.coordinate() unchanged.';
  end if;
  parts := string_to_array(coordinate, ':');
  if parts[1] = 'v2' then
    inc := parts[2]::numeric;
    parts := parts[2:];
  else
    -- A v1 coordinate does not say which incarnation it was captured in. Every transaction of a later incarnation has
    -- an id above the anchor of each earlier one (the anchor's tick survived, so its xid was never reused), so one
    -- with an xmax at or below the earliest recorded incarnation's anchor was captured before that tick (or before
    -- Gnomon recorded incarnations at all): it is read as one of the earliest incarnation, refused above its anchor,
    -- and read as before while that incarnation is still the current one (no crash or failover since) or none was
    -- recorded yet.
    select i.incarnation into inc from gnomon.incarnation i order by i.first_seen, i.incarnation limit 1;
  end if;
  xmin := parts[2]::numeric; xmax := parts[3]::numeric; prev := xmin - 1;
  if xmin < 1 or xmax < xmin or xmax > 9223372036854775807 then
    raise exception using errcode = 'GN010',
      message = format('malformed coordinate %L: it needs 1 <= xmin <= xmax', left(coordinate, 100)),
      hint = 'Pass back a value returned by gnomon.coordinate() unchanged.';
  end if;
  foreach x in array coalesce(string_to_array(nullif(parts[4], ''), ','), '{}') loop
    if x::numeric <= prev or x::numeric >= xmax then
      raise exception using errcode = 'GN010',
        message = format('malformed coordinate %L: in-progress transactions must ascend within [xmin, xmax)', left(coordinate, 100)),
        hint = 'Pass back a value returned by gnomon.coordinate() unchanged.';
    end if;
    prev := x::numeric;
  end loop;
  if inc is not null and inc <> gnomon.incarnation() then
    select i.anchor_xmax into anchor from gnomon.incarnation i where i.incarnation = inc;
    if anchor is null or xmax > anchor::text::numeric then
      raise exception using errcode = 'GN013',
        message = format('coordinate %s was captured before a crash or failover of the server, after the last tick that survived it',
                         left(coordinate, 100)),
        -- (format() turns a NULL argument into an empty string, so the case picks the detail)
        detail = case when parts[1] <> 'v1' then '' else
                   'A v1 coordinate does not say which incarnation it was captured in, so it is read as one of the earliest '
                   || 'incarnation Gnomon recorded, ' || inc || '. ' end
               || coalesce(case when anchor is not null then
                          format('Coordinates of that incarnation are readable up to xmax %s, the last tick recorded before the fault. '
                                 || 'Transactions this coordinate counts as ended may have lost their WAL in the fault, and the server '
                                 || 'may have given their ids to later transactions, so no read as of it can be exact.', anchor) end,
                          'No tick of that incarnation survived the fault. Transactions this coordinate counts as ended may have '
                          || 'lost their WAL in it, and the server may have given their ids to later transactions, so no read as of '
                          || 'it can be exact.'),
        hint = 'Read as of an earlier coordinate (gnomon.coordinate_at(time) gives one that survived), and keep the ticker running: '
               || 'every coordinate captured before a tick that survives a crash stays readable.';
    end if;
  end if;
  return array_to_string(parts[2:4], ':')::pg_snapshot;
end $$;
comment on function gnomon.parse_coordinate(text) is 'Parses a coordinate''s text form into a pg_snapshot (GN010 when malformed, GN013 when a crash or failover made it inexact).';

-- (gnomon.coordinate_snapshot(text), the as-of reads' inlined parse before gnomon.read_snapshot, has no caller left)
drop function if exists gnomon.coordinate_snapshot(text);

-- Records a tick: a coordinate with its wall-clock time. Run by the Java ticker, or by any scheduler.
-- Ticks are serialised by an advisory lock taken before the snapshot, so tick ids and snapshots grow together:
-- every transaction a tick sees, every later tick sees too (the change feed cuts its batches on that).
create or replace function gnomon.tick() returns bigint
language plpgsql volatile security definer set search_path = pg_catalog, pg_temp as $$
declare
  id bigint;
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    raise exception using errcode = 'GN021',
      message = format('gnomon.tick() must run in READ COMMITTED, not %s', current_setting('transaction_isolation')),
      hint = 'Call it in its own transaction, or in a READ COMMITTED one: its snapshot must be taken after its lock.';
  end if;
  perform pg_advisory_xact_lock(7386, 1);
  -- a new statement, so a new snapshot, taken after the lock
  insert into gnomon.tick (tick_at, snapshot, incarnation) values (clock_timestamp(), pg_current_snapshot(), gnomon.incarnation())
    returning tick_id into id;
  -- The incarnation's anchor commits with the tick: once the tick survives a crash, so did every WAL record before it,
  -- and coordinates captured before the tick's snapshot stay exact (see gnomon.parse_coordinate()).
  insert into gnomon.incarnation as i (incarnation, anchor_xmax)
  select gnomon.incarnation(), pg_snapshot_xmax(k.snapshot) from gnomon.tick k where k.tick_id = id
  on conflict (incarnation) do update
    set anchor_xmax = greatest(i.anchor_xmax, excluded.anchor_xmax), last_seen = clock_timestamp();
  -- after the tick's snapshot: the feed's consumers find the versions up to it through the histories' BRIN indexes,
  -- which see only summarized ranges
  perform gnomon.feed_summarize();
  return id;
end $$;
comment on function gnomon.tick() is 'Records a tick (a coordinate and its wall-clock time) and returns its id. Call it every second from the Java ticker, cron or pg_cron.';

-- The coordinate of the last tick at or before a timestamp.
create or replace function gnomon.coordinate_at(at timestamptz) returns text
language plpgsql stable strict as $$
declare
  snap pg_snapshot;
  inc bigint;
begin
  if at > clock_timestamp() then
    raise exception using errcode = 'GN011',
      message = format('timestamp %s is in the future', at),
      hint = 'Read as of a time that has passed.';
  end if;
  select t.snapshot, t.incarnation into snap, inc from gnomon.tick t where t.tick_at <= at order by t.tick_at desc limit 1;
  if snap is null then
    raise exception using errcode = 'GN012',
      message = format('no tick was recorded at or before %s', at),
      -- (format() gives a null argument as an empty string: concatenated, so that no tick at all reads as such)
      detail = coalesce('The first retained tick is at ' || (select min(tick_at) from gnomon.tick)::text || '.',
                        'No tick has been recorded yet.'),
      hint = 'Run the ticker (Gnomon.startTicker() or select gnomon.tick() every second) and read as of a later time.';
  end if;
  -- (ticks recorded before catalog version 6 have no incarnation: their coordinates keep the older form)
  return case when inc is null then 'v1:' else 'v2:' || inc::text || ':' end || snap::text;
end $$;
comment on function gnomon.coordinate_at(timestamptz) is 'The coordinate of the last tick recorded at or before the timestamp (GN011 in the future, GN012 before the first tick).';

-- The slow path of an as-of read's coordinate check, taken only when the fast one in the generated function fails
-- (a coordinate older than the tracking, or so recent that transactions it saw may still be invisible here).
-- Returns the snapshot when it is fine; raises GN021 (null), GN011 (future) or GN012 (too old), whose messages name
-- the coordinate as the reader gave it (its snapshot when the caller does not pass it).
drop function if exists gnomon.check_read(pg_snapshot, integer, text);
create or replace function gnomon.check_coordinate_read(coordinate text, snap pg_snapshot, table_id integer)
returns pg_snapshot
language plpgsql stable as $$
declare
  cur pg_snapshot := pg_current_snapshot();
  tt gnomon.tracked_table;
  shown text := coalesce(left(check_coordinate_read.coordinate, 100), format('with snapshot %s', snap));
begin
  if snap is null then
    raise exception using errcode = 'GN021', message = 'coordinate is null',
      hint = 'Pass a value returned by gnomon.coordinate() or gnomon.coordinate_at(timestamp).';
  end if;
  -- From the future: it saw a transaction that this reader cannot see yet.
  if pg_snapshot_xmax(snap) > pg_snapshot_xmax(cur)
     or exists (select 1 from pg_snapshot_xip(cur) x
                where x < pg_snapshot_xmax(snap) and pg_visible_in_snapshot(x, snap)) then
    raise exception using errcode = 'GN011',
      message = format('coordinate %s is in the future of this transaction', shown),
      hint = 'Read as of a coordinate captured before this transaction''s snapshot; in REPEATABLE READ, start the transaction after capturing it.';
  end if;
  select * into tt from gnomon.tracked_table t where t.table_id = check_coordinate_read.table_id;
  if not found then
    raise exception using errcode = 'GN001', message = format('table id %s is not tracked', table_id),
      hint = 'Track the table with gnomon.track(''schema.table'').';
  end if;
  if not pg_visible_in_snapshot(tt.track_xid, snap) then
    raise exception using errcode = 'GN012',
      message = format('coordinate %s is older than the history of %I.%I', shown, tt.schema_name, tt.table_name),
      detail = format('The table was tracked at %s; Gnomon has no history before that.', tt.tracked_at),
      hint = 'Read as of a coordinate captured after the table was tracked.';
  end if;
  return snap;
end $$;
comment on function gnomon.check_coordinate_read(text, pg_snapshot, integer) is
  'Internal: the full check of a coordinate (its text, for the messages, and its parsed snapshot) for an as-of read (GN011, GN012).';
-- (the C module's read path calls it with the snapshot only: its messages name the snapshot)
create or replace function gnomon.check_read(snap pg_snapshot, table_id integer) returns pg_snapshot
language sql stable as $$ select gnomon.check_coordinate_read(null, snap, table_id) $$;
comment on function gnomon.check_read(pg_snapshot, integer) is
  'Internal: the full check of a coordinate''s snapshot for an as-of read (GN011, GN012), as gnomon.check_coordinate_read without the text.';
-- The snapshot an as-of read uses, for the generated read functions to inline (one call per read, computed once in
-- the read's CTE). The fast path accepts a v2 coordinate of the current incarnation, in canonical form (digits without
-- leading zeros), later than the tracking (xmin above the tracking's xid, so that xid is visible) and older than every
-- transaction running now (xmax at or below the current snapshot's xmin, so nothing it saw can still be invisible
-- here): then the snapshot is cut from the text. Anything else goes through gnomon.parse_coordinate() and
-- gnomon.check_coordinate_read(), which accept it or raise GN010, GN011, GN012, GN013 or GN021.
-- Why it is written this way: in a prepared read's generic plan, PostgreSQL compiles every function call of this
-- expression again at each execution, so each one costs whether or not it runs; the form test is one unbounded
-- regular expression, the numbers are compared as xid8 (a text that passed the expression converts exactly; a number
-- too large for a transaction id converts to the largest xid8 in PostgreSQL 15, fails the comparison with the current
-- xmin and takes the slow path, which reports it as GN010), and the snapshot text is cast once. (The earlier form,
-- an inlined parse of the text plus a second test of the snapshot behind two OFFSET 0 subqueries, made three more
-- plan nodes and a longer expression; docs/performance.md, "Past reads", has the measurements.)
create or replace function gnomon.read_snapshot(coordinate text, track_xid xid8, table_id integer) returns pg_snapshot
language sql stable parallel safe as $$
  select case when coordinate ~ '^v2:[1-9][0-9]*:[1-9][0-9]*:[1-9][0-9]*:([1-9][0-9]*(,[1-9][0-9]*)*)?$'
                   and split_part(coordinate, ':', 2) = gnomon.incarnation()::text
                   and track_xid < split_part(coordinate, ':', 3)::xid8
                   and split_part(coordinate, ':', 3)::xid8 <= split_part(coordinate, ':', 4)::xid8
                   and split_part(coordinate, ':', 4)::xid8 <= pg_snapshot_xmin(pg_current_snapshot())
              then substr(coordinate, 5 + length(split_part(coordinate, ':', 2)))::pg_snapshot
              else gnomon.check_coordinate_read(coordinate, gnomon.parse_coordinate(coordinate), table_id) end
$$;
comment on function gnomon.read_snapshot(text, xid8, integer) is
  'Internal: the checked snapshot of a coordinate for an as-of read of a table, inlined by the generated read functions (errors as gnomon.parse_coordinate() and gnomon.check_coordinate_read()).';

drop function if exists gnomon.resolve_read(text, integer);
