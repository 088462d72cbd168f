/*
 * branch.c: the optional C module's branch point read.
 *
 * A read through a branch view (gnomon_b_<schema>.<table>, the function gnomon_t.<base>_cur()) asks, per key, which
 * of four places holds the key's state on the selected branch:
 *
 *   1  the branch row of the nearest level of the chain that held the key at that level's snapshot, when that
 *      snapshot saw the row's last write (a tombstone hides the key);
 *   2  the same level's branch history row of the first write that snapshot did not see (its image before it);
 *   3  main's first version (by g_vid) that the main snapshot does not see (its image before it; an insert hides it);
 *   0  main's live row, when none of the above exists.
 *
 * With the module enabled, gnomon.install_branch_objects generates the view's function as a UNION ALL of four scans,
 * one per place, each filtered by gnomon.branch_pick_c(table_id, place, id, key...): true for the one row of the one
 * place that holds the key. The function resolves the key with direct index probes (the branch table's primary key,
 * key first; the branch history's (key, g_branch, g_vid) index when needed; main's history partitions' (key, g_xid)
 * index from the main snapshot's xmin on), each under the statement's snapshot (so rows of the transaction's own
 * writes, subtransactions included, are seen exactly as a SQL read sees them), and tests the writing xids against
 * the levels' snapshots with pg_visible_in_snapshot, as the SQL path does. A point read by key then starts four index
 * scans and one Append, where the SQL path's DISTINCT ON starts a catalog probe, a nested loop, a sort and a unique
 * on top of them.
 *
 * The selected branch's point is read from gnomon.branch (its primary key) once per statement and place (cached in
 * the function's fn_extra, which lives as long as the statement's expression state). The error cases go to the SQL
 * functions that raise them: no branch selected or the branch dropped (gnomon.current_point(): GN054, GN050), a
 * scratch level lost (gnomon.check_intact: GN053), a point older than the table's tracking (GN012).
 *
 * gnomon.branch_chain_c() returns the selected branch's chain, so the branch-row scan probes only its levels.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/pathnodes.h"
#include "optimizer/cost.h"
#include "optimizer/paths.h"
#include "partitioning/partdesc.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/xid8.h"

#include "branch.h"
#include "leaf_probe.h"

void		gnomon_branch_init(void);



static HTAB *branch_tables = NULL;
static bool point_cached = false;	/* see load_point */
static Oid	branch_catalog_pkey = InvalidOid;
static Oid	branch_catalog = InvalidOid;
static AttrNumber branch_cutoff_att, branch_chain_att, branch_snaps_att, branch_main_snap_att;

static void
invalidate_branch_tables(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	BranchTable *t;

	if (!OidIsValid(relid) || relid == branch_catalog || relid == branch_catalog_pkey)
	{
		branch_catalog = InvalidOid;
		branch_catalog_pkey = InvalidOid;
		point_cached = false;
	}
	if (branch_tables == NULL)
		return;
	hash_seq_init(&status, branch_tables);
	while ((t = (BranchTable *) hash_seq_search(&status)) != NULL)
	{
		if (!t->valid)
			continue;
		if (!OidIsValid(relid) || relid == t->h_parent)
		{
			t->valid = false;
			continue;
		}
		for (int i = 0; i < 2; i++)
			if (relid == t->b[i].heap || relid == t->b[i].index || relid == t->bh[i].heap || relid == t->bh[i].index)
				t->valid = false;
		for (int i = 0; i < t->nh; i++)
			if (relid == t->h[i].heap || relid == t->h[i].index)
				t->valid = false;
	}
}

/* The comparison procedures of an index's first ncols columns (equality), and of the next one (strategy last). */
static void
fill_probe(ProbeIndex *p, Oid heap, Oid index, int neq, int last_strategy)
{
	Relation	irel = index_open(index, AccessShareLock);
	int			ncols = neq + (last_strategy ? 1 : 0);

	p->heap = heap;
	p->index = index;
	if (IndexRelationGetNumberOfKeyAttributes(irel) < ncols)
		elog(ERROR, "gnomon: index %s has fewer than %d key columns", RelationGetRelationName(irel), ncols);
	for (int i = 0; i < ncols; i++)
	{
		Oid			opr = get_opfamily_member(irel->rd_opfamily[i], irel->rd_opcintype[i], irel->rd_opcintype[i],
											  i < neq ? BTEqualStrategyNumber : last_strategy);

		if (!OidIsValid(opr))
			elog(ERROR, "gnomon: no comparison operator for column %d of index %s", i + 1, RelationGetRelationName(irel));
		p->procs[i] = get_opcode(opr);
		p->colls[i] = irel->rd_indcollation[i];
	}
	index_close(irel, AccessShareLock);
}

static Oid
spi_oid(int row, int col)
{
	bool		isnull;
	Datum		d = SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, &isnull);

	return isnull ? InvalidOid : DatumGetObjectId(d);
}

