/*
 * leaf_probe.c: equality probes of a btree for many keys in a row, the last leaf kept between them.
 *
 * (The branch point read, branch.c and branch_scan.c, probes one key per statement this way too: it descends every
 * time, and spares the index scan's set-up and key preprocessing, more than its descent for a key that has no entry.)
 *
 * An index_rescan per key (what feed_page.c did per version of a page) descends from the root every time: a third of
 * a page's server time went to _bt_first (its key preprocessing, the descent's three buffer reads and binary
 * searches), measured with callgrind. A page probes its keys in key order, a few keys apart on a 200,000-row table,
 * so most of them lie on the leaf the key before ended on. This keeps that leaf pinned and, for the next key, locks it
 * again and uses it when the key lies within it:
 *   - the page is still a live leaf (not deleted or half-dead: a deleted page's keys moved right);
 *   - the key is above its first entry: nothing that matches the key lies on a page to its left (a split only moves a
 *     page's upper entries to a new right sibling, and the page cannot be recycled while this transaction's snapshot
 *     is held, since the snapshot is older than the deletion);
 *   - the key is at or below its high key (or it is the rightmost page): nothing that matches lies to its right,
 *     except entries equal to the high key, which the run's end catches (below).
 * When the key lies above the kept leaf's high key, it first steps right along the leaf level (at most
 * MAX_STEPS_RIGHT leaves, each checked as the kept one), else it descends (_bt_search, which moves right past
 * concurrent splits). On the leaf, a binary search
 * (_bt_compare, or inline for an int4 or int8 column, alone or before an int4, int8 or xid8 one) finds the first entry at or above the key; the entries from
 * there whose first nequal columns equal the key's are the probe's, their heap TIDs (posting lists too; entries marked dead are skipped) copied before the
 * leaf is unlocked. Heap tuples are fetched after the unlock, through the table AM with the snapshot, as an index
 * scan does (no index lock held while a heap page is locked). When the matching entries reach the leaf's end and it
 * is not the rightmost, they may continue on the next leaf: the probe returns -1 and the caller scans that key with an
 * ordinary index scan. SERIALIZABLE transactions keep the index scan (its predicate locks).
 */
#include "postgres.h"

#include "access/nbtree.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_index.h"
#include "catalog/pg_type.h"
#include "storage/bufmgr.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"

#include "leaf_probe.h"

/*
 * Whether an index column compares inline: ascending, with its type's own btree comparison; int4 or int8, or xid8 as
 * a second column
 */
static bool
inline_column(Relation index, BTScanInsert key, int col, bool xid8_too)
{
	Oid			type = TupleDescAttr(RelationGetDescr(index), col)->atttypid;
	Oid			cmp = key->scankeys[col].sk_func.fn_oid;

	if ((index->rd_indoption[col] & INDOPTION_DESC) != 0)
		return false;
	return (type == INT4OID && cmp == F_BTINT4CMP) || (type == INT8OID && cmp == F_BTINT8CMP) ||
		(xid8_too && type == XID8OID && cmp == F_XID8CMP);
}

/* An inline column's value: the entry's bytes at data, or the scan key's argument, as a signed or unsigned 64 bits */
static inline int32
compare_inline(Oid type, Datum arg, const char *data)
{
	if (type == XID8OID)
	{
		uint64		k = DatumGetUInt64(arg);	/* an xid8 Datum is its 64 bits */
		uint64		v = *(const uint64 *) data;

		return k < v ? -1 : k > v ? 1 : 0;
	}
	else
	{
		int64		k = type == INT4OID ? (int64) DatumGetInt32(arg) : DatumGetInt64(arg);
		int64		v = type == INT4OID ? (int64) *(const int32 *) data : *(const int64 *) data;

		return k < v ? -1 : k > v ? 1 : 0;
	}
}

