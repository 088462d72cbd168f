-- Gnomon catalog, version 3: branches.
-- A branch is one row here; the rows written on it live in per-table branch tables (gnomon.install_branch_objects).

-- Branch ids: logged branches get positive ids, scratch (unlogged) branches negative ones, so the per-table branch
-- tables are range-partitioned on the id into a logged and an unlogged partition. Ids are never reused.
create sequence gnomon.branch_seq;
comment on sequence gnomon.branch_seq is 'Branch ids (scratch branches take the negated value).';

-- A point to read a table at: main at main_snap (null: now) under the branch levels chain (nearest first), each
-- level read at its snapshot in snaps (null: now). A branch's own point is (its chain, its snaps, its main_snap).
create type gnomon.point as (chain integer[], snaps pg_snapshot[], main_snap pg_snapshot);
comment on type gnomon.point is 'Where to read: branch levels (nearest first) with the snapshot each is read at, then main at main_snap; null snapshots mean now.';

create table gnomon.branch (
    branch_id    integer primary key check (branch_id <> 0),
    branch_name  text not null unique check (length(branch_name) between 1 and 200 and branch_name <> 'main'
                                             and branch_name !~ '[[:cntrl:]]'),
    -- null: forked from main
    parent_id    integer references gnomon.branch (branch_id),
    -- the parent's state this branch starts from
    cutoff       pg_snapshot not null,
    -- the levels a read goes through: this branch, its parent, ... (nearest first), and the snapshot each is read
    -- at: null for this branch (now), the child's cutoff for every ancestor; main is read at main_snap
    chain        integer[] not null,
    snaps        pg_snapshot[] not null,
    main_snap    pg_snapshot not null,
    created_xid  xid8 not null,
    created_at   timestamptz not null default clock_timestamp()
);
create index branch_parent_idx on gnomon.branch (parent_id) where parent_id is not null;
comment on table gnomon.branch is 'Branches: one row each, written by gnomon.branch_create(); a negative id marks a scratch (unlogged) branch.';

-- Scratch branches that still hold their rows: unlogged, so a crash (or a failover) empties it together with the
-- scratch branch tables, and a scratch branch missing here is reported as lost instead of read as empty.
create unlogged table gnomon.scratch_alive (branch_id integer primary key);
comment on table gnomon.scratch_alive is 'Scratch branches whose unlogged rows survived: emptied by a crash, like the rows themselves.';

grant select on gnomon.branch, gnomon.scratch_alive to public;

create or replace function gnomon.catalog_version() returns integer language sql immutable as 'select 3';
