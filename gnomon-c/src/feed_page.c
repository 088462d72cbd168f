/*
 * feed_page.c: the change feed's page of main with its images, in C (gnomon.feed_page_c). gnomon.feed_page_plan runs
 * it instead of the table's generated gnomon_t.<base>_page when the module is enabled (gnomon.use_c_module(true)) and
 * gnomon.feed_page_c is on; it takes the same parameters (and the table's id first) and returns the same rows, the
 * images byte for byte as row_to_json writes them.
 *
 * What the SQL page spends its time on (docs/performance.md, "The C page reader"): the executor's window, sorts and
 * subplans per version, and row_to_json, which looks up every column's type category and output function again for
 * every row. Here, per page:
 *   1. one statement reads the page's versions from the history (the range lo..hi of xids, the snapshot tests), as
 *      gnomon_t.<base>_changes does; each version's transaction key is a binary search of sx (as width_bucket);
 *   2. the versions after (from_tkey, from_vid) and up to (to_tkey, to_vid) are sorted by key and version key in C,
 *      which gives each version the next one of its key in the page (the SQL page's window);
 *   3. for a key's last version in the page, a probe of the table's primary key per key, in key order, finds the
 *      live rows, and a probe per history partition that can hold them (its (key, g_xid) index) the next versions of
 *      the keys the live row does not answer (xmin not the version's transaction, a split transaction, xids 2^32
 *      old), as the SQL page's three subplans do in that order (statements instead, where a direct probe would bypass
 *      row-level security or a missing privilege, or a partition lacks the index). A probe starts at the btree leaf
 *      the key before ended on when the key lies within it (leaf_probe.c), else descends; an index scan
 *      (index_rescan) takes the keys whose entries may run onto the next leaf, and every key in SERIALIZABLE;
 *   4. images are rendered as row_to_json does (feed_json.c), with each column's category and output function
 *      looked up once per page and a memory context reset per image.
 * Branch feeds and consumers without images stay on the SQL page.
 *
 * gnomon.feed_batch_c (at the end) computes a batch's order, the first statement of a page, for a consumer of one
 * table on main: the versions' xids and version keys from a scan of the history into a receiver of its own, sorted
 * here. It keeps the rows it scans for the page that reads the same batch next in the same transaction (BatchCache),
 * which then skips its own scan (step 1 above).
 */
#include "postgres.h"

#include <malloc.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/transam.h"
#include "catalog/pg_type.h"
#include "common/jsonapi.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "parser/parse_coerce.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgroids.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/rls.h"
#include "utils/ruleutils.h"
#include "utils/typcache.h"
#include "utils/snapmgr.h"
#include "utils/xid8.h"
#include "storage/proc.h"

#include "feed_json.h"
#include "feed_page.h"
#include "leaf_probe.h"
#include "read.h"

PG_FUNCTION_INFO_V1(gnomon_feed_page_c);

static bool malloc_tuned = false;

/* One version of the page */
typedef struct Version
{
	HeapTuple	tup;			/* the history row (SPI's copy) */
	uint64		xid;
	int64		vid;
	int64		tkey;
	char		op;
	int			next;			/* the next version of its key in the page, or -1 */
	text	   *key;
	text	   *before;
	text	   *after;
	HeapTuple	live;			/* the live row of its key (probed for a key's last version only) */
	TransactionId live_xmin;
} Version;

typedef struct KeyCmp
{
	int			nkeys;
	int		   *attnos;
	FmgrInfo  **cmp;
	Oid		   *collations;
	TupleDesc	desc;
	Version    *vers;
	/* each version's key values, taken from its tuple once: version i's column k at [i * nkeys + k] */
	Datum	   *values;
	bool	   *nulls;
	/* one int4 or int8 key column: compared as integers, without its comparison function */
	Oid			int_key;
} KeyCmp;


/* Two versions' keys (their numbers) compared with their types' btree order (the SQL page's window partitions by them) */
static int
compare_keys(KeyCmp *kc, int a, int b)
{
	if (kc->int_key != InvalidOid && !kc->nulls[a] && !kc->nulls[b])
	{
		int64		ia = kc->int_key == INT4OID ? DatumGetInt32(kc->values[a]) : DatumGetInt64(kc->values[a]);
		int64		ib = kc->int_key == INT4OID ? DatumGetInt32(kc->values[b]) : DatumGetInt64(kc->values[b]);

		return ia < ib ? -1 : ia > ib ? 1 : 0;
	}
	for (int k = 0; k < kc->nkeys; k++)
	{
		bool		na = kc->nulls[a * kc->nkeys + k],
					nb = kc->nulls[b * kc->nkeys + k];
		Datum		da = kc->values[a * kc->nkeys + k];
		Datum		db = kc->values[b * kc->nkeys + k];
		int32		r;

		if (na || nb)
		{
			if (na != nb)
				return na ? 1 : -1;
			continue;
		}
		r = DatumGetInt32(FunctionCall2Coll(kc->cmp[k], kc->collations[k], da, db));
		if (r != 0)
			return r;
	}
	return 0;
}

/* A version's place in the sort by an integer key: the key, the version key, the version's number */
typedef struct IntKeyed
{
	int64		key;
	int64		vid;
	int			i;
} IntKeyed;

/* sort_int_keyed: by key, then version key, the comparison inlined (no function call per comparison) */
#define ST_SORT sort_int_keyed
#define ST_ELEMENT_TYPE IntKeyed
#define ST_COMPARE(a, b) ((a)->key != (b)->key ? ((a)->key < (b)->key ? -1 : 1) \
						  : (a)->vid < (b)->vid ? -1 : (a)->vid > (b)->vid ? 1 : 0)
#define ST_SCOPE static
#define ST_DEFINE
#include "lib/sort_template.h"

/* qsort_arg: by key, then version key */
static int
cmp_key(const void *a, const void *b, void *arg)
{
	KeyCmp	   *kc = (KeyCmp *) arg;
	int			ia = *(const int *) a;
	int			ib = *(const int *) b;
	Version    *va = &kc->vers[ia];
	Version    *vb = &kc->vers[ib];
	int			r = compare_keys(kc, ia, ib);

	if (r != 0)
		return r;
	return va->vid < vb->vid ? -1 : va->vid > vb->vid ? 1 : 0;
}

/* qsort_arg: the page's order, by transaction key, then version key */
static int
cmp_order(const void *a, const void *b, void *arg)
{
	Version    *vers = (Version *) arg;
	Version    *va = &vers[*(const int *) a];
	Version    *vb = &vers[*(const int *) b];

	if (va->tkey != vb->tkey)
		return va->tkey < vb->tkey ? -1 : 1;
	return va->vid < vb->vid ? -1 : va->vid > vb->vid ? 1 : 0;
}

/*
 * A batch's versions are the history's versions whose transactions became visible between the snapshots prev and cur,
 * and not at the consumer's start, as gnomon_t.<base>_changes reads them: BATCH_RANGE (over h, $1 prev and $2 cur)
 * bounds a scan of the history (its BRIN index on g_xid), and in_batch tests each version it returns.
 */
#define BATCH_RANGE "h.g_xid >= pg_snapshot_xmin($1) and h.g_xid < pg_snapshot_xmax($2)"

static inline bool
in_batch(Datum xid, Datum prev, Datum cur, Datum start)
{
	return DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot, xid, cur)) &&
		!DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot, xid, prev)) &&
		!DatumGetBool(DirectFunctionCall2(pg_visible_in_snapshot, xid, start));
}