bool
gnomon_leaf_probe_begin(LeafProbe *p, Relation heap, Relation index, int nsearch, int nequal, Snapshot snapshot)
{
	memset(p, 0, sizeof(LeafProbe));
	p->leaf = InvalidBuffer;
	if (index->rd_rel->relam != BTREE_AM_OID || IsolationIsSerializable() ||
		nsearch > IndexRelationGetNumberOfKeyAttributes(index) || nequal > nsearch || nequal < 1 ||
		!IsMVCCSnapshot(snapshot))
		return false;
	p->heap = heap;
	p->index = index;
	p->snapshot = snapshot;
	p->nsearch = nsearch;
	p->nequal = nequal;
	/* an insertion scan key with every key column's comparison support, its values set per probe */
	p->key = _bt_mkscankey(index, NULL);
	_bt_metaversion(index, &p->key->heapkeyspace, &p->key->allequalimage);
	p->key->scantid = NULL;
	p->key->nextkey = false;
	p->key->pivotsearch = false;
	/*
	 * one int4 or int8 column with its type's own order, ascending, and maybe a second one of int4, int8 or xid8 (the
	 * history's (key, g_xid) index): compared inline on the leaf (the descent and the high key keep _bt_compare)
	 */
	if (nsearch <= 2 && inline_column(index, p->key, 0, false))
	{
		p->int_key = TupleDescAttr(RelationGetDescr(index), 0)->atttypid;
		if (nsearch == 2 && inline_column(index, p->key, 1, true))
		{
			Form_pg_attribute a0 = TupleDescAttr(RelationGetDescr(index), 0);
			Form_pg_attribute a1 = TupleDescAttr(RelationGetDescr(index), 1);

			p->int_key2 = a1->atttypid;
			p->int_key2_off = att_align_nominal(a0->attlen, a1->attalign);
		}
		else if (nsearch == 2)
			p->int_key = InvalidOid;	/* both columns inline, or neither */
	}
	p->maxtids = 8;
	p->tids = palloc(sizeof(ItemPointerData) * p->maxtids);
	p->fetch = table_index_fetch_begin(heap);
	return true;
}

/*
 * The key against the leaf entry at off, as _bt_compare (keysz columns): inline for an integer key on an entry
 * without NULLs
 */
static inline int32
compare_entry(LeafProbe *p, Page page, OffsetNumber off)
{
	if (p->int_key != InvalidOid)
	{
		IndexTuple	itup = (IndexTuple) PageGetItem(page, PageGetItemId(page, off));

		if (!IndexTupleHasNulls(itup))
		{
			char	   *data = (char *) itup + IndexInfoFindDataOffset(itup->t_info);
			int32		c = compare_inline(p->int_key, p->key->scankeys[0].sk_argument, data);

			if (c != 0 || p->key->keysz == 1)
				return c;
			return compare_inline(p->int_key2, p->key->scankeys[1].sk_argument, data + p->int_key2_off);
		}
	}
	return _bt_compare(p->index, p->key, page, off);
}

/*
 * How many leaves to the right of the kept one a probe reads before it descends from the root instead: the keys of a
 * page of 1,000 events on a 200,000-row table lie about 200 apart, a leaf of the live table's key holds about 370
 * keys, one of the history's (key, g_xid) index about 150, so the next key is mostly on the kept leaf or one or two to
 * its right; a step reads one page where a descent reads three.
 */
#define MAX_STEPS_RIGHT 2

/* Where a locked leaf stands for the key: it holds every entry that could match (as above), they lie to its right
 * (above its high key), or it cannot tell (left of its first entry, or not a live leaf) */
typedef enum LeafPlace
{
	LEAF_ELSEWHERE,
	LEAF_COVERS,
	LEAF_RIGHT
} LeafPlace;

static LeafPlace
leaf_place(LeafProbe *p, Page page)
{
	BTPageOpaque opaque = BTPageGetOpaque(page);
	OffsetNumber first = P_FIRSTDATAKEY(opaque);

	if (P_IGNORE(opaque) || !P_ISLEAF(opaque))
		return LEAF_ELSEWHERE;
	p->key->keysz = p->nsearch;
	if (first <= PageGetMaxOffsetNumber(page) && compare_entry(p, page, first) <= 0)
		return LEAF_ELSEWHERE;
	if (P_RIGHTMOST(opaque))
		return first <= PageGetMaxOffsetNumber(page) ? LEAF_COVERS : LEAF_ELSEWHERE;
	if (_bt_compare(p->index, p->key, page, P_HIKEY) > 0)
		return LEAF_RIGHT;
	return first <= PageGetMaxOffsetNumber(page) ? LEAF_COVERS : LEAF_ELSEWHERE;
}

static void
add_tid(LeafProbe *p, ItemPointer tid)
{
	if (p->ntids == p->maxtids)
	{
		p->maxtids *= 2;
		p->tids = repalloc(p->tids, sizeof(ItemPointerData) * p->maxtids);
	}
	p->tids[p->ntids++] = *tid;
}

