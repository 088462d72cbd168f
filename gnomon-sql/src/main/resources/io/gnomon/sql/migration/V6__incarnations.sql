-- Gnomon catalog, version 6: server incarnations, so coordinates survive crashes and failovers exactly; feed consumers
-- of a branch.
--
-- A coordinate is a snapshot: it counts every transaction below its xmax and not in its in-progress list as ended.
-- After a crash (of the server, or of one backend, which makes PostgreSQL recover from its WAL just the same) or a
-- failover, the WAL that had not reached disk or the standby is gone, and with it the end records of transactions
-- that had rolled back (or committed asynchronously) just before: the server then hands their transaction ids to new
-- transactions, and a read as of a coordinate from before the fault would count those new transactions in.
-- Every WAL-losing event discards PostgreSQL's cumulative statistics, so the statistics' reset time identifies the
-- stretch of WAL a coordinate belongs to: its incarnation. A coordinate now carries its incarnation; one from an
-- earlier incarnation is readable when a tick of that incarnation, recorded after it, survived (the tick's commit
-- record reached disk, so every WAL record written before it did too).

alter table gnomon.tick add column incarnation bigint;
comment on column gnomon.tick.incarnation is
  'The server incarnation the tick was recorded in (gnomon.incarnation()); null for ticks recorded before catalog version 6.';
create index tick_incarnation_idx on gnomon.tick (incarnation, tick_id) where incarnation is not null;

-- What survives of each earlier incarnation, kept when its ticks are pruned.
create table gnomon.incarnation (
    incarnation  bigint primary key,
    -- the largest xmax of a tick of this incarnation that survived: coordinates with an xmax at or below it are exact
    anchor_xmax  xid8,
    first_seen   timestamptz not null default clock_timestamp(),
    last_seen    timestamptz not null default clock_timestamp()
);
comment on table gnomon.incarnation is
  'Server incarnations Gnomon has seen (one per WAL-losing restart or failover) and, for each, how far its coordinates stay readable.';
grant select on gnomon.incarnation to public;

-- Change-feed consumers of a branch's writes.
alter table gnomon.consumer add column branch_id integer;
comment on column gnomon.consumer.branch_id is 'The branch whose writes the consumer follows; null for main.';

create or replace function gnomon.catalog_version() returns integer language sql immutable as 'select 6';