/* A backend that reads pages keeps up to 64 MB of freed memory for the next one (see gnomon_feed_page_c) */
static void
tune_malloc(void)
{
	if (!malloc_tuned)
	{
		mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
		mallopt(M_TRIM_THRESHOLD, 64 * 1024 * 1024);
		malloc_tuned = true;
	}
}

/*
 * A batch's versions, kept by gnomon.feed_batch_c for the page that reads the same batch next in the same transaction
 * (gnomon.feed_read computes a batch's order, then reads its page): the page then takes its versions from here
 * instead of scanning the history again. Its memory is a child of TopTransactionContext, gone at the transaction's end;
 * the local transaction id tells a live cache from a stale pointer. A batch's versions never change once its ticks
 * exist (history rows are never updated; retention keeps what a registered consumer needs), so any later statement
 * of the transaction reads the same rows. Up to BATCH_CACHE_BYTES of rows: a larger batch is not kept.
 */
#define BATCH_CACHE_BYTES (64 * 1024 * 1024)

typedef struct BatchCache
{
	MemoryContext cxt;			/* NULL: nothing kept */
	LocalTransactionId lxid;
	Oid			hist;
	struct varlena *snaps[3];	/* prev, cur, start */
	TupleDesc	desc;
	HeapTuple  *tups;
	int			ntups;
	int			cap;
	Size		bytes;
	bool		complete;		/* the scan ended (an error inside a subtransaction leaves it false) */
} BatchCache;

static BatchCache batch_cache;

/* Whether the cache holds this transaction's rows of the batch (hist, prev, cur, start); forgets a stale one */
static bool
batch_cache_holds(Oid hist, Datum *snaps)
{
	if (batch_cache.cxt == NULL)
		return false;
	if (batch_cache.lxid != MyProc->lxid)
	{
		/* (its context went with its transaction) */
		memset(&batch_cache, 0, sizeof(batch_cache));
		return false;
	}
	if (!batch_cache.complete || batch_cache.hist != hist)
		return false;
	for (int i = 0; i < 3; i++)
	{
		struct varlena *a = (struct varlena *) DatumGetPointer(snaps[i]);

		if (VARSIZE_ANY(a) != VARSIZE_ANY(batch_cache.snaps[i]) ||
			memcmp(a, batch_cache.snaps[i], VARSIZE_ANY(a)) != 0)
			return false;
	}
	/* the history's columns as they were (a column added since, in this transaction, is not in the kept rows) */
	{
		Relation	h = relation_open(hist, AccessShareLock);
		TupleDesc	d = RelationGetDescr(h);
		int			k = 0;
		bool		same = true;

		/* (h.* of the kept rows: the history's columns that are not dropped, in order) */
		for (int i = 0; same && i < d->natts; i++)
		{
			Form_pg_attribute a = TupleDescAttr(d, i);
			Form_pg_attribute b;

			if (a->attisdropped)
				continue;
			if (k >= batch_cache.desc->natts)
			{
				same = false;
				break;
			}
			b = TupleDescAttr(batch_cache.desc, k++);
			same = a->atttypid == b->atttypid && strcmp(NameStr(a->attname), NameStr(b->attname)) == 0;
		}
		same = same && k == batch_cache.desc->natts;
		relation_close(h, AccessShareLock);
		if (!same)
			return false;
	}
	return true;
}

/* Drops what the cache holds */
static void
batch_cache_drop(void)
{
	if (batch_cache.cxt != NULL && batch_cache.lxid == MyProc->lxid)
		MemoryContextDelete(batch_cache.cxt);
	memset(&batch_cache, 0, sizeof(batch_cache));
}

/*
 * The tracked table of a feed function's table id, as SPI's one row (relid, schema_name, table_name, history_table,
 * key_columns, the history's oid); an error naming the function (fn) when no tracked table has the id
 */
static void
feed_table(int32 table_id, const char *fn)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(table_id)};
	int			ret;

	ret = SPI_execute_with_args("select t.relid, t.schema_name::text, t.table_name::text, t.history_table::text, t.key_columns::text[], "
								"format('gnomon_t.%I', t.history_table)::regclass::oid "
								"from gnomon.tracked_table t where t.table_id = $1", 1, argtypes, args, NULL, true, 1);
	if (ret != SPI_OK_SELECT || SPI_processed != 1)
		ereport(ERROR,
				(errcode(MAKE_SQLSTATE('G', 'N', '0', '3', '6')),
				 errmsg("%s: no tracked table has the id %d", fn, table_id),
				 errhint("gnomon.feed_read calls it with the ids of a consumer's tables; call gnomon.feed_read.")));
}


/* The history column's key equality condition against z.<k>, with the column's collation when it is not its type's */
static void
append_key_conditions(StringInfo sql, const char *alias, int nkeys, char **keys, TupleDesc desc, int *attnos)
{
	for (int k = 0; k < nkeys; k++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, attnos[k] - 1);

		appendStringInfo(sql, " and %s.%s = z.k%d", alias, quote_identifier(keys[k]), k + 1);
		if (OidIsValid(a->attcollation) && a->attcollation != get_typcollation(a->atttypid))
			appendStringInfo(sql, " collate %s", generate_collation_name(a->attcollation));
	}
}

/* unnest(<params>, $first, $first+1, ...) z(<names>, k1, k2, ...): the probed versions, one row each */
static void
append_unnest(StringInfo sql, const char *params, const char *names, int first, int nkeys)
{
	appendStringInfo(sql, "unnest(%s", params);
	for (int k = 0; k < nkeys; k++)
		appendStringInfo(sql, ", $%d", first + k);
	appendStringInfo(sql, ") z(%s", names);
	for (int k = 0; k < nkeys; k++)
		appendStringInfo(sql, ", k%d", k + 1);
	appendStringInfoChar(sql, ')');
}

static ArrayType *
int_array(int *values, int n)
{
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));

	for (int i = 0; i < n; i++)
		d[i] = Int32GetDatum(values[i]);
	return construct_array(d, n, INT4OID, 4, true, TYPALIGN_INT);
}

