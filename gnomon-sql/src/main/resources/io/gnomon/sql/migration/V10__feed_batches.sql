-- Gnomon catalog, version 10: the change feed's batch orders, computed once per batch instead of at every page.
--
-- A batch never changes once its tick exists, so the order of its transactions (by largest version key) and their
-- sizes are the same for every page and every consumer of the same tables. gnomon.feed_read computes them from the
-- history the first time a page of the batch is read and keeps them here; the batch's later pages (pages smaller than
-- the batch) and other consumers of the same tables read them from this row instead of scanning the batch again.
-- Rows go with their tick (gnomon.maintain deletes ticks no consumer needs).

create table gnomon.feed_batch (
    tick_id     bigint not null references gnomon.tick (tick_id) on delete cascade,
    -- whose writes: 0 for main, else the branch (a branch's batch holds the writes made on it)
    branch_id   integer not null,
    -- the tracked tables whose versions the batch holds, ascending: a consumer of other tables has batches of its own
    table_ids   integer[] not null,
    -- the batch's transactions ordered by their largest version key: their xids, those keys, and the number of
    -- versions up to and including each (a running sum), so that a page is chosen by two binary searches
    txn_xid     xid8[] not null,
    txn_key     bigint[] not null,
    txn_upto    bigint[] not null,
    -- the same transactions ordered by xid, with their keys: the lookup a page's scan uses (width_bucket)
    xid_sorted  xid8[] not null,
    key_by_xid  bigint[] not null,
    primary key (tick_id, branch_id, table_ids)
);
comment on table gnomon.feed_batch is
  'The change feed''s batches in order (transactions by largest version key, with their sizes), written once per batch, branch and set of tables by gnomon.feed_read.';
grant select on gnomon.feed_batch to public;

create or replace function gnomon.catalog_version() returns integer language sql immutable as 'select 10';