/* Reads a tracked table's branch relations and their probe indexes (through SPI, once per backend and table). */
static BranchTable *
lookup_branch_table(int32 table_id)
{
	BranchTable *t;
	BranchTable fresh;
	bool		found;
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1];
	int			ret;
	bool		isnull;

	if (branch_tables == NULL)
	{
		HASHCTL		ctl;

		memset(&ctl, 0, sizeof(ctl));
		ctl.keysize = sizeof(int32);
		ctl.entrysize = sizeof(BranchTable);
		branch_tables = hash_create("gnomon branch tables", 64, &ctl, HASH_ELEM | HASH_BLOBS);
	}
	t = (BranchTable *) hash_search(branch_tables, &table_id, HASH_FIND, &found);
	if (found && t->valid)
		return t;

	memset(&fresh, 0, sizeof(fresh));
	fresh.table_id = table_id;
	args[0] = Int32GetDatum(table_id);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "gnomon: SPI_connect failed");
	/* the relations, and the one btree index of each that the probes use: key first, then g_branch (branch rows and
	 * their history) or g_xid (main's history) */
	ret = SPI_execute_with_args(
		"with t as (select t.*, cardinality(t.key_columns) as nk from gnomon.tracked_table t where t.table_id operator(pg_catalog.=) $1),"
		" r(kind, rel) as (select k, pg_catalog.to_regclass(pg_catalog.format('gnomon_t.%I', gnomon.object_name(gnomon.object_name(t.base_name, s), p)))"
		"                    from t, (values (0, '_b', '_l'), (1, '_b', '_s'), (2, '_bh', '_l'), (3, '_bh', '_s')) v(k, s, p)"
		"                  union all"
		"                  select 4, i.inhrelid::pg_catalog.regclass from t, pg_catalog.pg_inherits i"
		"                   where i.inhparent operator(pg_catalog.=) pg_catalog.to_regclass(pg_catalog.format('gnomon_t.%I', t.history_table)))"
		" select r.kind, r.rel::pg_catalog.oid,"
		"        (select x.indexrelid from pg_catalog.pg_index x join pg_catalog.pg_class c on c.oid operator(pg_catalog.=) x.indexrelid"
		"           join pg_catalog.pg_am a on a.oid operator(pg_catalog.=) c.relam"
		"          where x.indrelid operator(pg_catalog.=) r.rel and a.amname operator(pg_catalog.=) 'btree'"
		"            and x.indnkeyatts operator(pg_catalog.=) (t.nk operator(pg_catalog.+) case when r.kind in (2, 3) then 2 else 1 end)"
		"          order by x.indisprimary desc, x.indexrelid limit 1),"
		"        t.nk, t.track_xid, pg_catalog.to_regclass(pg_catalog.format('gnomon_t.%I', t.history_table))::pg_catalog.oid,"
		"        t.relid, pg_catalog.to_regclass(pg_catalog.format('%I.%I', gnomon.branch_schema(t.schema_name), t.table_name))::pg_catalog.oid"
		"   from r, t order by r.kind, r.rel",
		1, argtypes, args, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "gnomon: reading the branch relations of table %d failed: %s", table_id, SPI_result_code_string(ret));
	if (SPI_processed < 4)
		elog(ERROR, "gnomon: table %d is not tracked or has no branch tables", table_id);
	fresh.nkeys = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));
	fresh.track_xid = U64FromFullTransactionId(DatumGetFullTransactionId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 5, &isnull)));
	fresh.h_parent = spi_oid(0, 6);
	fresh.main_relid = spi_oid(0, 7);
	fresh.view_relid = spi_oid(0, 8);
	fresh.h = MemoryContextAllocZero(TopMemoryContext, sizeof(ProbeIndex) * (SPI_processed + 1));
	fresh.h_vid = MemoryContextAllocZero(TopMemoryContext, sizeof(AttrNumber) * (SPI_processed + 1));
	fresh.h_xid = MemoryContextAllocZero(TopMemoryContext, sizeof(AttrNumber) * (SPI_processed + 1));
	if (fresh.nkeys < 1 || fresh.nkeys > GN_MAX_KEYS - 2)
		elog(ERROR, "gnomon: table %d has %d key columns", table_id, fresh.nkeys);
	for (uint64 i = 0; i < SPI_processed; i++)
	{
		int			kind = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull));
		Oid			rel = spi_oid(i, 2);
		Oid			idx = spi_oid(i, 3);

		if (!OidIsValid(rel) || !OidIsValid(idx))
			elog(ERROR, "gnomon: a branch or history relation of table %d, or its index, is missing", table_id);
		if (kind <= 1)
			fill_probe(&fresh.b[kind], rel, idx, fresh.nkeys, 0);
		else if (kind <= 3)
			fill_probe(&fresh.bh[kind - 2], rel, idx, fresh.nkeys + 1, 0);
		else
		{
			fill_probe(&fresh.h[fresh.nh], rel, idx, fresh.nkeys, BTGreaterEqualStrategyNumber);
			fresh.h_vid[fresh.nh] = get_attnum(rel, "g_vid");
			fresh.h_xid[fresh.nh] = get_attnum(rel, "g_xid");
			fresh.nh++;
		}
	}
	SPI_finish();
	fresh.b_branch = get_attnum(fresh.b[0].heap, "g_branch");
	fresh.b_xid = get_attnum(fresh.b[0].heap, "g_xid");
	fresh.b_cxid = get_attnum(fresh.b[0].heap, "g_cxid");
	fresh.b_del = get_attnum(fresh.b[0].heap, "g_del");
	fresh.bh_vid = get_attnum(fresh.bh[0].heap, "g_vid");
	fresh.bh_xid = get_attnum(fresh.bh[0].heap, "g_xid");
	fresh.valid = true;

	t = (BranchTable *) hash_search(branch_tables, &table_id, HASH_ENTER, &found);
	if (found && t->h != NULL)
	{
		pfree(t->h);
		pfree(t->h_vid);
		pfree(t->h_xid);
	}
	*t = fresh;
	return t;
}


/* Runs a SQL statement expected to raise the error the read must report; errors if it does not. */
static void
raise_through_sql(const char *sql, int32 arg)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1];

	args[0] = Int32GetDatum(arg);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "gnomon: SPI_connect failed");
	SPI_execute_with_args(sql, 1, argtypes, args, NULL, true, 0);
	SPI_finish();
}

/*
 * The selected branch's id, from the setting gnomon.branch (which gnomon.branch_use writes); false when none is selected
 * (unset or empty). A value that is no branch id (set by hand: 'abc', '1.5', beyond integer) raises
 * gnomon.current_branch()'s GN041, which names the setting, the value and what to do, where pg_strtoint32 raised a bare
 * 22P02; it accepts what gnomon.selected_branch_id() does in SQL (blanks around, a sign, decimal digits).
 */