/* An array of n 8-byte by-value datums of type (int8 or xid8) */
static Datum
datum8_array(Datum *d, int n, Oid type)
{
	return PointerGetDatum(construct_array(d, n, type, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

/* The key column k of the versions idx[0..n) as an array of its type */
static ArrayType *
key_array(Version *vers, int *idx, int n, TupleDesc desc, int attno)
{
	Form_pg_attribute a = TupleDescAttr(desc, attno - 1);
	Datum	   *d = palloc(sizeof(Datum) * Max(n, 1));
	int16		typlen;
	bool		typbyval;
	char		typalign;

	get_typlenbyvalalign(a->atttypid, &typlen, &typbyval, &typalign);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;

		d[i] = heap_getattr(vers[idx[i]].tup, attno, desc, &isnull);
	}
	return construct_array(d, n, a->atttypid, typlen, typbyval, typalign);
}

/*
 * Runs a probe statement over the versions idx[0..n): its first nfixed parameters given, then one array per key
 * column (the versions' key values, in the column's type); returns its rows.
 */
static SPITupleTable *
run_probe(const char *sql, int nfixed, Oid *ptypes, Datum *pargs, Version *vers, int *idx, int n, TupleDesc hdesc,
		  int nkeys, int *key_attnos, const char *what)
{
	int			ret;

	for (int k = 0; k < nkeys; k++)
	{
		ptypes[nfixed + k] = get_array_type(TupleDescAttr(hdesc, key_attnos[k] - 1)->atttypid);
		pargs[nfixed + k] = PointerGetDatum(key_array(vers, idx, n, hdesc, key_attnos[k]));
	}
	ret = SPI_execute_with_args(sql, nfixed + nkeys, ptypes, pargs, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "gnomon.feed_page_c: probing %s failed: %s", what, SPI_result_code_string(ret));
	return SPI_tuptable;
}

/*
 * The live rows of the versions idx[0..n) by their table's primary key, one index_rescan each in one index scan (the
 * statement's snapshot), into each version's live and live_xmin. False, having probed nothing, where a direct probe
 * would not read what the SQL page reads: no primary key, no SELECT privilege on the table, row-level security; the
 * caller then sends the probes as a statement.
 */
static bool
probe_live(Relation rel, Version *vers, int *idx, int n, TupleDesc hdesc)
{
	Oid			pk = RelationGetPrimaryKeyIndex(rel);
	Relation	ind;
	RegProcedure *procs;
	ScanKeyData sk[INDEX_MAX_KEYS];
	int			hatt[INDEX_MAX_KEYS];
	int			nk;
	IndexScanDesc scan = NULL;
	TupleTableSlot *slot;
	LeafProbe	lp;
	bool		leaf;

	if (!OidIsValid(pk) || pg_class_aclcheck(RelationGetRelid(rel), GetUserId(), ACL_SELECT) != ACLCHECK_OK ||
		(rel->rd_rel->relrowsecurity && check_enable_rls(RelationGetRelid(rel), InvalidOid, false) != RLS_NONE))
		return false;
	ind = index_open(pk, AccessShareLock);
	nk = ind->rd_index->indnkeyatts;
	for (int i = 0; i < nk; i++)
	{
		AttrNumber	a = ind->rd_index->indkey.values[i];

		hatt[i] = a > 0 ? gnomon_attno_named(hdesc, NameStr(TupleDescAttr(RelationGetDescr(rel), a - 1)->attname), 4) : 0;
		if (hatt[i] == 0)
		{
			index_close(ind, AccessShareLock);
			return false;
		}
	}
	procs = gnomon_key_procs(ind);
	slot = table_slot_create(rel, NULL);
	leaf = gnomon_leaf_probe_begin(&lp, rel, ind, nk, nk, GetActiveSnapshot());
	for (int j = 0; j < n; j++)
	{
		Version    *v = &vers[idx[j]];
		Datum		values[INDEX_MAX_KEYS];
		bool		nulls[INDEX_MAX_KEYS];
		bool		found = false;
		int			ntids;

		CHECK_FOR_INTERRUPTS();
		for (int i = 0; i < nk; i++)
			values[i] = heap_getattr(v->tup, hatt[i], hdesc, &nulls[i]);
		ntids = leaf ? gnomon_leaf_probe(&lp, values, nulls) : -1;
		if (ntids >= 0)
		{
			for (int t = 0; t < ntids && !found; t++)
				found = gnomon_leaf_probe_fetch(&lp, t, slot);
		}
		else
		{
			if (scan == NULL)
				scan = index_beginscan(rel, ind, GetActiveSnapshot(), nk, 0);
			for (int i = 0; i < nk; i++)
				ScanKeyEntryInitialize(&sk[i], nulls[i] ? SK_ISNULL : 0, i + 1, BTEqualStrategyNumber,
									   ind->rd_opcintype[i], ind->rd_indcollation[i], procs[i], values[i]);
			index_rescan(scan, sk, nk, NULL, 0);
			found = index_getnext_slot(scan, ForwardScanDirection, slot);
		}
		if (found)
		{
			bool		should_free;
			HeapTuple	t = ExecFetchSlotHeapTuple(slot, false, &should_free);

			v->live = should_free ? t : heap_copytuple(t);
			v->live_xmin = HeapTupleHeaderGetRawXmin(t->t_data);
		}
	}
	if (leaf)
	{
		elog(DEBUG1, "gnomon.feed_page_c: %d live probes of %s: " UINT64_FORMAT " on the kept leaf (" UINT64_FORMAT
			 " of them a step right), " UINT64_FORMAT " descents, " UINT64_FORMAT " index scans", n,
			 RelationGetRelationName(ind), lp.kept, lp.stepped, lp.descents, lp.fallbacks);
		gnomon_leaf_probe_end(&lp);
	}
	if (scan != NULL)
		index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	index_close(ind, AccessShareLock);
	return true;
}

/* Keeps the history row in slot (of partition p) as the best next version of v so far when its g_vid is above v's and
 * below the best's */
static void
keep_next(Version *v, TupleTableSlot *slot, int p, int vid_att, HeapTuple *best, int *best_p, int64 *best_vid)
{
	bool		isnull;
	int64		vid = DatumGetInt64(slot_getattr(slot, vid_att, &isnull));

	if (vid > v->vid && vid < *best_vid)
	{
		if (*best != NULL)
			heap_freetuple(*best);
		*best = ExecCopySlotHeapTuple(slot);
		*best_vid = vid;
		*best_p = p;
	}
}

/*
 * The next version in the history of the key of each version idx[0..n), whose image is the row after that version:
 * an index scan of each partition that can hold a version of an xid at or above prev's xmin (its range's upper bound
 * above it), on its (key columns, g_xid) index, rescanned for each key; of what it finds, the smallest g_vid above the
 * version's own. Renders it into the version's after and sets found[]. False, having probed nothing, where a partition
 * lacks that index or is partitioned itself: the caller then sends the probes as a statement.
 */
static bool
probe_history(Oid hist, Datum prev, Version *vers, int *idx, int n, TupleDesc hdesc, int nkeys, char **keys,
			  int *key_attnos, int ncols, char **col_names, bool *found, StringInfo buf, MemoryContext scratch)
{
	Oid			argtypes[3] = {OIDOID, TEXTARRAYOID, PG_SNAPSHOTOID};
	Datum		args[3];
	Datum	   *kd = palloc(sizeof(Datum) * nkeys);
	int			np;
	Oid		   *part_oids,
			   *ind_oids;
	Relation   *parts,
			   *inds;
	IndexScanDesc *scans;
	TupleTableSlot **slots;
	Image	   *imgs;
	int		   *vid_att;
	RegProcedure *ge_procs;
	LeafProbe  *lps;
	bool	   *leaf;
	Datum		values[INDEX_MAX_KEYS];
	bool		nulls[INDEX_MAX_KEYS];
	Datum		floor;
	int			ret;

	for (int k = 0; k < nkeys; k++)
		kd[k] = PointerGetDatum(cstring_to_text(keys[k]));
	args[0] = ObjectIdGetDatum(hist);
	args[1] = PointerGetDatum(construct_array(kd, nkeys, TEXTOID, -1, false, TYPALIGN_INT));
	args[2] = prev;
	ret = SPI_execute_with_args(
		"select c.oid, (select i.indexrelid from pg_index i"
		"                where i.indrelid = c.oid and i.indnkeyatts = cardinality($2) + 1 and i.indnatts = i.indnkeyatts"
		"                  and array(select a.attname::text from unnest(i.indkey::int2[]) with ordinality k(n, o)"
		"                             join pg_attribute a on a.attrelid = c.oid and a.attnum = k.n order by k.o)"
		"                      = $2 || 'g_xid'::text"
		"                limit 1), c.relkind = 'r', pg_snapshot_xmin($3)"
		"  from pg_inherits h join pg_class c on c.oid = h.inhrelid"
		" where h.inhparent = $1"
		"   and coalesce(substring(pg_get_expr(c.relpartbound, c.oid) from 'TO \\(''(\\d+)''\\)')::numeric"
		"                > pg_snapshot_xmin($3)::text::numeric, true)",
		3, argtypes, args, NULL, true, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "gnomon.feed_page_c: reading the history's partitions failed: %s", SPI_result_code_string(ret));
	np = SPI_processed;
	part_oids = palloc(sizeof(Oid) * Max(np, 1));
	ind_oids = palloc(sizeof(Oid) * Max(np, 1));
	floor = (Datum) 0;
	for (int p = 0; p < np; p++)
	{
		HeapTuple	t = SPI_tuptable->vals[p];
		TupleDesc	d = SPI_tuptable->tupdesc;
		bool		isnull,
					ind_null,
					plain_null;

		part_oids[p] = DatumGetObjectId(SPI_getbinval(t, d, 1, &isnull));
		ind_oids[p] = DatumGetObjectId(SPI_getbinval(t, d, 2, &ind_null));
		if (ind_null || !DatumGetBool(SPI_getbinval(t, d, 3, &plain_null)))
			return false;
		floor = SPI_getbinval(t, d, 4, &isnull);
	}
	parts = palloc(sizeof(Relation) * Max(np, 1));
	inds = palloc(sizeof(Relation) * Max(np, 1));
	scans = palloc(sizeof(IndexScanDesc) * Max(np, 1));
	slots = palloc(sizeof(TupleTableSlot *) * Max(np, 1));
	imgs = palloc(sizeof(Image) * Max(np, 1));
	vid_att = palloc(sizeof(int) * Max(np, 1));
	ge_procs = palloc(sizeof(RegProcedure) * Max(np, 1));
	lps = palloc(sizeof(LeafProbe) * Max(np, 1));
	leaf = palloc(sizeof(bool) * Max(np, 1));
	for (int p = 0; p < np; p++)
	{
		Oid			ge;

		parts[p] = table_open(part_oids[p], AccessShareLock);
		inds[p] = index_open(ind_oids[p], AccessShareLock);
		ge = get_opfamily_member(inds[p]->rd_opfamily[nkeys], inds[p]->rd_opcintype[nkeys],
								 inds[p]->rd_opcintype[nkeys], BTGreaterEqualStrategyNumber);
		if (!OidIsValid(ge))
			elog(ERROR, "gnomon.feed_page_c: no >= operator for g_xid in index %s", RelationGetRelationName(inds[p]));
		ge_procs[p] = get_opcode(ge);
		vid_att[p] = gnomon_attno_named(RelationGetDescr(parts[p]), "g_vid", 1);
		gnomon_image_init(&imgs[p], ncols, col_names, RelationGetDescr(parts[p]), 4, true);
		slots[p] = table_slot_create(parts[p], NULL);
		scans[p] = NULL;
		leaf[p] = gnomon_leaf_probe_begin(&lps[p], parts[p], inds[p], nkeys + 1, nkeys, GetActiveSnapshot());
	}
	for (int j = 0; j < n; j++)
	{
		Version    *v = &vers[idx[j]];
		HeapTuple	best = NULL;
		int			best_p = -1;
		int64		best_vid = PG_INT64_MAX;

		CHECK_FOR_INTERRUPTS();
		for (int k = 0; k < nkeys; k++)
			values[k] = heap_getattr(v->tup, key_attnos[k], hdesc, &nulls[k]);
		values[nkeys] = floor;
		nulls[nkeys] = false;
		for (int p = 0; p < np; p++)
		{
			int			ntids = leaf[p] ? gnomon_leaf_probe(&lps[p], values, nulls) : -1;

			if (ntids >= 0)
			{
				for (int t = 0; t < ntids; t++)
				{
					/*
					 * (not the version's own entry, whose row the page's scan read: its version key is not above its
					 * own; history rows are never updated, so an entry's TID is its row's)
					 */
					if (v->tup->t_tableOid == part_oids[p] && ItemPointerEquals(&lps[p].tids[t], &v->tup->t_self))
						continue;
					if (gnomon_leaf_probe_fetch(&lps[p], t, slots[p]))
						keep_next(v, slots[p], p, vid_att[p], &best, &best_p, &best_vid);
				}
			}
			else
			{
				ScanKeyData sk[INDEX_MAX_KEYS];
				RegProcedure *procs = gnomon_key_procs(inds[p]);

				if (scans[p] == NULL)
					scans[p] = index_beginscan(parts[p], inds[p], GetActiveSnapshot(), nkeys + 1, 0);
				for (int k = 0; k < nkeys; k++)
					ScanKeyEntryInitialize(&sk[k], nulls[k] ? SK_ISNULL : 0, k + 1, BTEqualStrategyNumber,
										   inds[p]->rd_opcintype[k], inds[p]->rd_indcollation[k], procs[k], values[k]);
				ScanKeyEntryInitialize(&sk[nkeys], 0, nkeys + 1, BTGreaterEqualStrategyNumber,
									   inds[p]->rd_opcintype[nkeys], inds[p]->rd_indcollation[nkeys], ge_procs[p], floor);
				index_rescan(scans[p], sk, nkeys + 1, NULL, 0);
				while (index_getnext_slot(scans[p], ForwardScanDirection, slots[p]))
					keep_next(v, slots[p], p, vid_att[p], &best, &best_p, &best_vid);
			}
		}
		if (best != NULL)
		{
			v->after = gnomon_render_image(&imgs[best_p], best, RelationGetDescr(parts[best_p]), buf, scratch);
			found[idx[j]] = true;
			heap_freetuple(best);
		}
	}
	for (int p = 0; p < np; p++)
	{
		if (leaf[p])
		{
			elog(DEBUG1, "gnomon.feed_page_c: %d history probes of %s: " UINT64_FORMAT " on the kept leaf ("
				 UINT64_FORMAT " of them a step right), " UINT64_FORMAT " descents, " UINT64_FORMAT " index scans", n,
				 RelationGetRelationName(inds[p]), lps[p].kept, lps[p].stepped, lps[p].descents, lps[p].fallbacks);
			gnomon_leaf_probe_end(&lps[p]);
		}
		if (scans[p] != NULL)
			index_endscan(scans[p]);
		ExecDropSingleTupleTableSlot(slots[p]);
		index_close(inds[p], AccessShareLock);
		table_close(parts[p], AccessShareLock);
	}
	return true;
}

Datum
gnomon_feed_page_c(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;

	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	gnomon_feed_page_run(fcinfo, rsinfo->setResult, rsinfo->setDesc, NULL);
	return (Datum) 0;
}

/*
 * The page of gnomon.feed_page_c's arguments (in fcinfo, the same 18), its rows put into ts: gnomon.feed_page_c's
 * columns, or, given a shape, gnomon.feed_read's (feed_read.c calls it for a page its plan gives the C page).
 */
void
gnomon_feed_page_run(FunctionCallInfo fcinfo, Tuplestorestate *ts, TupleDesc ts_desc, const FeedReadShape *shape)
{
	int32		table_id;
	Datum		prev,
				cur,
				start;
	bool		images;
	ArrayType  *sx_arr,
			   *st_arr;
	uint64		split = 0,
				recent = 0;
	bool		has_split;
	bool		has_recent;
	int64		from_tkey,
				from_vid,
				to_tkey,
				to_vid;
	Datum	   *sx_d,
			   *st_d;
	int			nsx,
				nst;
	MemoryContext scratch;
	StringInfoData sql;
	StringInfoData buf;
	Oid			argtypes[8];
	Datum		args[8];
	char	   *schema_name,
			   *table_name,
			   *history_table;
	char	  **keys;
	int			nkeys;
	int		   *key_attnos;
	char	  **col_names;
	int			ncols;
	Relation	rel;
	Oid			hist_oid;
	TupleDesc	hdesc;
	Version    *vers;
	int			nvers = 0;
	int		   *perm;
	KeyCmp		kc;
	Image		key_img,
				hist_img;
	int		   *need;
	int			nneed = 0;
	int			ret;

	/*
	 * A page's memory (the history rows, the images, the result and the caller's sort and copies of it: tens of MB
	 * for 10,000 events) is freed at the end of each page; glibc returns blocks that large to the kernel (mmap, or a
	 * trim of the heap's top), so every page faulted its memory in afresh: 26% of a page's CPU (perf). A backend that
	 * reads pages keeps up to 64 MB of freed memory for the next page instead.
	 */
	tune_malloc();
	/* (split and recent, 13 and 14, may be null) */
	for (int i = 0; i <= 17; i++)
		if (i != 13 && i != 14 && PG_ARGISNULL(i))
			return;				/* the SQL page returns no row for a missing bound either */
	table_id = PG_GETARG_INT32(0);
	/* (detoasted once: every version is tested against them) */
	prev = PointerGetDatum(PG_DETOAST_DATUM(PG_GETARG_DATUM(1)));
	cur = PointerGetDatum(PG_DETOAST_DATUM(PG_GETARG_DATUM(2)));
	start = PointerGetDatum(PG_DETOAST_DATUM(PG_GETARG_DATUM(3)));
	images = PG_GETARG_BOOL(4);
	sx_arr = PG_GETARG_ARRAYTYPE_P(5);
	st_arr = PG_GETARG_ARRAYTYPE_P(6);
	from_tkey = PG_GETARG_INT64(9);
	from_vid = PG_GETARG_INT64(10);
	to_tkey = PG_GETARG_INT64(11);
	to_vid = PG_GETARG_INT64(12);
	has_split = !PG_ARGISNULL(13);
	if (has_split)
		split = U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(13));
	/* (no recent: no live row is tested by its xmin, as "xid >= null" is not true in the SQL page) */
	has_recent = !PG_ARGISNULL(14);
	if (has_recent)
		recent = U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(14));
	deconstruct_array(sx_arr, XID8OID, sizeof(uint64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &sx_d, NULL, &nsx);
	deconstruct_array(st_arr, INT8OID, sizeof(int64), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &st_d, NULL, &nst);

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "gnomon: SPI_connect failed");
	scratch = AllocSetContextCreate(CurrentMemoryContext, "gnomon feed page image", ALLOCSET_DEFAULT_SIZES);
	initStringInfo(&sql);
	initStringInfo(&buf);

	/* the table */
	feed_table(table_id, "gnomon.feed_page_c");
	{
		HeapTuple	t = SPI_tuptable->vals[0];
		TupleDesc	d = SPI_tuptable->tupdesc;
		bool		isnull;
		Oid			relid = DatumGetObjectId(SPI_getbinval(t, d, 1, &isnull));
		Datum	   *kd;

		hist_oid = DatumGetObjectId(SPI_getbinval(t, d, 6, &isnull));
		schema_name = SPI_getvalue(t, d, 2);
		table_name = SPI_getvalue(t, d, 3);
		history_table = SPI_getvalue(t, d, 4);
		deconstruct_array(DatumGetArrayTypeP(SPI_getbinval(t, d, 5, &isnull)), TEXTOID, -1, false, TYPALIGN_INT,
						  &kd, NULL, &nkeys);
		keys = palloc(sizeof(char *) * nkeys);
		for (int k = 0; k < nkeys; k++)
			keys[k] = TextDatumGetCString(kd[k]);
		/* the row type's columns, in its order: the images' keys (row(...)::table in the SQL page) */
		rel = relation_open(relid, AccessShareLock);
		col_names = palloc(sizeof(char *) * RelationGetDescr(rel)->natts);
		ncols = 0;
		for (int i = 0; i < RelationGetDescr(rel)->natts; i++)
		{
			Form_pg_attribute a = TupleDescAttr(RelationGetDescr(rel), i);

			if (!a->attisdropped)
				col_names[ncols++] = pstrdup(NameStr(a->attname));
		}
	}

	/*
	 * 1. the page's versions: the batch's (as gnomon_t.<base>_changes), in the page's range of xids; those
	 * gnomon.feed_batch_c kept when it scanned the batch for its order in this transaction, else a scan
	 */
	{
		Datum		snaps[3] = {prev, cur, start};
		uint64		lo = U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(7));
		uint64		hi = U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(8));
		bool		kept = batch_cache_holds(hist_oid, snaps);
		HeapTuple  *rows;
		uint64		nrows;

		if (kept)
		{
			rows = batch_cache.tups;
			nrows = batch_cache.ntups;
			hdesc = batch_cache.desc;
		}
		else
		{
			appendStringInfo(&sql, "select h.* from gnomon_t.%s h where h.g_xid between $4 and $5 and " BATCH_RANGE,
							 quote_identifier(history_table));
			argtypes[0] = argtypes[1] = argtypes[2] = PG_SNAPSHOTOID;
			argtypes[3] = argtypes[4] = XID8OID;
			args[0] = prev;
			args[1] = cur;
			args[2] = start;
			args[3] = PG_GETARG_DATUM(7);
			args[4] = PG_GETARG_DATUM(8);
			ret = SPI_execute_with_args(sql.data, 5, argtypes, args, NULL, true, 0);
			if (ret != SPI_OK_SELECT)
				elog(ERROR, "gnomon.feed_page_c: reading the history failed: %s", SPI_result_code_string(ret));
			rows = SPI_tuptable->vals;
			nrows = SPI_processed;
			hdesc = SPI_tuptable->tupdesc;
		}
		elog(DEBUG1, "gnomon.feed_page_c: " UINT64_FORMAT " versions of the batch %s", nrows,
			 kept ? "kept by its order's scan" : "read from the history");
		vers = palloc0(sizeof(Version) * Max(nrows, 1));
		for (uint64 r = 0; r < nrows; r++)
		{
			HeapTuple	t = rows[r];
			bool		isnull;
			Version    *v = &vers[nvers];
			int			left = 0,
						right = nsx;
			Datum		xid = heap_getattr(t, 2, hdesc, &isnull);

			v->xid = U64FromFullTransactionId(DatumGetFullTransactionId(xid));
			/* (the kept rows passed in_batch when they were kept) */
			if (v->xid < lo || v->xid > hi || (!kept && !in_batch(xid, prev, cur, start)))
				continue;
			v->tup = t;
			v->vid = DatumGetInt64(heap_getattr(t, 1, hdesc, &isnull));
			v->op = DatumGetChar(heap_getattr(t, 3, hdesc, &isnull));
			/* st[width_bucket(xid, sx)]: the number of sx at or below the xid names its key (none: null) */
			while (left < right)
			{
				int			mid = (left + right) / 2;

				if (v->xid < DatumGetUInt64(sx_d[mid]))
					right = mid;
				else
					left = mid + 1;
			}
			if (left == 0 || left > nst)
				continue;
			v->tkey = DatumGetInt64(st_d[left - 1]);
			if (!(v->tkey > from_tkey || (v->tkey == from_tkey && v->vid > from_vid)))
				continue;
			if (!(v->tkey < to_tkey || (v->tkey == to_tkey && v->vid <= to_vid)))
				continue;
			v->next = -1;
			nvers++;
		}
	}

	/* 2. each version's next version of its key in the page (the SQL page's window) */
	key_attnos = palloc(sizeof(int) * nkeys);
	kc.nkeys = nkeys;
	kc.attnos = key_attnos;
	kc.cmp = palloc(sizeof(FmgrInfo *) * nkeys);
	kc.collations = palloc(sizeof(Oid) * nkeys);
	kc.desc = hdesc;
	kc.vers = vers;
	for (int k = 0; k < nkeys; k++)
	{
		Form_pg_attribute a;
		TypeCacheEntry *tc;

		key_attnos[k] = gnomon_attno_named(hdesc, keys[k], 4);
		if (key_attnos[k] == 0)
			ereport(ERROR,
					(errcode(MAKE_SQLSTATE('G', 'N', '0', '3', '6')),
					 errmsg("gnomon.feed_page_c: the history %s has no key column \"%s\"", history_table, keys[k]),
					 errhint("Turn the C page off (set gnomon.feed_page_c = off;) and report it.")));
		a = TupleDescAttr(hdesc, key_attnos[k] - 1);
		tc = lookup_type_cache(a->atttypid, TYPECACHE_CMP_PROC_FINFO);
		if (!OidIsValid(tc->cmp_proc_finfo.fn_oid))
			elog(ERROR, "gnomon.feed_page_c: the key column %s's type has no ordering", keys[k]);
		kc.cmp[k] = &tc->cmp_proc_finfo;
		kc.collations[k] = a->attcollation;
	}
	/* btint4cmp and btint8cmp order as the integers do */
	kc.int_key = InvalidOid;
	if (nkeys == 1)
	{
		Oid			t = TupleDescAttr(hdesc, key_attnos[0] - 1)->atttypid;

		if ((t == INT4OID && kc.cmp[0]->fn_oid == F_BTINT4CMP) || (t == INT8OID && kc.cmp[0]->fn_oid == F_BTINT8CMP))
			kc.int_key = t;
	}
	kc.values = palloc(sizeof(Datum) * Max(nvers, 1) * nkeys);
	kc.nulls = palloc(sizeof(bool) * Max(nvers, 1) * nkeys);
	for (int i = 0; i < nvers; i++)
		for (int k = 0; k < nkeys; k++)
			kc.values[i * nkeys + k] = heap_getattr(vers[i].tup, key_attnos[k], hdesc, &kc.nulls[i * nkeys + k]);
	perm = palloc(sizeof(int) * Max(nvers, 1));
	for (int i = 0; i < nvers; i++)
		perm[i] = i;
	if (kc.int_key != InvalidOid)
	{
		/* (a primary key has no nulls: compare_keys's integer order) */
		IntKeyed   *ik = palloc(sizeof(IntKeyed) * Max(nvers, 1));
		bool		sortable = true;

		for (int i = 0; i < nvers && sortable; i++)
		{
			sortable = !kc.nulls[i];
			ik[i].key = kc.int_key == INT4OID ? DatumGetInt32(kc.values[i]) : DatumGetInt64(kc.values[i]);
			ik[i].vid = vers[i].vid;
			ik[i].i = i;
		}
		if (sortable)
		{
			sort_int_keyed(ik, nvers);
			for (int i = 0; i < nvers; i++)
				perm[i] = ik[i].i;
		}
		else
			qsort_arg(perm, nvers, sizeof(int), cmp_key, &kc);
	}
	else
		qsort_arg(perm, nvers, sizeof(int), cmp_key, &kc);
	for (int i = 0; i + 1 < nvers; i++)
		if (compare_keys(&kc, perm[i], perm[i + 1]) == 0)
			vers[perm[i]].next = perm[i + 1];

	/* the key and the before image of every version */
	gnomon_image_init(&key_img, nkeys, keys, hdesc, 4, true);
	gnomon_image_init(&hist_img, ncols, col_names, hdesc, 4, true);
	for (int i = 0; i < nvers; i++)
	{
		CHECK_FOR_INTERRUPTS();
		vers[i].key = gnomon_render_image(&key_img, vers[i].tup, hdesc, &buf, scratch);
		if (images && vers[i].op != 'I')
			vers[i].before = gnomon_render_image(&hist_img, vers[i].tup, hdesc, &buf, scratch);
	}

	/* 3. the after image: the next version's before in the page, else probes for the key's last version */
	need = palloc(sizeof(int) * Max(nvers, 1));
	/* in key order (perm): each probe's btree descent then finds the pages of the one before it in the cache */
	for (int p = 0; p < nvers; p++)
	{
		int			i = perm[p];

		if (!images || vers[i].op == 'D')
			continue;
		if (vers[i].next >= 0)
			vers[i].after = vers[vers[i].next].before;
		else
			need[nneed++] = i;
	}
	if (nneed > 0)
	{
		Image		live_img;
		Image		next_img;
		int		   *again = palloc(sizeof(int) * nneed);
		int			nagain = 0;
		Oid			ptypes[FUNC_MAX_ARGS];
		Datum		pargs[FUNC_MAX_ARGS];
		TupleDesc	live_desc = RelationGetDescr(rel);

		if (nkeys + 3 > FUNC_MAX_ARGS)
			elog(ERROR, "gnomon.feed_page_c: too many key columns");
		/* the live rows of those keys, with their xmin: one primary-key probe each */
		if (probe_live(rel, vers, need, nneed, hdesc))
			gnomon_image_init(&live_img, ncols, col_names, live_desc, 1, true);
		else
		{
			SPITupleTable *ltab;

			resetStringInfo(&sql);
			appendStringInfoString(&sql, "select z.i, l.* from ");
			append_unnest(&sql, "$1", "i", 2, nkeys);
			appendStringInfo(&sql, " cross join lateral (select t.xmin as g_xmin, t.* from %s t where true",
							 quote_qualified_identifier(schema_name, table_name));
			append_key_conditions(&sql, "t", nkeys, keys, hdesc, key_attnos);
			appendStringInfoString(&sql, " limit 1) l");
			ptypes[0] = INT4ARRAYOID;
			pargs[0] = PointerGetDatum(int_array(need, nneed));
			ltab = run_probe(sql.data, 1, ptypes, pargs, vers, need, nneed, hdesc, nkeys, key_attnos, "the live rows");
			gnomon_image_init(&live_img, ncols, col_names, ltab->tupdesc, 3, false);
			for (uint64 r = 0; r < SPI_processed; r++)
			{
				bool		isnull;
				int			i = DatumGetInt32(heap_getattr(ltab->vals[r], 1, ltab->tupdesc, &isnull));

				vers[i].live = ltab->vals[r];
				vers[i].live_xmin = DatumGetTransactionId(heap_getattr(ltab->vals[r], 2, ltab->tupdesc, &isnull));
			}
			live_desc = ltab->tupdesc;
		}
		for (int j = 0; j < nneed; j++)
		{
			Version    *v = &vers[need[j]];

			/* the live row is this version's after image when its xmin is the version's transaction, unless that
			 * transaction continues on the next page or is 2^32 xids old (a 32-bit xmin cannot name it) */
			if (v->live != NULL && has_recent && v->xid >= recent && !(has_split && v->xid == split) &&
				v->live_xmin == (TransactionId) v->xid)
				v->after = gnomon_render_image(&live_img, v->live, live_desc, &buf, scratch);
			else
				again[nagain++] = need[j];
		}
		if (nagain > 0)
		{
			SPITupleTable *ntab;
			Datum	   *vd = palloc(sizeof(Datum) * nagain);
			bool	   *found = palloc0(sizeof(bool) * nvers);

			/* the key's next version in the history (its image is the row after this version) */
			if (!probe_history(hist_oid, prev, vers, again, nagain, hdesc, nkeys, keys, key_attnos, ncols, col_names,
							   found, &buf, scratch))
			{
				for (int j = 0; j < nagain; j++)
					vd[j] = Int64GetDatum(vers[again[j]].vid);
				resetStringInfo(&sql);
				appendStringInfoString(&sql, "select z.i, n.* from ");
				append_unnest(&sql, "$1, $2", "i, vid", 4, nkeys);
				appendStringInfo(&sql, " cross join lateral (select n.* from gnomon_t.%s n where n.g_xid >= pg_snapshot_xmin($3) "
								 "and n.g_vid > z.vid", quote_identifier(history_table));
				append_key_conditions(&sql, "n", nkeys, keys, hdesc, key_attnos);
				appendStringInfoString(&sql, " order by n.g_vid limit 1) n");
				ptypes[0] = INT4ARRAYOID;
				pargs[0] = PointerGetDatum(int_array(again, nagain));
				ptypes[1] = INT8ARRAYOID;
				pargs[1] = datum8_array(vd, nagain, INT8OID);
				ptypes[2] = PG_SNAPSHOTOID;
				pargs[2] = prev;
				ntab = run_probe(sql.data, 3, ptypes, pargs, vers, again, nagain, hdesc, nkeys, key_attnos, "the history");
				gnomon_image_init(&next_img, ncols, col_names, ntab->tupdesc, 5, true);
				for (uint64 r = 0; r < SPI_processed; r++)
				{
					bool		isnull;
					int			i = DatumGetInt32(heap_getattr(ntab->vals[r], 1, ntab->tupdesc, &isnull));

					vers[i].after = gnomon_render_image(&next_img, ntab->vals[r], ntab->tupdesc, &buf, scratch);
					found[i] = true;
				}
			}
			/* else the live row, whoever wrote it */
			for (int j = 0; j < nagain; j++)
			{
				Version    *v = &vers[again[j]];

				if (!found[again[j]] && v->live != NULL)
					v->after = gnomon_render_image(&live_img, v->live, live_desc, &buf, scratch);
			}
		}
	}

	/* the page's rows, in order */
	for (int i = 0; i < nvers; i++)
		perm[i] = i;
	qsort_arg(perm, nvers, sizeof(int), cmp_order, vers);
	{
		bool		whole = PG_GETARG_BOOL(15);
		int64		cur_id = PG_GETARG_INT64(16);
		int64		t = PG_GETARG_INT64(17);
		text	   *letters[3] = {cstring_to_text("c"), cstring_to_text("u"), cstring_to_text("d")};
		/* (int32s: a varlena's header is aligned) */
		int32		posbuf[(VARHDRSZ + 3 * (MAXINT8LEN + 1) + 4) / sizeof(int32) + 1];
		char	   *pos = (char *) posbuf;
		char	   *p = pos + VARHDRSZ;

		for (int j = 0; j < nvers; j++)
		{
			Version    *v = &vers[perm[j]];
			Datum		values[12];
			bool		nulls[12];
			int			len = 3;
			Datum		position;
			Datum		op_letter;

			/*
			 * its position, as gnomon.feed_page_plan's statement writes the others' (FeedPosition parses it): the
			 * last event of a batch taken whole carries the position past the batch (a text on the stack: the
			 * tuplestore copies it)
			 */
			memcpy(p, "v1:", 3);
			if (whole && v->vid == to_vid)
			{
				len += pg_lltoa(cur_id, p + len);
				memcpy(p + len, ":0:0", 4);
				len += 4;
			}
			else
			{
				len += pg_lltoa(t, p + len);
				p[len++] = ':';
				len += pg_lltoa(v->tkey, p + len);
				p[len++] = ':';
				len += pg_lltoa(v->vid, p + len);
			}
			SET_VARSIZE(pos, VARHDRSZ + len);
			position = PointerGetDatum(pos);
			/* its operation as the envelope names it */
			op_letter = PointerGetDatum(letters[v->op == 'I' ? 0 : v->op == 'U' ? 1 : 2]);
			memset(nulls, 0, sizeof(nulls));
			if (shape == NULL)
			{
				/* gnomon.feed_page_c's columns */
				values[0] = FullTransactionIdGetDatum(FullTransactionIdFromU64(v->xid));
				values[1] = Int64GetDatum(v->vid);
				values[2] = Int64GetDatum(v->tkey);
				values[3] = CharGetDatum(v->op);
				values[4] = PointerGetDatum(v->key);
				values[5] = PointerGetDatum(v->before);
				nulls[5] = v->before == NULL;
				values[6] = PointerGetDatum(v->after);
				nulls[6] = v->after == NULL;
				values[7] = position;
				values[8] = op_letter;
			}
			else
			{
				/* gnomon.feed_read's, as gnomon.feed_page_plan's statement of a C page selects them */
				values[0] = position;
				values[1] = shape->tick_id;
				nulls[1] = shape->tick_id_null;
				values[2] = shape->tick_at;
				nulls[2] = shape->tick_at_null;
				values[3] = FullTransactionIdGetDatum(FullTransactionIdFromU64(v->xid));
				values[4] = Int64GetDatum(v->tkey);
				values[5] = Int64GetDatum(v->vid);
				values[6] = shape->table_name;
				values[7] = op_letter;
				values[8] = PointerGetDatum(v->key);
				values[9] = PointerGetDatum(v->before);
				nulls[9] = v->before == NULL;
				values[10] = PointerGetDatum(v->after);
				nulls[10] = v->after == NULL;
				values[11] = shape->branch;
				nulls[11] = shape->branch_null;
			}
			tuplestore_putvalues(ts, ts_desc, values, nulls);
		}
	}
	relation_close(rel, AccessShareLock);
	SPI_finish();
}