int
gnomon_leaf_probe(LeafProbe *p, Datum *values, bool *isnull)
{
	Relation	index = p->index;
	Page		page = NULL;
	BTPageOpaque opaque;
	OffsetNumber low,
				high,
				maxoff;
	bool		kept = false;
	LeafPlace	place;

	p->ntids = 0;
	/* as an index scan's "col = NULL" (or ">= NULL"): nothing */
	for (int k = 0; k < p->nsearch; k++)
		if (isnull[k])
			return 0;
	p->key->anynullkeys = false;
	for (int k = 0; k < p->nsearch; k++)
	{
		ScanKey		sk = &p->key->scankeys[k];

		sk->sk_argument = values[k];
		sk->sk_flags &= ~SK_ISNULL;
	}
	if (BufferIsValid(p->leaf))
	{
		_bt_lockbuf(index, p->leaf, BT_READ);
		page = BufferGetPage(p->leaf);
		TestForOldSnapshot(p->snapshot, index, page);
		place = leaf_place(p, page);
		/*
		 * A key above the live leaf's high key has its entries to the right: step right along the leaf level, as
		 * _bt_moveright does, and place the key on the next leaf as on the kept one (a leaf split or deleted since is
		 * caught there)
		 */
		for (int step = 0; place == LEAF_RIGHT && step < MAX_STEPS_RIGHT; step++)
		{
			p->leaf = _bt_relandgetbuf(index, p->leaf, BTPageGetOpaque(page)->btpo_next, BT_READ);
			page = BufferGetPage(p->leaf);
			TestForOldSnapshot(p->snapshot, index, page);
			place = leaf_place(p, page);
			if (place == LEAF_COVERS)
				p->stepped++;
		}
		kept = place == LEAF_COVERS;
		if (!kept)
		{
			_bt_relbuf(index, p->leaf);
			p->leaf = InvalidBuffer;
		}
	}
	if (!kept)
	{
		BTStack		stack;

		p->key->keysz = p->nsearch;
		stack = _bt_search(index, p->key, &p->leaf, BT_READ, p->snapshot);
		_bt_freestack(stack);
		if (!BufferIsValid(p->leaf))
		{
			/* an empty index */
			p->descents++;
			return 0;
		}
		page = BufferGetPage(p->leaf);
		p->descents++;
	}
	else
		p->kept++;
	opaque = BTPageGetOpaque(page);
	maxoff = PageGetMaxOffsetNumber(page);
	/* the first entry at or above the key */
	p->key->keysz = p->nsearch;
	low = P_FIRSTDATAKEY(opaque);
	high = maxoff + 1;
	while (low < high)
	{
		OffsetNumber mid = low + (high - low) / 2;

		if (compare_entry(p, page, mid) > 0)
			low = mid + 1;
		else
			high = mid;
	}
	/* from there, the entries whose first nequal columns equal the key's */
	p->key->keysz = p->nequal;
	for (; low <= maxoff; low++)
	{
		ItemId		iid = PageGetItemId(page, low);
		IndexTuple	itup;

		if (compare_entry(p, page, low) != 0)
			break;
		if (ItemIdIsDead(iid))
			continue;
		itup = (IndexTuple) PageGetItem(page, iid);
		if (BTreeTupleIsPosting(itup))
		{
			for (int i = 0; i < BTreeTupleGetNPosting(itup); i++)
				add_tid(p, BTreeTupleGetPostingN(itup, i));
		}
		else
			add_tid(p, &itup->t_tid);
	}
	/* at the leaf's end, the run may go on at the next leaf unless the key is below the high key (the next leaf's
	 * entries are at or above it) */
	if (low > maxoff && !P_RIGHTMOST(opaque) && _bt_compare(index, p->key, page, P_HIKEY) >= 0)
	{
		_bt_unlockbuf(index, p->leaf);
		p->fallbacks++;
		p->ntids = 0;
		return -1;
	}
	_bt_unlockbuf(index, p->leaf);
	return p->ntids;
}

bool
gnomon_leaf_probe_fetch(LeafProbe *p, int i, TupleTableSlot *slot)
{
	bool		call_again = false;
	bool		all_dead = false;

	return table_index_fetch_tuple(p->fetch, &p->tids[i], p->snapshot, slot, &call_again, &all_dead);
}

void
gnomon_leaf_probe_end(LeafProbe *p)
{
	if (p->index == NULL)
		return;
	if (BufferIsValid(p->leaf))
		ReleaseBuffer(p->leaf);
	p->leaf = InvalidBuffer;
	table_index_fetch_end(p->fetch);
	pfree(p->tids);
	pfree(p->key);
	p->index = NULL;
}
