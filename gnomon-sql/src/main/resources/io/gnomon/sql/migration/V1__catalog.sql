-- Gnomon catalog, version 1: the tables that describe what Gnomon tracks.
-- Functions and views live in the repeatable R__ files; this file never depends on them.

-- Flyway creates schema gnomon itself (it keeps its history table there), before this script runs.
comment on schema gnomon is 'Gnomon: versioned tables. Functions users call and the catalog.';

-- Generated per-table objects (history tables, checkpoints, read functions) live here.
-- Their only author is gnomon.track(); never edit them by hand.
create schema if not exists gnomon_t;
comment on schema gnomon_t is 'Gnomon generated per-table objects: history, checkpoints, as-of functions. Written only by gnomon.track().';

-- The registry of Gnomon's own SQLSTATEs, mirrored by the Java enum io.gnomon.sql.GnomonSqlState.
create table gnomon.error_code (
    sqlstate   char(5) primary key check (sqlstate ~ '^GN[0-9A-Z]{3}$'),
    name       text not null unique,
    retryable  boolean not null default false,
    meaning    text not null
);

create table gnomon.tracked_table (
    table_id        integer generated always as identity primary key,
    relid           oid not null unique,
    schema_name     name not null,
    table_name      name not null,
    base_name       name not null unique,
    key_columns     name[] not null,
    -- the columns as last installed: [{"name":…, "type":…, "typid":…, "attnum":…}]
    columns         jsonb not null,
    history_table   name not null,
    checkpoint_table name not null,
    trigger_function name not null,
    key_change_function name not null,
    as_of_function  name not null,
    track_xid       xid8 not null,
    track_snapshot  pg_snapshot not null,
    tracked_at      timestamptz not null default clock_timestamp(),
    unique (schema_name, table_name)
);
comment on table gnomon.tracked_table is 'One row per tracked table, written by gnomon.track() and removed by gnomon.untrack().';

-- Version keys: one sequence for every tracked table, so version keys also order the changes of different tables
-- (a transaction that waited for another's row lock draws larger keys than everything the other wrote).
-- It steps by 1024: each nextval reserves a block of keys for one statement's versions, so keys are sparse.
create sequence gnomon.version_seq increment by 1024;
comment on sequence gnomon.version_seq is 'Version keys (g_vid) of every history table.';

-- Ticks: coordinates recorded at a fixed interval, mapping wall-clock time to coordinates.
create table gnomon.tick (
    tick_id   bigint generated always as identity primary key,
    tick_at   timestamptz not null,
    snapshot  pg_snapshot not null
);
create index tick_at_idx on gnomon.tick (tick_at);
comment on table gnomon.tick is 'Heartbeat: one coordinate per tick, written by gnomon.tick().';

-- Checkpoints: a materialised state of one tracked table at a coordinate.
create table gnomon.checkpoint (
    checkpoint_id bigint generated always as identity primary key,
    table_id      integer not null references gnomon.tracked_table on delete cascade,
    snapshot      pg_snapshot not null,
    snapshot_xmin xid8 not null,
    created_at    timestamptz not null default clock_timestamp(),
    row_count     bigint
);
create index checkpoint_table_idx on gnomon.checkpoint (table_id, snapshot_xmin);
comment on table gnomon.checkpoint is 'Materialised states of tracked tables, written by gnomon.checkpoint().';

-- The catalog version the Java API expects; a V migration that changes the catalog replaces it.
create function gnomon.catalog_version() returns integer language sql immutable as 'select 1';
comment on function gnomon.catalog_version() is 'The version of the installed Gnomon catalog.';

-- PostgreSQL has no BRIN operator class for xid8; history is written in roughly xid order, so a BRIN index
-- on the writing xid finds "what changed since a coordinate" at almost no cost on the write path.
create operator family gnomon.xid8_minmax_ops using brin;
create operator class gnomon.xid8_minmax_ops default for type xid8 using brin family gnomon.xid8_minmax_ops as
  operator 1 < (xid8, xid8),
  operator 2 <= (xid8, xid8),
  operator 3 = (xid8, xid8),
  operator 4 >= (xid8, xid8),
  operator 5 > (xid8, xid8),
  function 1 brin_minmax_opcinfo(internal),
  function 2 brin_minmax_add_value(internal, internal, internal, internal),
  function 3 brin_minmax_consistent(internal, internal, internal),
  function 4 brin_minmax_union(internal, internal, internal);

-- Readers need the catalog to resolve coordinates; it holds names and snapshots, never row data.
-- History tables are granted one by one by gnomon.track(), following the tracked table's own grants.
grant usage on schema gnomon, gnomon_t to public;
grant select on gnomon.error_code, gnomon.tracked_table, gnomon.tick, gnomon.checkpoint to public;
