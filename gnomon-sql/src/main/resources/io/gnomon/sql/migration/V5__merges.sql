-- Gnomon catalog, version 5: merges (strategies, merges, conflicts, resolutions).
-- (Version 4 is reserved for the change feed.)

-- Declared merge strategies, per tracked table and column; column '*' is the table's default for its other columns.
create table gnomon.merge_strategy (
    table_id        integer not null references gnomon.tracked_table on delete cascade,
    column_name     name not null,
    strategy        text not null,
    -- json: {"arrays_as_sets": bool, "max_depth": int, "max_nodes": int}
    options         jsonb,
    custom_function regprocedure,
    primary key (table_id, column_name)
);
comment on table gnomon.merge_strategy is 'Merge strategies declared per table and column (''*'': the table''s default), written by gnomon.set_merge_strategy().';

-- Row-level rules per table: what a delete against an update does.
create table gnomon.merge_rule (
    table_id          integer primary key references gnomon.tracked_table on delete cascade,
    delete_vs_update  text not null default 'conflict' check (delete_vs_update in ('conflict', 'delete_wins', 'update_wins'))
);
comment on table gnomon.merge_rule is 'Row-level merge rules per table, written by gnomon.set_merge_rule().';

-- One row per merge run: what was merged (source into target), from which base, and its outcome.
create table gnomon.merge (
    merge_id       bigint generated always as identity primary key,
    source_name    text not null,
    target_name    text not null,
    -- branch ids, 0 for main: a pair keeps its merge history through renames
    source_id      integer not null,
    target_id      integer not null,
    base           gnomon.point not null,
    theirs         gnomon.point not null,
    status         text not null check (status in ('applied', 'nothing', 'conflicts', 'dry_run')),
    adds           bigint not null default 0,
    modifications  bigint not null default 0,
    deletes        bigint not null default 0,
    conflicts      bigint not null default 0,
    merge_xid      xid8 not null,
    merged_at      timestamptz not null default clock_timestamp()
);
create index merge_pair_idx on gnomon.merge (least(source_id, target_id), greatest(source_id, target_id), merge_id);
comment on table gnomon.merge is 'Merge runs: source into target, base and theirs points, status (applied, nothing, conflicts, dry_run) and counts; merge_xid is the transaction whose versions the merge wrote.';

-- The conflicts of a merge run: a column both sides changed that its strategy could not merge, or a row deleted on
-- one side and updated on the other (column_name '').
create table gnomon.merge_conflict (
    merge_id     bigint not null references gnomon.merge on delete cascade,
    table_id     integer not null,
    key          jsonb not null,
    column_name  name not null,
    kind         text not null check (kind in ('column', 'delete_vs_update', 'update_vs_delete')),
    base         jsonb,
    ours         jsonb,
    theirs       jsonb,
    strategy     text,
    reason       text not null,
    primary key (merge_id, table_id, key, column_name)
);
comment on table gnomon.merge_conflict is 'Conflicts of merge runs; resolve them with gnomon.merge_resolve() and merge again.';

-- Declared resolutions, per pair, key and column, for the exact conflict (base, ours, theirs) they answer: a later
-- merge of the pair that meets the same conflict applies them; a conflict whose values changed since is reported again.
create table gnomon.merge_resolution (
    source_id    integer not null,
    target_id    integer not null,
    table_id     integer not null references gnomon.tracked_table on delete cascade,
    key          jsonb not null,
    column_name  name not null,
    base         jsonb,
    ours         jsonb,
    theirs       jsonb,
    choice       text not null check (choice in ('ours', 'theirs', 'base', 'value')),
    value        jsonb,
    declared_at  timestamptz not null default clock_timestamp(),
    primary key (source_id, target_id, table_id, key, column_name)
);
comment on table gnomon.merge_resolution is 'Resolutions declared for merge conflicts, applied by the next merge of the same pair.';

grant select on gnomon.merge_strategy, gnomon.merge_rule, gnomon.merge, gnomon.merge_conflict, gnomon.merge_resolution to public;

create or replace function gnomon.catalog_version() returns integer language sql immutable as 'select 5';