static bool
selected_branch_id(int32 *id)
{
	const char *s = GetConfigOption("gnomon.branch", true, false);
	char	   *end;
	long		v;

	if (s == NULL || s[0] == '\0')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	while (*end != '\0' && isspace((unsigned char) *end))
		end++;
	if (errno != 0 || end == s || *end != '\0' || v < PG_INT32_MIN || v > PG_INT32_MAX)
	{
		raise_through_sql("select gnomon.current_branch()", 0);
		elog(ERROR, "gnomon: setting gnomon.branch holds no branch id: \"%s\"", s);
	}
	*id = (int32) v;
	return true;
}

static Oid
branch_catalog_index(void)
{
	if (!OidIsValid(branch_catalog_pkey))
	{
		Oid			ns = get_namespace_oid("gnomon", false);

		branch_catalog = get_relname_relid("branch", ns);
		branch_catalog_pkey = get_relname_relid("branch_pkey", ns);
		if (!OidIsValid(branch_catalog) || !OidIsValid(branch_catalog_pkey))
			elog(ERROR, "gnomon: gnomon.branch or its primary key is missing");
		branch_cutoff_att = get_attnum(branch_catalog, "cutoff");
		branch_chain_att = get_attnum(branch_catalog, "chain");
		branch_snaps_att = get_attnum(branch_catalog, "snaps");
		branch_main_snap_att = get_attnum(branch_catalog, "main_snap");
	}
	return branch_catalog_pkey;
}

/*
 * The last point read, per backend, with what decided which catalog row its statement saw: the branch id, and the
 * statement's snapshot (xmin, xmax, the in-progress xids, the command id) together with this transaction's xid and
 * current subtransaction. Two statements whose snapshots hold the same xids as in progress, with the same bounds, see
 * the same committed transactions, hence the same catalog row (a transaction's commit or abort is final); this
 * transaction's own writes are told apart by the command id, which every write advances for the statements after it,
 * and by the subtransaction (a savepoint rolled back starts a new one). So a statement whose key matches reads the
 * point without probing gnomon.branch — consecutive reads of a session while nothing commits in between, as in a
 * read-only loop or one client's transactions; any commit anywhere changes the next snapshot and the point is read
 * again. A rewrite of gnomon.branch (its relcache invalidation) drops it too. The cached copy lives in its own memory
 * context and is copied out, so a statement's point is never freed under it.
 */
static MemoryContext point_cxt = NULL;
static struct
{
	int32		branch_id;
	TransactionId xmin,
				xmax;
	uint32		xcnt;
	int32		subxcnt;
	bool		suboverflowed,
				recovery;
	CommandId	curcid;
	FullTransactionId top;
	SubTransactionId sub;
	TransactionId *xip,
			   *subxip;
	BranchPoint *point;
}			pc;

static BranchPoint *
copy_point(const BranchPoint *p, MemoryContext mcxt)
{
	MemoryContext old = MemoryContextSwitchTo(mcxt);
	BranchPoint *q = palloc(sizeof(BranchPoint));

	*q = *p;
	q->chain = palloc(sizeof(int32) * Max(p->nlevels, 1));
	memcpy(q->chain, p->chain, sizeof(int32) * p->nlevels);
	q->snaps = palloc(sizeof(Datum) * Max(p->nlevels, 1));
	for (int i = 0; i < p->nlevels; i++)
		q->snaps[i] = p->snaps[i] == (Datum) 0 ? (Datum) 0 : datumCopy(p->snaps[i], false, -1);
	q->main_snap = datumCopy(p->main_snap, false, -1);
	q->chain_array = datumCopy(p->chain_array, false, -1);
	MemoryContextSwitchTo(old);
	return q;
}

static bool
point_key_matches(int32 id, Snapshot s)
{
	return point_cached && pc.branch_id == id && pc.xmin == s->xmin && pc.xmax == s->xmax && pc.xcnt == s->xcnt
		&& pc.subxcnt == s->subxcnt && pc.suboverflowed == s->suboverflowed && pc.recovery == s->takenDuringRecovery
		&& pc.curcid == s->curcid && FullTransactionIdEquals(pc.top, GetTopFullTransactionIdIfAny())
		&& pc.sub == GetCurrentSubTransactionId()
		&& (s->xcnt == 0 || memcmp(pc.xip, s->xip, sizeof(TransactionId) * s->xcnt) == 0)
		&& (s->subxcnt <= 0 || memcmp(pc.subxip, s->subxip, sizeof(TransactionId) * s->subxcnt) == 0);
}

static void
point_key_store(int32 id, Snapshot s, const BranchPoint *p)
{
	MemoryContext old;

	if (point_cxt == NULL)
		point_cxt = AllocSetContextCreate(TopMemoryContext, "gnomon branch point", ALLOCSET_SMALL_SIZES);
	point_cached = false;
	MemoryContextReset(point_cxt);
	old = MemoryContextSwitchTo(point_cxt);
	pc.branch_id = id;
	pc.xmin = s->xmin;
	pc.xmax = s->xmax;
	pc.xcnt = s->xcnt;
	pc.subxcnt = s->subxcnt;
	pc.suboverflowed = s->suboverflowed;
	pc.recovery = s->takenDuringRecovery;
	pc.curcid = s->curcid;
	pc.top = GetTopFullTransactionIdIfAny();
	pc.sub = GetCurrentSubTransactionId();
	pc.xip = palloc(sizeof(TransactionId) * Max(s->xcnt, 1));
	if (s->xcnt > 0)
		memcpy(pc.xip, s->xip, sizeof(TransactionId) * s->xcnt);
	pc.subxip = palloc(sizeof(TransactionId) * Max(s->subxcnt, 1));
	if (s->subxcnt > 0)
		memcpy(pc.subxip, s->subxip, sizeof(TransactionId) * s->subxcnt);
	MemoryContextSwitchTo(old);
	pc.point = copy_point(p, point_cxt);
	point_cached = true;
}

