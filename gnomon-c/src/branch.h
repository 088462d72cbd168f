/*
 * branch.h: what branch.c lends the executor node of branch_scan.c (the same steps as gnomon.branch_pick_c).
 */
#ifndef GNOMON_BRANCH_H
#define GNOMON_BRANCH_H

#include "postgres.h"

#define GN_MAX_KEYS INDEX_MAX_KEYS

/* An index probed by key (and a trailing column): its OID and, per column, the procedure of the comparison used. */
typedef struct ProbeIndex
{
	Oid			heap;
	Oid			index;
	RegProcedure procs[GN_MAX_KEYS + 1];	/* equality per key column; the trailing column's (see users) */
	Oid			colls[GN_MAX_KEYS + 1];
} ProbeIndex;

/* What the branch read needs to know about one tracked table, cached per backend, dropped on relcache
 * invalidation of any relation it names (a partition roll, a re-created branch table, ALTER TABLE). */
typedef struct BranchTable
{
	int32		table_id;		/* hash key */
	bool		valid;
	int			nkeys;
	uint64		track_xid;		/* the xid8 that tracked the table */
	ProbeIndex	b[2];			/* branch rows: [0] logged partition, [1] scratch; primary key (key, g_branch) */
	ProbeIndex	bh[2];			/* branch history: (key, g_branch, g_vid) */
	int			nh;
	ProbeIndex *h;				/* main's history partitions: (key, g_xid), the trailing proc is >= (in
								 * TopMemoryContext) */
	Oid			h_parent;
	Oid			main_relid;		/* the tracked table, and its branch view: a reader needs SELECT on one of them */
	Oid			view_relid;
	/* attribute numbers, by name: the same in both partitions of a branch table (created with the parent) */
	AttrNumber	b_branch, b_xid, b_cxid, b_del;
	AttrNumber	bh_vid, bh_xid;
	AttrNumber *h_vid,
			   *h_xid;			/* per partition (in TopMemoryContext) */
} BranchTable;

/* The selected branch's point, read once per statement. */
typedef struct BranchPoint
{
	int32		branch_id;
	int			nlevels;
	int32	   *chain;
	Datum	   *snaps;			/* pg_snapshot, or 0 for a level read now */
	Datum		main_snap;
	uint64		main_xmin;
	Datum		chain_array;	/* the chain as int4[] */
} BranchPoint;

/* Where one key's state is on the selected branch. */
typedef struct KeyState
{
	int32		level_branch;	/* the level holding the key (0: none) */
	bool		level_current;	/* its branch row is what the level's snapshot sees */
	int64		bh_vid;			/* else: the branch history row holding the image (-1: none) */
	int64		main_vid;		/* no level: main's first version the main snapshot does not see (-1: none) */
} KeyState;

/* A tracked table's branch relations and probe indexes (cached per backend) */
extern BranchTable *gnomon_branch_table(int32 table_id);

/* The selected branch's point (cached per backend, keyed by the snapshot); raises GN054, GN050, GN053. It may be the
 * cache's own copy, valid until the next point is loaded: run no SQL while holding it. */
extern BranchPoint *gnomon_branch_point(MemoryContext mcxt);

/* Which place holds a key's state on the selected branch (direct index probes under the active snapshot) */
extern void gnomon_branch_resolve_key(BranchTable *t, BranchPoint *p, Datum *keys, KeyState *st);

/* Its two halves: whether a level of the chain holds the key (and where its state is); else main's first version
 * since the cutoff that the main snapshot does not see (st->main_vid) */
extern bool gnomon_branch_resolve_levels(BranchTable *t, BranchPoint *p, Datum *keys, KeyState *st);
extern void gnomon_branch_resolve_main(BranchTable *t, BranchPoint *p, Datum *keys, KeyState *st);

extern bool gnomon_branch_visible(uint64 xid, Datum snap);

/* Runs SQL expected to raise the error the read must report */
extern void gnomon_branch_raise(const char *sql, int32 arg);

/* branch_scan.c: registers the executor node and its planner hook (from _PG_init) */
extern void gnomon_branch_scan_init(void);

#endif
