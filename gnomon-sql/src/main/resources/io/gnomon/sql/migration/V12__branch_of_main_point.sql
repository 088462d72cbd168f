-- Gnomon catalog, version 12: a branch of main stores no chain.
--
-- A branch's point is the levels it reads through (chain, nearest first), the snapshot each level is read at (snaps)
-- and main's snapshot (main_snap). For a branch of main these say nothing its row does not already hold: the chain is
-- {branch_id}, the snapshots {null} (the branch is read now), main's snapshot the cutoff. Stored, they were 75 of the
-- row's 176 bytes, written (and logged) by every create. From this version a branch of main leaves all three null, and
-- every reader takes a branch's point from gnomon.branch_point(b), the one definition of it (R__08_branches.sql; the C
-- module's load_point in gnomon-c/src/branch.c reads the row the same way). A branch of a branch stores them as before.
alter table gnomon.branch alter column chain drop not null,
                          alter column snaps drop not null,
                          alter column main_snap drop not null;
comment on column gnomon.branch.chain is
  'The levels a read goes through, nearest first (this branch, its parent, ...); null for a branch of main: {branch_id}. Read it through gnomon.branch_point().';
comment on column gnomon.branch.snaps is
  'The snapshot each level of chain is read at (null: now, for the branch itself); null for a branch of main: {null}. Read it through gnomon.branch_point().';
comment on column gnomon.branch.main_snap is
  'The snapshot main is read at; null for a branch of main: its cutoff. Read it through gnomon.branch_point().';

-- the branches of main created before this version: the same point, in the short form
update gnomon.branch set chain = null, snaps = null, main_snap = null
 where parent_id is null and chain is not null;

create or replace function gnomon.catalog_version() returns integer language sql immutable as 'select 12';