/* A probe of gnomon.branch by its primary key under the active snapshot: the row in slot when found */
typedef struct CatalogProbe
{
	Relation	rel;
	Relation	irel;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	ScanKeyData sk;
} CatalogProbe;

static bool
catalog_probe_begin(CatalogProbe *c, int32 id)
{
	c->irel = index_open(branch_catalog_index(), AccessShareLock);
	c->rel = table_open(branch_catalog, AccessShareLock);
	ScanKeyInit(&c->sk, 1, BTEqualStrategyNumber, F_INT4EQ, Int32GetDatum(id));
	c->slot = table_slot_create(c->rel, NULL);
	c->scan = index_beginscan(c->rel, c->irel, GetActiveSnapshot(), 1, 0);
	index_rescan(c->scan, &c->sk, 1, NULL, 0);
	return index_getnext_slot(c->scan, ForwardScanDirection, c->slot);
}

static void
catalog_probe_end(CatalogProbe *c)
{
	index_endscan(c->scan);
	ExecDropSingleTupleTableSlot(c->slot);
	/* (the locks are kept until the transaction ends, as the executor keeps its own) */
	table_close(c->rel, NoLock);
	index_close(c->irel, NoLock);
}

static BranchPoint *
load_point(MemoryContext mcxt)
{
	int32		id;
	CatalogProbe cp;
	TupleTableSlot *slot;
	BranchPoint *p;
	bool		found = false;
	bool		scratch = false;
	MemoryContext old;

	if (!selected_branch_id(&id))
	{
		raise_through_sql("select gnomon.current_point()", 0);
		elog(ERROR, "gnomon: no branch is selected");
	}
	if (point_key_matches(id, GetActiveSnapshot()))
		return copy_point(pc.point, mcxt);
	found = catalog_probe_begin(&cp, id);
	slot = cp.slot;
	old = MemoryContextSwitchTo(mcxt);
	p = palloc0(sizeof(BranchPoint));
	p->branch_id = id;
	if (found)
	{
		/*
		 * The branch's point, as gnomon.branch_point(b) reads it (R__08_branches.sql): a branch of main stores no
		 * chain, snapshots or main snapshot (catalog version 12), and its point is {id}, {null} and its cutoff.
		 */
		bool		chain_null,
					snaps_null,
					msnap_null;
		Datum		chain = slot_getattr(slot, branch_chain_att, &chain_null);
		Datum		snaps = slot_getattr(slot, branch_snaps_att, &snaps_null);
		Datum		msnap = slot_getattr(slot, branch_main_snap_att, &msnap_null);

		if (msnap_null)
			msnap = slot_getattr(slot, branch_cutoff_att, &msnap_null);
		if (chain_null)
		{
			Datum		elem = Int32GetDatum(id);

			p->chain_array = PointerGetDatum(construct_array(&elem, 1, INT4OID, 4, true, TYPALIGN_INT));
			p->nlevels = 1;
			p->chain = palloc(sizeof(int32));
			p->chain[0] = id;
			scratch = id < 0;
		}
		else
		{
			Datum	   *celems;
			bool	   *cnulls;
			int			n;

			p->chain_array = PointerGetDatum(DatumGetArrayTypePCopy(chain));
			deconstruct_array(DatumGetArrayTypeP(p->chain_array), INT4OID, 4, true, TYPALIGN_INT, &celems, &cnulls, &n);
			p->nlevels = n;
			p->chain = palloc(sizeof(int32) * n);
			for (int i = 0; i < n; i++)
			{
				p->chain[i] = DatumGetInt32(celems[i]);
				if (p->chain[i] < 0)
					scratch = true;
			}
		}
		if (snaps_null)
		{
			p->snaps = palloc(sizeof(Datum));
			p->snaps[0] = (Datum) 0;
			if (p->nlevels != 1)
				elog(ERROR, "gnomon: branch %d has %d levels and no snapshots", id, p->nlevels);
		}
		else
		{
			bool	   *snulls;
			int			ns;

			deconstruct_array(DatumGetArrayTypePCopy(snaps), PG_SNAPSHOTOID, -1, false, TYPALIGN_DOUBLE, &p->snaps,
							  &snulls, &ns);
			if (ns != p->nlevels)
				elog(ERROR, "gnomon: branch %d has %d levels and %d snapshots", id, p->nlevels, ns);
			for (int i = 0; i < ns; i++)
				if (snulls[i])
					p->snaps[i] = (Datum) 0;
		}
		p->main_snap = msnap_null ? (Datum) 0 : PointerGetDatum(PG_DETOAST_DATUM_COPY(msnap));
	}
	MemoryContextSwitchTo(old);
	catalog_probe_end(&cp);
	if (!found)
	{
		/* GN050 (dropped) */
		raise_through_sql("select gnomon.current_point()", 0);
		elog(ERROR, "gnomon: branch %d not found", id);
	}
	if (scratch)				/* GN053 when a scratch level lost its rows */
		raise_through_sql("select gnomon.check_intact(b) from gnomon.branch b where b.branch_id operator(pg_catalog.=) $1", id);
	if (p->main_snap == (Datum) 0)
		elog(ERROR, "gnomon: branch %d has no main snapshot", id);
	p->main_xmin = U64FromFullTransactionId(DatumGetFullTransactionId(DirectFunctionCall1(pg_snapshot_xmin, p->main_snap)));
	point_key_store(id, GetActiveSnapshot(), p);
	return p;
}

static inline bool
visible(uint64 xid, Datum snap)
{
	return DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot,
											FullTransactionIdGetDatum(FullTransactionIdFromU64(xid)), snap));
}