/* The (xid, version key) pairs of a batch's versions, from the slots of a scan of the history (no copies) */
typedef struct BatchReceiver
{
	DestReceiver pub;
	Datum		prev;
	Datum		cur;
	Datum		start;
	IntKeyed   *vx;				/* key: the xid; vid: the version key */
	int			nv;
	int			cap;
} BatchReceiver;

static bool
batch_receive(TupleTableSlot *slot, DestReceiver *self)
{
	BatchReceiver *r = (BatchReceiver *) self;

	/* the history's g_vid, g_xid */
	slot_getsomeattrs(slot, 2);
	if (slot->tts_isnull[1] || !in_batch(slot->tts_values[1], r->prev, r->cur, r->start))
		return true;
	if (r->nv == r->cap)
	{
		r->cap *= 2;
		r->vx = repalloc_huge(r->vx, sizeof(IntKeyed) * r->cap);
	}
	/* (an xid8 is below 2^63: a full transaction id's epoch is 32 bits) */
	r->vx[r->nv].key = (int64) U64FromFullTransactionId(DatumGetFullTransactionId(slot->tts_values[1]));
	r->vx[r->nv].vid = DatumGetInt64(slot->tts_values[0]);
	r->vx[r->nv].i = 0;
	r->nv++;
	/* the row, for the page that reads the batch next */
	if (batch_cache.cxt != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(batch_cache.cxt);
		HeapTuple	t;

		if (batch_cache.ntups == batch_cache.cap)
		{
			batch_cache.cap *= 2;
			batch_cache.tups = repalloc_huge(batch_cache.tups, sizeof(HeapTuple) * batch_cache.cap);
		}
		t = ExecCopySlotHeapTuple(slot);
		batch_cache.tups[batch_cache.ntups++] = t;
		batch_cache.bytes += HEAPTUPLESIZE + t->t_len;
		MemoryContextSwitchTo(old);
		if (batch_cache.bytes > BATCH_CACHE_BYTES)
			batch_cache_drop();
	}
	return true;
}

