/*
 * leaf_probe.h: equality probes of a btree index for many keys in a row, each starting at the leaf the last one
 * ended on when the key lies within it (keys given in the index's order hit it most of the time), instead of a
 * descent from the root per key (index_rescan + index_getnext_slot). See leaf_probe.c.
 */
#ifndef GNOMON_LEAF_PROBE_H
#define GNOMON_LEAF_PROBE_H

#include "postgres.h"

#include "access/nbtree.h"
#include "access/relscan.h"
#include "executor/tuptable.h"
#include "utils/relcache.h"
#include "utils/snapshot.h"

typedef struct LeafProbe
{
	Relation	heap;
	Relation	index;
	Snapshot	snapshot;
	BTScanInsert key;			/* the search key: the first nsearch columns (scankeys[] has all key columns) */
	int			nsearch;
	int			nequal;			/* a probe's entries are those whose first nequal columns equal the key's */
	Oid			int_key;		/* INT4OID or INT8OID: the first search column an integer in ascending order, compared
								 * inline (with the second, below, when there are two) */
	Oid			int_key2;		/* INT4OID, INT8OID or XID8OID: the second search column, compared inline; InvalidOid
								 * when there is none or _bt_compare must compare it */
	int			int_key2_off;	/* the second column's offset in an entry's data (both columns fixed-width, no NULLs) */
	Buffer		leaf;			/* the last leaf read, pinned (not locked), or InvalidBuffer */
	IndexFetchTableData *fetch;
	ItemPointerData *tids;		/* the last probe's entries' heap TIDs */
	int			ntids;
	int			maxtids;
	/* counters for tests and benchmarks: probes answered on the kept leaf, after a descent, by neither */
	uint64		kept;
	uint64		stepped;		/* of kept: found on a leaf to the right of the kept one */
	uint64		descents;
	uint64		fallbacks;
} LeafProbe;

/*
 * Whether probes can run on index (of heap) here: a btree with at least nsearch key columns, outside SERIALIZABLE
 * (whose predicate locks the index scan takes). When true, *p is ready for gnomon_leaf_probe.
 */
extern bool gnomon_leaf_probe_begin(LeafProbe *p, Relation heap, Relation index, int nsearch, int nequal,
									Snapshot snapshot);

/*
 * Finds the entries whose first nequal columns equal values[0..nequal) and, when nsearch > nequal, whose next columns
 * are at or above values[nequal..nsearch) (one range on the first column after the equal ones): their heap TIDs into
 * p->tids, in index order. Returns how many, or -1 when the entries may continue on the next leaf (the caller then
 * scans for this key with an index scan). isnull[k]: values[k] is NULL.
 */
extern int	gnomon_leaf_probe(LeafProbe *p, Datum *values, bool *isnull);

/* Fetches p->tids[i] into slot when the snapshot sees it (a HOT chain is followed from it); false when it does not */
extern bool gnomon_leaf_probe_fetch(LeafProbe *p, int i, TupleTableSlot *slot);

/* Releases the kept leaf and the fetch state */
extern void gnomon_leaf_probe_end(LeafProbe *p);

#endif