static inline uint64
slot_xid(TupleTableSlot *slot, AttrNumber att)
{
	bool		isnull;

	return U64FromFullTransactionId(DatumGetFullTransactionId(slot_getattr(slot, att, &isnull)));
}


/* Per statement and call site (fn_extra). */
typedef struct PickCache
{
	BranchPoint *point;
	BranchTable *table;			/* re-checked against the hash on every call (it may be invalidated) */
	bool		has_key;
	Datum		keys[GN_MAX_KEYS];
	KeyState	state;
	Oid			argtypes[GN_MAX_KEYS];
	int16		typlen[GN_MAX_KEYS];
	bool		typbyval[GN_MAX_KEYS];
	bool		too_old_checked;
} PickCache;

/*
 * A branch row of the key (in slot, from partition part): when its branch is a level of the chain nearer than the best
 * so far and the level's snapshot saw the row created, it becomes the best
 */
static void
nearer_level(BranchTable *t, BranchPoint *p, TupleTableSlot *slot, int part, int *best_level, uint64 *best_xid,
			 int *best_part)
{
	bool		isnull;
	int32		br = DatumGetInt32(slot_getattr(slot, t->b_branch, &isnull));
	int			lvl = -1;

	for (int i = 0; i < p->nlevels; i++)
		if (p->chain[i] == br)
		{
			lvl = i;
			break;
		}
	if (lvl < 0 || lvl >= *best_level)
		return;
	if (p->snaps[lvl] != (Datum) 0 && !visible(slot_xid(slot, t->b_cxid), p->snaps[lvl]))
		return;
	*best_level = lvl;
	*best_xid = slot_xid(slot, t->b_xid);
	*best_part = part;
}

/* Steps 1 and 2 of resolve_key: whether a level of the chain holds the key (then st says where its state is) */
static bool
resolve_levels(BranchTable *t, BranchPoint *p, Datum *keys, KeyState *st)
{
	ScanKeyData sk[GN_MAX_KEYS + 1];
	int			best_level = INT_MAX;
	uint64		best_xid = 0;
	int			best_part = 0;
	Snapshot	snap = GetActiveSnapshot();
	bool		any_scratch = false;

	st->level_branch = 0;
	st->level_current = true;
	st->bh_vid = -1;
	st->main_vid = -1;

	for (int i = 0; i < p->nlevels; i++)
		if (p->chain[i] < 0)
			any_scratch = true;

	/*
	 * 1. the branch rows of this key on the chain's levels: the nearest level whose snapshot saw the row created. A
	 * probe of the branch table's primary key (key, g_branch) by the key: a descent and a binary search of the leaf
	 * (leaf_probe.c), which finds no entry for nearly every key a read meets, where an index scan's set-up and key
	 * preprocessing cost more than the descent; an index scan when the leaf probe cannot run (SERIALIZABLE) or the
	 * key's entries may continue on the next leaf.
	 */
	for (int part = 0; part < (any_scratch ? 2 : 1); part++)
	{
		ProbeIndex *pi = &t->b[part];
		Relation	rel = table_open(pi->heap, AccessShareLock);
		Relation	irel = index_open(pi->index, AccessShareLock);
		TupleTableSlot *slot = NULL;
		LeafProbe	lp;
		bool		probed = false;

		if (gnomon_leaf_probe_begin(&lp, rel, irel, t->nkeys, t->nkeys, snap))
		{
			bool		nulls[GN_MAX_KEYS];
			int			n;

			memset(nulls, 0, sizeof(nulls));
			n = gnomon_leaf_probe(&lp, keys, nulls);
			if (n >= 0)
			{
				probed = true;
				for (int i = 0; i < n; i++)
				{
					if (slot == NULL)
						slot = table_slot_create(rel, NULL);
					if (gnomon_leaf_probe_fetch(&lp, i, slot))
						nearer_level(t, p, slot, part, &best_level, &best_xid, &best_part);
				}
			}
			gnomon_leaf_probe_end(&lp);
		}
		if (!probed)
		{
			IndexScanDesc scan;

			elog(DEBUG1, "gnomon: branch read of table %d: the branch rows' primary key by an index scan (%s)",
				 t->table_id, IsolationIsSerializable() ? "SERIALIZABLE" : "the key's entries may continue on the next leaf");
			if (slot == NULL)
				slot = table_slot_create(rel, NULL);
			for (int k = 0; k < t->nkeys; k++)
				ScanKeyEntryInitialize(&sk[k], 0, k + 1, BTEqualStrategyNumber, InvalidOid, pi->colls[k], pi->procs[k], keys[k]);
			scan = index_beginscan(rel, irel, snap, t->nkeys, 0);
			index_rescan(scan, sk, t->nkeys, NULL, 0);
			while (index_getnext_slot(scan, ForwardScanDirection, slot))
				nearer_level(t, p, slot, part, &best_level, &best_xid, &best_part);
			index_endscan(scan);
		}
		if (slot != NULL)
			ExecDropSingleTupleTableSlot(slot);
		index_close(irel, NoLock);
		table_close(rel, NoLock);
	}
	if (best_level != INT_MAX)
	{
		int32		br = p->chain[best_level];

		st->level_branch = br;
		if (p->snaps[best_level] == (Datum) 0 || visible(best_xid, p->snaps[best_level]))
			return true;
		/* 2. the level's snapshot did not see the row's last write: the first history row it did not see */
		st->level_current = false;
		{
			ProbeIndex *pi = &t->bh[br < 0 ? 1 : 0];
			Relation	rel = table_open(pi->heap, AccessShareLock);
			Relation	irel = index_open(pi->index, AccessShareLock);
			TupleTableSlot *slot = table_slot_create(rel, NULL);
			IndexScanDesc scan;
			Datum		lsnap = p->snaps[best_level];
			uint64		lxmin = U64FromFullTransactionId(DatumGetFullTransactionId(DirectFunctionCall1(pg_snapshot_xmin, lsnap)));

			(void) best_part;
			for (int k = 0; k < t->nkeys; k++)
				ScanKeyEntryInitialize(&sk[k], 0, k + 1, BTEqualStrategyNumber, InvalidOid, pi->colls[k], pi->procs[k], keys[k]);
			ScanKeyEntryInitialize(&sk[t->nkeys], 0, t->nkeys + 1, BTEqualStrategyNumber, InvalidOid,
								   pi->colls[t->nkeys], pi->procs[t->nkeys], Int32GetDatum(br));
			scan = index_beginscan(rel, irel, snap, t->nkeys + 1, 0);
			index_rescan(scan, sk, t->nkeys + 1, NULL, 0);
			/* in g_vid order within (key, g_branch): the first match is the one */
			while (index_getnext_slot(scan, ForwardScanDirection, slot))
			{
				uint64		x = slot_xid(slot, t->bh_xid);
				bool		isnull;

				if (x >= lxmin && !visible(x, lsnap))
				{
					st->bh_vid = DatumGetInt64(slot_getattr(slot, t->bh_vid, &isnull));
					break;
				}
			}
			index_endscan(scan);
			ExecDropSingleTupleTableSlot(slot);
			index_close(irel, NoLock);
			table_close(rel, NoLock);
		}
		return true;
	}
	return false;
}

