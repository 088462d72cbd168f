-- Gnomon catalog, version 2: the change feed's consumers.

create table gnomon.consumer (
    consumer_name   text primary key check (length(consumer_name) between 1 and 200),
    table_ids       integer[] not null,
    with_images     boolean not null default true,
    -- position: every batch up to tick_id is delivered and acknowledged, and in the next batch every version
    -- ordered at or before (txn_key, vid); (0, 0) when none of it is
    tick_id         bigint not null,
    txn_key         bigint not null default 0,
    vid             bigint not null default 0,
    -- versions visible at the start coordinate are never delivered (a consumer started at a coordinate)
    start_snapshot  pg_snapshot not null,
    max_lag         interval,
    registered_at   timestamptz not null default clock_timestamp(),
    acked_at        timestamptz,
    expired_at      timestamptz,
    expired_reason  text
);
comment on table gnomon.consumer is 'Change-feed consumers and their acknowledged positions, written by gnomon.feed_* functions.';
grant select on gnomon.consumer to public;

create or replace function gnomon.catalog_version() returns integer language sql immutable as 'select 2';