static void
batch_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	if (batch_cache.cxt != NULL)
	{
		MemoryContext old = MemoryContextSwitchTo(batch_cache.cxt);

		batch_cache.desc = CreateTupleDescCopy(typeinfo);
		MemoryContextSwitchTo(old);
	}
}

static void
batch_shutdown(DestReceiver *self)
{
}

/*
 * gnomon.feed_batch_c(table_id, prev, cur, start): a batch's order for gnomon.feed_batch_of, the arrays its SQL
 * computes over gnomon_t.<base>_changes of one table on main (a hash aggregate by transaction, a window's running
 * sum and four ordered array_aggs), here from one scan of the versions' xids and version keys, sorted in C:
 *   txn_xid, txn_key, txn_upto: the transactions ordered by their largest version key (tkey), those keys, and the
 *     number of versions up to and including each;
 *   xid_sorted, key_by_xid: the same transactions ordered by xid, with their keys.
 */
PG_FUNCTION_INFO_V1(gnomon_feed_batch_c);

Datum
gnomon_feed_batch_c(PG_FUNCTION_ARGS)
{
	TupleDesc	rdesc;
	StringInfoData sql;
	ParamListInfo params;
	SPIExecuteOptions options;
	BatchReceiver recv;
	char	   *history_table;
	Oid			hist_oid;
	Datum		snap_args[3];
	IntKeyed   *vx;
	IntKeyed   *tx;
	int			nv,
				nt = 0;
	int64	   *counts;
	Datum	   *d_txn_xid,
			   *d_txn_key,
			   *d_txn_upto,
			   *d_xid_sorted,
			   *d_key_by_xid;
	Datum		values[5];
	bool		nulls[5] = {false, false, false, false, false};
	HeapTuple	result;
	MemoryContext fn_cxt = CurrentMemoryContext;
	int			ret;
	int64		upto = 0;

	if (get_call_result_type(fcinfo, NULL, &rdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "gnomon.feed_batch_c: its result is not a row type");
	for (int i = 0; i < 4; i++)
		if (PG_ARGISNULL(i))
			PG_RETURN_NULL();
	tune_malloc();
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "gnomon: SPI_connect failed");
	feed_table(PG_GETARG_INT32(0), "gnomon.feed_batch_c");
	history_table = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4);
	{
		bool		isnull;

		hist_oid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 6, &isnull));
	}
	initStringInfo(&sql);
	appendStringInfo(&sql, "select h.* from gnomon_t.%s h where " BATCH_RANGE, quote_identifier(history_table));
	params = makeParamList(2);
	for (int i = 0; i < 2; i++)
	{
		params->params[i].value = PG_GETARG_DATUM(i + 1);
		params->params[i].isnull = false;
		params->params[i].pflags = PARAM_FLAG_CONST;
		params->params[i].ptype = PG_SNAPSHOTOID;
	}
	memset(&recv, 0, sizeof(recv));
	recv.pub.receiveSlot = batch_receive;
	recv.pub.rStartup = batch_startup;
	recv.pub.rShutdown = batch_shutdown;
	recv.pub.rDestroy = batch_shutdown;
	recv.pub.mydest = DestNone;
	/* (detoasted once: every version is tested against them) */
	recv.prev = snap_args[0] = PointerGetDatum(PG_DETOAST_DATUM(PG_GETARG_DATUM(1)));
	recv.cur = snap_args[1] = PointerGetDatum(PG_DETOAST_DATUM(PG_GETARG_DATUM(2)));
	recv.start = snap_args[2] = PointerGetDatum(PG_DETOAST_DATUM(PG_GETARG_DATUM(3)));
	recv.cap = 1024;
	recv.vx = palloc(sizeof(IntKeyed) * recv.cap);
	/* the batch's rows are kept for its page (what was kept before goes) */
	batch_cache_drop();
	batch_cache.cxt = AllocSetContextCreate(TopTransactionContext, "gnomon feed batch rows", ALLOCSET_DEFAULT_SIZES);
	batch_cache.lxid = MyProc->lxid;
	batch_cache.hist = hist_oid;
	for (int i = 0; i < 3; i++)
	{
		Size		len = VARSIZE_ANY(DatumGetPointer(snap_args[i]));

		batch_cache.snaps[i] = (struct varlena *) MemoryContextAlloc(batch_cache.cxt, len);
		memcpy(batch_cache.snaps[i], DatumGetPointer(snap_args[i]), len);
	}
	batch_cache.cap = 1024;
	batch_cache.tups = MemoryContextAlloc(batch_cache.cxt, sizeof(HeapTuple) * batch_cache.cap);
	memset(&options, 0, sizeof(options));
	options.params = params;
	options.read_only = true;
	options.dest = (DestReceiver *) &recv;
	ret = SPI_execute_extended(sql.data, &options);
	/* (SPI calls a SELECT into a receiver of its own a utility statement) */
	if (ret != SPI_OK_SELECT && ret != SPI_OK_UTILITY)
		elog(ERROR, "gnomon.feed_batch_c: reading the history failed: %s", SPI_result_code_string(ret));
	batch_cache.complete = batch_cache.cxt != NULL && batch_cache.desc != NULL;
	vx = recv.vx;
	nv = recv.nv;

	/* the versions by xid, then version key: each transaction a run, its key the run's last version key */
	sort_int_keyed(vx, nv);
	tx = palloc(sizeof(IntKeyed) * Max(nv, 1));
	counts = palloc(sizeof(int64) * Max(nv, 1));
	for (int v = 0; v < nv; v++)
	{
		if (nt == 0 || tx[nt - 1].vid != vx[v].key)
		{
			/* a new transaction: (its key, its xid, its number in xid order), the key filled in below */
			tx[nt].vid = vx[v].key;
			tx[nt].i = nt;
			counts[nt] = 0;
			nt++;
		}
		tx[nt - 1].key = vx[v].vid;
		counts[nt - 1]++;
	}

	/* in xid order: xid_sorted, key_by_xid */
	MemoryContextSwitchTo(fn_cxt);
	d_xid_sorted = palloc(sizeof(Datum) * Max(nt, 1));
	d_key_by_xid = palloc(sizeof(Datum) * Max(nt, 1));
	for (int t = 0; t < nt; t++)
	{
		d_xid_sorted[t] = FullTransactionIdGetDatum(FullTransactionIdFromU64((uint64) tx[t].vid));
		d_key_by_xid[t] = Int64GetDatum(tx[t].key);
	}
	/* by key (version keys are unique, so keys are): txn_xid, txn_key, txn_upto */
	sort_int_keyed(tx, nt);
	d_txn_xid = palloc(sizeof(Datum) * Max(nt, 1));
	d_txn_key = palloc(sizeof(Datum) * Max(nt, 1));
	d_txn_upto = palloc(sizeof(Datum) * Max(nt, 1));
	for (int t = 0; t < nt; t++)
	{
		upto += counts[tx[t].i];
		d_txn_xid[t] = FullTransactionIdGetDatum(FullTransactionIdFromU64((uint64) tx[t].vid));
		d_txn_key[t] = Int64GetDatum(tx[t].key);
		d_txn_upto[t] = Int64GetDatum(upto);
	}
	values[0] = datum8_array(d_txn_xid, nt, XID8OID);
	values[1] = datum8_array(d_txn_key, nt, INT8OID);
	values[2] = datum8_array(d_txn_upto, nt, INT8OID);
	values[3] = datum8_array(d_xid_sorted, nt, XID8OID);
	values[4] = datum8_array(d_key_by_xid, nt, INT8OID);
	result = heap_form_tuple(BlessTupleDesc(rdesc), values, nulls);
	SPI_finish();
	PG_RETURN_DATUM(HeapTupleGetDatum(result));
}