/* Step 3 of resolve_key, for a key no level holds: st->main_vid */
static void
resolve_main(BranchTable *t, BranchPoint *p, Datum *keys, KeyState *st)
{
	ScanKeyData sk[GN_MAX_KEYS + 1];
	Snapshot	snap = GetActiveSnapshot();

	/* 3. no level holds the key: main's versions from the main snapshot's xmin on that it does not see */
	for (int part = 0; part < t->nh; part++)
	{
		ProbeIndex *pi = &t->h[part];
		Relation	rel = table_open(pi->heap, AccessShareLock);
		Relation	irel = index_open(pi->index, AccessShareLock);
		TupleTableSlot *slot = table_slot_create(rel, NULL);
		IndexScanDesc scan;

		for (int k = 0; k < t->nkeys; k++)
			ScanKeyEntryInitialize(&sk[k], 0, k + 1, BTEqualStrategyNumber, InvalidOid, pi->colls[k], pi->procs[k], keys[k]);
		ScanKeyEntryInitialize(&sk[t->nkeys], 0, t->nkeys + 1, BTGreaterEqualStrategyNumber, InvalidOid,
							   pi->colls[t->nkeys], pi->procs[t->nkeys],
							   FullTransactionIdGetDatum(FullTransactionIdFromU64(p->main_xmin)));
		scan = index_beginscan(rel, irel, snap, t->nkeys + 1, 0);
		index_rescan(scan, sk, t->nkeys + 1, NULL, 0);
		while (index_getnext_slot(scan, ForwardScanDirection, slot))
		{
			uint64		x = slot_xid(slot, t->h_xid[part]);
			bool		isnull;
			int64		vid;

			if (visible(x, p->main_snap))
				continue;
			vid = DatumGetInt64(slot_getattr(slot, t->h_vid[part], &isnull));
			if (st->main_vid < 0 || vid < st->main_vid)
				st->main_vid = vid;
		}
		index_endscan(scan);
		ExecDropSingleTupleTableSlot(slot);
		index_close(irel, NoLock);
		table_close(rel, NoLock);
	}
}

static void
resolve_key(BranchTable *t, BranchPoint *p, Datum *keys, KeyState *st)
{
	if (!resolve_levels(t, p, keys, st))
		resolve_main(t, p, keys, st);
}

PG_FUNCTION_INFO_V1(gnomon_branch_pick);

/*
 * gnomon.branch_pick_c(table_id integer, place integer, branch integer, id bigint, no_row boolean,
 *                      VARIADIC key "any") returns boolean:
 * whether the row of `place` holds the key's state on the selected branch (see the top) and is a row (no_row false):
 *   place 0: main's live row (branch and id unused);
 *   place 1: a branch row of branch `branch` (no_row: a tombstone, never picked, though it still hides the key);
 *   place 2: a branch history row of branch `branch`, version `id` (no_row: its image is no row);
 *   place 3: a version of main's history, `id` its g_vid (no_row: an insert, whose image is no row).
 */
Datum
gnomon_branch_pick(PG_FUNCTION_ARGS)
{
	int32		table_id = PG_GETARG_INT32(0);
	int32		place = PG_GETARG_INT32(1);
	int32		branch = PG_GETARG_INT32(2);
	int64		id = PG_GETARG_INT64(3);
	PickCache  *c = (PickCache *) fcinfo->flinfo->fn_extra;
	BranchTable *t;
	int			nkeys = PG_NARGS() - 5;
	bool		same;

	if (PG_ARGISNULL(4) || PG_GETARG_BOOL(4))
		PG_RETURN_BOOL(false);
	for (int i = 0; i < nkeys; i++)
		if (PG_ARGISNULL(5 + i))
			PG_RETURN_BOOL(false);	/* keys are never null */
	t = lookup_branch_table(table_id);
	if (nkeys != t->nkeys)
		elog(ERROR, "gnomon: gnomon.branch_pick_c got %d key values for table %d, which has %d key columns", nkeys, table_id, t->nkeys);
	if (c == NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);

		c = palloc0(sizeof(PickCache));
		for (int i = 0; i < nkeys; i++)
		{
			c->argtypes[i] = get_fn_expr_argtype(fcinfo->flinfo, 5 + i);
			get_typlenbyval(c->argtypes[i], &c->typlen[i], &c->typbyval[i]);
		}
		MemoryContextSwitchTo(old);
		/* it reads the table's branch rows and history directly: only for a role that may read the table or its
		 * branch view (once per statement) */
		if (pg_class_aclcheck(t->main_relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK
			&& (!OidIsValid(t->view_relid) || pg_class_aclcheck(t->view_relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to read the branch rows of table %s", get_rel_name(t->main_relid)),
					 errhint("Grant SELECT on the table, or on its branch view.")));
		c->point = load_point(fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = c;
	}
	if (!c->too_old_checked)
	{
		/* a point whose main snapshot predates the table's tracking: GN012 */
		if (!visible(t->track_xid, c->point->main_snap))
			raise_through_sql("select gnomon.point_too_old($1, gnomon.current_point())", table_id);
		c->too_old_checked = true;
	}
	if (place == 1 || place == 2)
	{
		/* a row of a branch the chain does not read (a full scan meets every branch's rows): no probe */
		bool		in_chain = false;

		for (int i = 0; i < c->point->nlevels && !in_chain; i++)
			in_chain = c->point->chain[i] == branch;
		if (!in_chain)
			PG_RETURN_BOOL(false);
	}
	same = c->has_key;
	for (int i = 0; same && i < nkeys; i++)
		same = datumIsEqual(c->keys[i], PG_GETARG_DATUM(5 + i), c->typbyval[i], c->typlen[i]);
	if (!same)
	{
		MemoryContext old = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
		Datum		keys[GN_MAX_KEYS];

		for (int i = 0; i < nkeys; i++)
		{
			if (c->has_key && !c->typbyval[i])
				pfree(DatumGetPointer(c->keys[i]));
			keys[i] = PG_GETARG_DATUM(5 + i);
			c->keys[i] = datumCopy(keys[i], c->typbyval[i], c->typlen[i]);
		}
		MemoryContextSwitchTo(old);
		c->has_key = false;
		resolve_key(t, c->point, keys, &c->state);
		c->has_key = true;
	}
	switch (place)
	{
		case 0:
			PG_RETURN_BOOL(c->state.level_branch == 0 && c->state.main_vid < 0);
		case 1:
			PG_RETURN_BOOL(c->state.level_branch == branch && c->state.level_current);
		case 2:
			PG_RETURN_BOOL(c->state.level_branch == branch && !c->state.level_current && c->state.bh_vid == id);
		case 3:
			PG_RETURN_BOOL(c->state.level_branch == 0 && c->state.main_vid == id);
		default:
			elog(ERROR, "gnomon: gnomon.branch_pick_c: unknown place %d", place);
	}
	PG_RETURN_BOOL(false);
}

PG_FUNCTION_INFO_V1(gnomon_branch_chain);

/* gnomon.branch_chain_c() returns integer[]: the selected branch's levels, nearest first (once per statement). */
Datum
gnomon_branch_chain(PG_FUNCTION_ARGS)
{
	BranchPoint *p = (BranchPoint *) fcinfo->flinfo->fn_extra;

	if (p == NULL)
	{
		p = load_point(fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = p;
	}
	PG_RETURN_DATUM(p->chain_array);
}


/*
 * Plain index scans for the arms of the C read.
 *
 * Each arm of a branch view's read (a scan filtered by gnomon.branch_pick_c) returns at most a row or two per key, and
 * a point read's cost is mostly the start-up of its scans. The planner, costing them from the tables' statistics,
 * often picks a bitmap heap scan (two plan nodes) for the branch tables and a sequential scan for an empty history
 * partition; both ask the kernel for the relation's size (an lseek) every time the statement starts, which on this
 * machine cost a third of the read's CPU. An inlined SQL function cannot carry enable_bitmapscan = off, so this hook
 * does it: for a scan filtered by gnomon.branch_pick_c that has a plain index path using a condition (the key, pushed
 * down from the query), only the plain index paths are kept. Scans without such a path (a full scan of the view) are
 * left alone. The hook is installed when the library loads, which gnomon.branch_pick_c's planner support function
 * (gnomon.branch_pick_support) makes happen while the first statement naming it is planned.
 */
static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

static bool
is_branch_pick(Node *clause)
{
	FuncExpr   *f;
	char	   *name;
	bool		match;

	if (clause == NULL || !IsA(clause, FuncExpr))
		return false;
	f = (FuncExpr *) clause;
	name = get_func_name(f->funcid);
	match = name != NULL && strcmp(name, "branch_pick_c") == 0;
	if (match)
	{
		char	   *ns = get_namespace_name(get_func_namespace(f->funcid));

		match = ns != NULL && strcmp(ns, "gnomon") == 0;
	}
	return match;
}

static void
branch_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	ListCell   *lc;
	bool		picked = false;
	List	   *kept = NIL;
	List	   *saved;
	List	   *saved_partial;
	bool		unparameterized = false;
	bool		bitmapscan = enable_bitmapscan;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);
	if (rte->rtekind != RTE_RELATION || rel->rtekind != RTE_RELATION
		|| (rel->reloptkind != RELOPT_BASEREL && rel->reloptkind != RELOPT_OTHER_MEMBER_REL))
		return;
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

		if (is_branch_pick((Node *) ri->clause))
		{
			picked = true;
			break;
		}
	}
	if (!picked)
		return;
	/* the index paths again, with bitmap scans disabled (a plain index path that a cheaper bitmap path dominated is no
	 * longer in rel->pathlist), kept when one of them uses a condition of the query's own (not parameterized by
	 * another relation: a join on the key keeps every path, since the scan must also be possible on its own) */
	saved = rel->pathlist;
	saved_partial = rel->partial_pathlist;
	rel->pathlist = NIL;
	PG_TRY();
	{
		enable_bitmapscan = false;
		create_index_paths(root, rel);
	}
	PG_FINALLY();
	{
		enable_bitmapscan = bitmapscan;
	}
	PG_END_TRY();
	foreach(lc, rel->pathlist)
	{
		Path	   *path = (Path *) lfirst(lc);

		if (IsA(path, IndexPath) && ((IndexPath *) path)->indexclauses != NIL)
		{
			kept = lappend(kept, path);
			if (path->param_info == NULL)
				unparameterized = true;
		}
	}
	if (!unparameterized)
	{
		rel->pathlist = saved;
		rel->partial_pathlist = saved_partial;
		return;
	}
	rel->pathlist = kept;
	rel->partial_pathlist = NIL;
}

void
gnomon_branch_init(void)
{
	/* once per process: a second build of the module loaded into the same session may resolve this global symbol to
	 * the first one's, and a hook that became its own predecessor would call itself forever */
	if (set_rel_pathlist_hook == branch_set_rel_pathlist)
		return;
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = branch_set_rel_pathlist;
	CacheRegisterRelcacheCallback(invalidate_branch_tables, (Datum) 0);
}

PG_FUNCTION_INFO_V1(gnomon_branch_pick_support);

/*
 * gnomon.branch_pick_support(internal) returns internal: gnomon.branch_pick_c's planner support function. It answers
 * no request; the planner calling it loads this library, and with it the hook above, before the scans of the first
 * statement that names gnomon.branch_pick_c are planned.
 */
Datum
gnomon_branch_pick_support(PG_FUNCTION_ARGS)
{
	PG_RETURN_POINTER(NULL);
}

PG_FUNCTION_INFO_V1(gnomon_branch_floor);

/*
 * gnomon.branch_floor_c() returns integer: least(1, the selected branch's id), 1 when none is selected. A logged
 * branch reads only logged levels (ids > 0); a scratch branch's levels have ids at least its own (ancestors were
 * created first). The C read's branch arms bound g_branch by it, so the partition the branch cannot read is pruned when
 * the statement starts; evaluated once per statement.
 */
Datum
gnomon_branch_floor(PG_FUNCTION_ARGS)
{
	int32		id;

	if (!selected_branch_id(&id))
		PG_RETURN_INT32(1);
	PG_RETURN_INT32(id < 1 ? id : 1);
}


/*
 * How many levels branch id has under the active snapshot (the cached point's, when it matches), or -1 when the
 * snapshot does not see the branch; never raises. The planner evaluates gnomon.branch_hist_bound_c while it estimates
 * (a stable function), and a function's statements are planned before their own snapshot is taken (PostgreSQL 14 on:
 * _SPI_execute_plan plans, then pushes it), under the calling statement's: a branch created earlier in the same
 * function is not seen there yet, which load_point would report as dropped. The read itself (the pick, under the
 * statement's snapshot) raises for a branch that is really gone.
 */
static int
point_levels(int32 id)
{
	CatalogProbe cp;
	int			levels = -1;

	if (point_key_matches(id, GetActiveSnapshot()))
		return pc.point->nlevels;
	if (catalog_probe_begin(&cp, id))
	{
		bool		chain_null;
		Datum		chain = slot_getattr(cp.slot, branch_chain_att, &chain_null);

		/* (a branch of main stores no chain: one level, as load_point reads it) */
		levels = chain_null ? 1 : ArrayGetNItems(ARR_NDIM(DatumGetArrayTypeP(chain)), ARR_DIMS(DatumGetArrayTypeP(chain)));
	}
	catalog_probe_end(&cp);
	return levels;
}

PG_FUNCTION_INFO_V1(gnomon_branch_hist_bound);

/*
 * gnomon.branch_hist_bound_c(upper boolean) returns integer: the lower (upper false) or upper bound of the branch ids
 * whose branch history the C read of the selected branch may need. A read of a branch now reads its own level as it
 * is (never from the branch history); only an ancestor level, read at a child's cutoff, may need a row's image from
 * before a later write. So for a branch of main (one level) the bounds are 1 and 0: the branch-history arm's
 * condition (g_branch between the two) selects neither partition ([1, max] the logged one, [min, 0) the scratch one)
 * and PostgreSQL leaves the arm out when the statement starts. Else (or with no branch selected: the pick raises)
 * least(1, id) and the largest integer, as gnomon.branch_floor_c() bounds the branch rows. The point comes from
 * load_point, so the pick of the same statement does not probe the catalog again.
 */
Datum
gnomon_branch_hist_bound(PG_FUNCTION_ARGS)
{
	bool		upper = PG_GETARG_BOOL(0);
	int32		id;

	if (!selected_branch_id(&id))
		PG_RETURN_INT32(upper ? PG_INT32_MAX : 1);
	if (point_levels(id) == 1)
		PG_RETURN_INT32(upper ? 0 : 1);
	PG_RETURN_INT32(upper ? PG_INT32_MAX : (id < 1 ? id : 1));
}

/* For branch_scan.c (branch.h) */
BranchTable *
gnomon_branch_table(int32 table_id)
{
	return lookup_branch_table(table_id);
}

BranchPoint *
gnomon_branch_point(MemoryContext mcxt)
{
	int32		id;

	/* the cached point itself when it matches (no copy: the caller runs no SQL while it holds it) */
	if (selected_branch_id(&id) && point_key_matches(id, GetActiveSnapshot()))
		return pc.point;
	return load_point(mcxt);
}

void
gnomon_branch_resolve_key(BranchTable *t, BranchPoint *p, Datum *keys, KeyState *st)
{
	resolve_key(t, p, keys, st);
}

bool
gnomon_branch_resolve_levels(BranchTable *t, BranchPoint *p, Datum *keys, KeyState *st)
{
	return resolve_levels(t, p, keys, st);
}

void
gnomon_branch_resolve_main(BranchTable *t, BranchPoint *p, Datum *keys, KeyState *st)
{
	resolve_main(t, p, keys, st);
}

bool
gnomon_branch_visible(uint64 xid, Datum snap)
{
	return visible(xid, snap);
}

void
gnomon_branch_raise(const char *sql, int32 arg)
{
	raise_through_sql(sql, arg);
}
