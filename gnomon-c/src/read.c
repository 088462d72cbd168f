/*
 * read.c: the optional C module's part of as-of reads (gnomon.use_c_module(true) creates the SQL functions).
 *
 * gnomon.read_snapshot_c(coordinate, track_xid, table_id) is gnomon.read_snapshot() with a cached parse: the
 * coordinate's text is parsed once per backend (a small cache keyed by the text, the tracking's xid and the table),
 * and each call then only checks what can change between calls: the server incarnation, and that the coordinate's
 * xmax is at or below the xmin of the active snapshot. A coordinate that does not take that fast path (another
 * incarnation, older than the tracking, too recent, not canonical, null) goes to the SQL functions of the full check,
 * gnomon.check_coordinate_read(coordinate, gnomon.parse_coordinate(coordinate), table_id), which raise every error
 * exactly as the SQL path does; what they accept is cached for the rest of the statement (same transaction, same
 * active snapshot), so a filter evaluated per row runs the full check once.
 *
 * gnomon.row_visible_c(coordinate, track_xid, table_id, row_xmin) says whether a live row's xmin is visible in the
 * coordinate's snapshot: true (the row is the key's state as of the coordinate: every write of a key takes the row
 * lock or the unique index entry of the one before, so no write the coordinate cannot see can come before a write
 * it sees), false (the key changed since: the history has the image), or null when this cannot be told from
 * the xid alone (a subtransaction's xid that pg_subtrans can no longer map to its top transaction, a coordinate more
 * than 2^31 transactions old): the generated read then asks the history, as the SQL path always does.
 */
#include "postgres.h"

#include "access/subtrans.h"
#include "access/transam.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "nodes/makefuncs.h"
#include "nodes/pg_list.h"
#include "parser/parse_func.h"
#include "storage/proc.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"
#include "utils/xid8.h"

#include "read.h"

/* The layout of PostgreSQL's pg_snapshot (src/backend/utils/adt/xid8funcs.c, unchanged since PostgreSQL 13). */
struct GnSnapshot
{
	int32		vl_len_;
	uint32		nxip;
	FullTransactionId xmin;
	FullTransactionId xmax;
	FullTransactionId xip[FLEXIBLE_ARRAY_MEMBER];
};

/* One parsed coordinate. */
typedef struct CachedCoordinate
{
	char	   *text;			/* the coordinate, in TopMemoryContext; NULL: unused entry */
	int			len;
	uint64		track_xid;
	int32		table_id;
	bool		fast_form;		/* canonical v2 form: the fast path may take it */
	int64		incarnation;
	uint64		xmin;
	uint64		xmax;
	int			snap_offset;	/* where the snapshot's text starts (fast form only) */
	GnSnapshot *snap;			/* the parsed snapshot (fast form only, parsed on first use), in TopMemoryContext */
	/* the full check accepted it for this transaction and active snapshot (slow path only) */
	bool		checked;
	LocalTransactionId checked_lxid;
	TransactionId checked_xmin;
	TransactionId checked_xmax;
	uint32		checked_xcnt;
	CommandId	checked_cid;
	GnSnapshot *checked_snap;
} CachedCoordinate;

#define COORD_CACHE_SIZE 16
static CachedCoordinate coord_cache[COORD_CACHE_SIZE];
static int	coord_next = 0;

PG_FUNCTION_INFO_V1(gnomon_read_snapshot_c);
PG_FUNCTION_INFO_V1(gnomon_row_visible_c);

/* A 32-bit xid as a 64-bit one, taking the epoch from the next xid (exact for every xid within 2^32 of it). */
static uint64
widen_xid(TransactionId xid, FullTransactionId next)
{
	uint64		epoch = EpochFromFullTransactionId(next);

	if (xid > XidFromFullTransactionId(next) && epoch > 0)
		epoch--;
	return (epoch << 32) | xid;
}

/* The current incarnation as gnomon.incarnation() computes it: microseconds since 1970 of the bgwriter's reset. */
static int64
current_incarnation(void)
{
	TimestampTz ts = DatumGetTimestampTz(DirectFunctionCall1(pg_stat_get_bgwriter_stat_reset_time, (Datum) 0));

	return (int64) ts + (int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY;
}

/* Reads [1-9][0-9]* up to the stop character; false when the text is not that or overflows 2^63 - 1. */
static bool
canonical_number(const char **p, const char *end, char stop, uint64 *out)
{
	const char *s = *p;
	uint64		v = 0;

	if (s >= end || *s < '1' || *s > '9')
		return false;
	while (s < end && *s >= '0' && *s <= '9')
	{
		if (v > (PG_INT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (*s - '0');
		s++;
	}
	if (stop != '\0' && (s >= end || *s != stop))
		return false;
	*p = s;
	*out = v;
	return true;
}

/*
 * Whether the text has the fast path's form, '^v2:[1-9][0-9]*:[1-9][0-9]*:[1-9][0-9]*:([1-9][0-9]*(,[1-9][0-9]*)*)?$'
 * (numbers too large for a transaction id excepted: the SQL fast path fails its comparisons for them), and its parts.
 */
static bool
parse_fast_form(const char *s, int len, int64 *incarnation, uint64 *xmin, uint64 *xmax, const char **snaptext)
{
	const char *p = s;
	const char *end = s + len;
	uint64		v;

	if (len < 3 || memcmp(s, "v2:", 3) != 0)
		return false;
	p += 3;
	if (!canonical_number(&p, end, ':', &v))
		return false;
	*incarnation = (int64) v;
	p++;
	*snaptext = p;
	if (!canonical_number(&p, end, ':', xmin))
		return false;
	p++;
	if (!canonical_number(&p, end, ':', xmax))
		return false;
	p++;
	if (p == end)
		return true;
	for (;;)
	{
		if (!canonical_number(&p, end, '\0', &v))
			return false;
		if (p == end)
			return true;
		if (*p != ',')
			return false;
		p++;
	}
}

static Oid
gnomon_function(const char *name, int nargs, Oid *argtypes)
{
	return LookupFuncName(list_make2(makeString("gnomon"), makeString(pstrdup(name))), nargs, argtypes, false);
}

/*
 * The full check, in SQL: gnomon.check_coordinate_read(coordinate, gnomon.parse_coordinate(coordinate), table_id).
 * Raises its errors, which name the coordinate as given.
 */
static Datum
full_check(text *coordinate, int32 table_id)
{
	Oid			parse_args[1] = {TEXTOID};
	Oid			check_args[3] = {TEXTOID, PG_SNAPSHOTOID, INT4OID};
	Oid			check_oid = gnomon_function("check_coordinate_read", 3, check_args);
	LOCAL_FCINFO(fcinfo, 3);
	FmgrInfo	flinfo;
	Datum		snap = (Datum) 0;
	bool		snap_null = true;
	Datum		result;

	if (coordinate != NULL)
	{
		Oid			parse_oid = gnomon_function("parse_coordinate", 1, parse_args);

		/* (strict: never called with a null) */
		snap = OidFunctionCall1(parse_oid, PointerGetDatum(coordinate));
		snap_null = false;
	}
	fmgr_info(check_oid, &flinfo);
	InitFunctionCallInfoData(*fcinfo, &flinfo, 3, InvalidOid, NULL, NULL);
	fcinfo->args[0].value = PointerGetDatum(coordinate);
	fcinfo->args[0].isnull = coordinate == NULL;
	fcinfo->args[1].value = snap;
	fcinfo->args[1].isnull = snap_null;
	fcinfo->args[2].value = Int32GetDatum(table_id);
	fcinfo->args[2].isnull = false;
	result = FunctionCallInvoke(fcinfo);
	if (fcinfo->isnull)
		elog(ERROR, "gnomon.check_coordinate_read returned null");
	return result;
}

static GnSnapshot *
copy_snapshot(GnSnapshot *s, MemoryContext cxt)
{
	GnSnapshot *copy = MemoryContextAlloc(cxt, VARSIZE(s));

	memcpy(copy, s, VARSIZE(s));
	return copy;
}

/* The cache entry of a coordinate (parsed on a miss); never NULL. */
static CachedCoordinate *
lookup_coordinate(text *coordinate, uint64 track_xid, int32 table_id)
{
	const char *s = VARDATA_ANY(coordinate);
	int			len = VARSIZE_ANY_EXHDR(coordinate);
	CachedCoordinate *e;
	int			i;
	const char *snaptext = NULL;

	for (i = 0; i < COORD_CACHE_SIZE; i++)
	{
		e = &coord_cache[i];
		if (e->text != NULL && e->len == len && e->table_id == table_id && e->track_xid == track_xid
			&& memcmp(e->text, s, len) == 0)
			return e;
	}
	e = &coord_cache[coord_next];
	coord_next = (coord_next + 1) % COORD_CACHE_SIZE;
	if (e->text != NULL)
		pfree(e->text);
	if (e->snap != NULL)
		pfree(e->snap);
	if (e->checked_snap != NULL)
		pfree(e->checked_snap);
	memset(e, 0, sizeof(*e));
	e->fast_form = parse_fast_form(s, len, &e->incarnation, &e->xmin, &e->xmax, &snaptext);
	if (e->fast_form)
		e->snap_offset = snaptext - s;
	e->text = MemoryContextAlloc(TopMemoryContext, len > 0 ? len : 1);
	memcpy(e->text, s, len);
	e->len = len;
	e->track_xid = track_xid;
	e->table_id = table_id;
	return e;
}

/* The checked snapshot of a coordinate for an as-of read (exactly gnomon.read_snapshot's result and errors). */
static GnSnapshot *
resolve(text *coordinate, uint64 track_xid, int32 table_id)
{
	CachedCoordinate *e;
	Snapshot	active;
	FullTransactionId next;
	Datum		checked;

	if (coordinate == NULL)
		return (GnSnapshot *) DatumGetPointer(full_check(NULL, table_id));
	e = lookup_coordinate(coordinate, track_xid, table_id);
	active = ActiveSnapshotSet() ? GetActiveSnapshot() : NULL;
	if (active != NULL && e->fast_form && track_xid < e->xmin && e->xmin <= e->xmax)
	{
		next = ReadNextFullTransactionId();
		if (e->xmax <= widen_xid(active->xmin, next) && e->incarnation == current_incarnation())
		{
			if (e->snap == NULL)
			{
				/* the snapshot's own input function, as the SQL fast path's cast, and only where that cast runs
				 * (22P02 for a bad list of transactions in progress, as there) */
				char	   *cstr = pnstrdup(e->text + e->snap_offset, e->len - e->snap_offset);
				Datum		parsed = DirectFunctionCall1(pg_snapshot_in, CStringGetDatum(cstr));

				e->snap = copy_snapshot((GnSnapshot *) DatumGetPointer(parsed), TopMemoryContext);
			}
			return e->snap;
		}
	}
	if (active != NULL && e->checked && e->checked_lxid == MyProc->lxid && e->checked_xmin == active->xmin
		&& e->checked_xmax == active->xmax && e->checked_xcnt == active->xcnt && e->checked_cid == active->curcid)
		return e->checked_snap;
	checked = full_check(coordinate, table_id);
	if (active != NULL)
	{
		if (e->checked_snap != NULL)
			pfree(e->checked_snap);
		e->checked_snap = copy_snapshot((GnSnapshot *) PG_DETOAST_DATUM(checked), TopMemoryContext);
		e->checked = true;
		e->checked_lxid = MyProc->lxid;
		e->checked_xmin = active->xmin;
		e->checked_xmax = active->xmax;
		e->checked_xcnt = active->xcnt;
		e->checked_cid = active->curcid;
		return e->checked_snap;
	}
	return (GnSnapshot *) PG_DETOAST_DATUM(checked);
}

/* gnomon.read_snapshot_c(coordinate text, track_xid xid8, table_id integer) returns pg_snapshot */
Datum
gnomon_read_snapshot_c(PG_FUNCTION_ARGS)
{
	text	   *coordinate = PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0);
	GnSnapshot *s = resolve(coordinate, U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(1)), PG_GETARG_INT32(2));

	PG_RETURN_POINTER(copy_snapshot(s, CurrentMemoryContext));
}

static int	xmin_visible(GnSnapshot *s, TransactionId x);

static bool
in_progress(GnSnapshot *s, uint64 xid)
{
	int			lo = 0;
	int			hi = (int) s->nxip - 1;

	while (lo <= hi)
	{
		int			mid = lo + (hi - lo) / 2;
		uint64		v = U64FromFullTransactionId(s->xip[mid]);

		if (v == xid)
			return true;
		if (v < xid)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return false;
}

/*
 * gnomon.row_visible_c(coordinate text, track_xid xid8, table_id integer, row_xmin xid) returns boolean: whether the
 * live row a read found was written by a transaction the coordinate sees (null: unknown, ask the history).
 * The row is visible to the reader, so its xmin committed, or is the reader's own transaction (which no coordinate
 * captured by another transaction sees, and which gnomon.coordinate() lists as in progress).
 */
Datum
gnomon_row_visible_c(PG_FUNCTION_ARGS)
{
	text	   *coordinate = PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0);
	GnSnapshot *s = resolve(coordinate, U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(1)), PG_GETARG_INT32(2));
	int			v;

	if (PG_ARGISNULL(3))
		PG_RETURN_NULL();
	v = xmin_visible(s, DatumGetTransactionId(PG_GETARG_DATUM(3)));
	if (v < 0)
		PG_RETURN_NULL();
	PG_RETURN_BOOL(v > 0);
}

/* gnomon.row_visible_c's test: 1 (visible), 0 (not), -1 (cannot be told from the xid alone) */
static int
xmin_visible(GnSnapshot *s, TransactionId x)
{
	FullTransactionId next;
	uint64		smin = U64FromFullTransactionId(s->xmin);
	uint64		smax = U64FromFullTransactionId(s->xmax);
	uint64		fx;
	TransactionId top;

	/* frozen by a release before 9.4, or written at bootstrap: older than any tracking */
	if (x == FrozenTransactionId || x == BootstrapTransactionId)
		return 1;
	if (!TransactionIdIsNormal(x))
		return -1;
	next = ReadNextFullTransactionId();
	/*
	 * Widened from the next xid, a frozen row's xmin may be 2^32 (or more) newer than the real one; the real one is then
	 * older still, so every "visible" below holds for it too, as long as the coordinate's own range lies within 2^31
	 * of the next xid (then any xid at or above the coordinate's xmin is too, and widens exactly).
	 */
	if (U64FromFullTransactionId(next) - smax >= (UINT64CONST(1) << 31))
		return -1;
	fx = widen_xid(x, next);
	if (fx < smin)
		return 1;
	if (fx >= smax || in_progress(s, fx))
		return 0;
	/* in [xmin, xmax) and not listed: a top transaction that ended before the coordinate, or a subtransaction of one
	 * that the coordinate lists; pg_subtrans knows, for xids at or above this transaction's xmin */
	top = x;
	for (;;)
	{
		TransactionId parent;

		if (!TransactionIdFollowsOrEquals(top, TransactionXmin))
			return -1;
		parent = SubTransGetParent(top);
		if (!TransactionIdIsValid(parent))
			break;
		top = parent;
	}
	if (top == x)
		return 1;
	fx = widen_xid(top, next);
	return (fx >= smin && in_progress(s, fx)) ? 0 : 1;
}

PG_FUNCTION_INFO_V1(gnomon_read_xmin_c);
PG_FUNCTION_INFO_V1(gnomon_xid_invisible_c);

/* gnomon.read_xmin_c(coordinate text, track_xid xid8, table_id integer) returns xid8: pg_snapshot_xmin of
 * gnomon.read_snapshot_c, without copying the snapshot */
Datum
gnomon_read_xmin_c(PG_FUNCTION_ARGS)
{
	text	   *coordinate = PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0);
	GnSnapshot *s = resolve(coordinate, U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(1)), PG_GETARG_INT32(2));

	PG_RETURN_FULLTRANSACTIONID(s->xmin);
}

/* gnomon.xid_invisible_c(coordinate text, track_xid xid8, table_id integer, xid xid8) returns boolean:
 * not pg_visible_in_snapshot(xid, gnomon.read_snapshot_c(coordinate, track_xid, table_id)), in one call */
Datum
gnomon_xid_invisible_c(PG_FUNCTION_ARGS)
{
	text	   *coordinate = PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0);
	GnSnapshot *s = resolve(coordinate, U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(1)), PG_GETARG_INT32(2));
	uint64		x;

	if (PG_ARGISNULL(3))
		PG_RETURN_NULL();
	x = U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(3));
	if (x < U64FromFullTransactionId(s->xmin))
		PG_RETURN_BOOL(false);
	if (x >= U64FromFullTransactionId(s->xmax))
		PG_RETURN_BOOL(true);
	PG_RETURN_BOOL(in_progress(s, x));
}

PG_FUNCTION_INFO_V1(gnomon_row_current_c);
PG_FUNCTION_INFO_V1(gnomon_first_invisible_c);

/* Calls a table's helper gnomon_t.<base>_as_of_h(keys..., before_vid, coordinate): whether the key has no version
 * the coordinate cannot see below before_vid. The keys are this call's arguments from first_key on. */
static bool
call_helper(FunctionCallInfo fcinfo, Oid helper, int first_key, int64 before_vid)
{
	FmgrInfo   *fi = (FmgrInfo *) fcinfo->flinfo->fn_extra;
	int			nkeys = PG_NARGS() - first_key;
	LOCAL_FCINFO(h, FUNC_MAX_ARGS);
	Datum		result;
	int			i;

	if (nkeys < 1 || nkeys + 2 > FUNC_MAX_ARGS)
		elog(ERROR, "gnomon: an as-of helper takes 1 to %d key columns, not %d", FUNC_MAX_ARGS - 2, nkeys);
	if (fi == NULL || fi->fn_oid != helper)
	{
		fi = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(FmgrInfo));
		fmgr_info_cxt(helper, fi, fcinfo->flinfo->fn_mcxt);
		fcinfo->flinfo->fn_extra = fi;
	}
	InitFunctionCallInfoData(*h, fi, nkeys + 2, InvalidOid, NULL, NULL);
	for (i = 0; i < nkeys; i++)
		h->args[i] = fcinfo->args[first_key + i];
	h->args[nkeys].value = Int64GetDatum(before_vid);
	h->args[nkeys].isnull = false;
	h->args[nkeys + 1] = fcinfo->args[0];
	result = FunctionCallInvoke(h);
	return !h->isnull && DatumGetBool(result);
}

/*
 * gnomon.row_current_c(coordinate text, track_xid xid8, table_id integer, row_xmin xid, helper oid,
 * VARIADIC keys "any") returns boolean: true when gnomon.row_visible_c finds the row's xmin visible; otherwise the
 * table's helper for the row's key (no version the coordinate cannot see), the SQL path's test. An invisible xmin
 * is not enough to drop the row: a table rewrite (ALTER TABLE ... ADD COLUMN with a volatile default, SET LOGGED)
 * gives every row the rewriting transaction's xmin and writes no version. One call in the generated read's live arm.
 */
Datum
gnomon_row_current_c(PG_FUNCTION_ARGS)
{
	Datum		v;

	/* (row_visible_c reads only its first four arguments) */
	v = gnomon_row_visible_c(fcinfo);
	if (!fcinfo->isnull && DatumGetBool(v))
		return v;
	fcinfo->isnull = false;
	PG_RETURN_BOOL(call_helper(fcinfo, PG_GETARG_OID(4), 5, PG_INT64_MAX));
}

/*
 * gnomon.first_invisible_c(coordinate text, track_xid xid8, table_id integer, g_xid xid8, g_op "char", g_vid bigint,
 * helper oid, VARIADIC keys "any") returns boolean: whether a history version is the first of its key that the
 * coordinate cannot see, and not an insert (its image is then the key's state as of the coordinate). One call in the
 * generated read's history arm.
 */
Datum
gnomon_first_invisible_c(PG_FUNCTION_ARGS)
{
	text	   *coordinate = PG_ARGISNULL(0) ? NULL : PG_GETARG_TEXT_PP(0);
	GnSnapshot *s = resolve(coordinate, U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(1)), PG_GETARG_INT32(2));
	uint64		x;

	if (PG_ARGISNULL(3) || PG_ARGISNULL(4) || PG_ARGISNULL(5))
		PG_RETURN_NULL();
	x = U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(3));
	if (x < U64FromFullTransactionId(s->xmin))
		PG_RETURN_BOOL(false);
	if (x < U64FromFullTransactionId(s->xmax) && !in_progress(s, x))
		PG_RETURN_BOOL(false);
	if (PG_GETARG_CHAR(4) == 'I')
		PG_RETURN_BOOL(false);
	PG_RETURN_BOOL(call_helper(fcinfo, PG_GETARG_OID(6), 7, PG_GETARG_INT64(5)));
}

/*
 * The point read (session 12). A generic plan starts every node at each execution, and the two-arm read above starts
 * five for a point read where the live read starts one. When the caller pins every key column with an equality
 * (select ... from <table>_as_of(c) where k = $1), the generated read keeps one arm: a function scan of
 * gnomon.as_of_key_c, which probes the live table's primary key itself and returns the live row when its xmin is
 * visible in the coordinate (the live arm's test); otherwise (no live row: a key deleted since, or never there; or an
 * xmin the coordinate cannot see) it returns what the table's fallback gnomon_t.<base>_as_of_k(keys..., coordinate)
 * returns: the two arms above, for that key. Which arm a plan keeps is decided while planning, by the support
 * function of gnomon.as_of_keyed_c (planner support, PostgreSQL 12+): in each arm it looks for the caller's pushed-down
 * equalities on the key columns; the other arms' conditions fold to false and the planner drops them.
 */
#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_proc.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "nodes/supportnodes.h"
#include "optimizer/optimizer.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/typcache.h"

PG_FUNCTION_INFO_V1(gnomon_as_of_support_c);
PG_FUNCTION_INFO_V1(gnomon_as_of_keyed_c);
PG_FUNCTION_INFO_V1(gnomon_as_of_key_c);

/* Whether an expression is the same at every row of an arm: no column, no sub-select, nothing volatile. */
static bool
pinned_value_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var) || IsA(node, PlaceHolderVar) || IsA(node, SubLink) || IsA(node, SubPlan) || IsA(node, Aggref)
		|| IsA(node, WindowFunc) || IsA(node, GroupingFunc) || IsA(node, CurrentOfExpr))
		return true;
	if (IsA(node, Param) && ((Param *) node)->paramkind != PARAM_EXTERN)
		return true;
	return expression_tree_walker(node, pinned_value_walker, context);
}

static bool
pinned_value(Node *node)
{
	return !pinned_value_walker(node, NULL) && !contain_volatile_functions(node);
}

/* The value a qual pins column (varno, attno) to: "col = value" with the column type's own equality; NULL if not. */
static Node *
pinned_by(Node *qual, Index varno, AttrNumber attno)
{
	if (qual == NULL)
		return NULL;
	if (IsA(qual, List))
	{
		ListCell   *lc;

		foreach(lc, (List *) qual)
		{
			Node	   *v = pinned_by(lfirst(lc), varno, attno);

			if (v != NULL)
				return v;
		}
		return NULL;
	}
	if (is_andclause(qual))
		return pinned_by((Node *) ((BoolExpr *) qual)->args, varno, attno);
	if (IsA(qual, OpExpr) && list_length(((OpExpr *) qual)->args) == 2)
	{
		OpExpr	   *op = (OpExpr *) qual;
		int			side;

		for (side = 0; side < 2; side++)
		{
			Node	   *a = (Node *) list_nth(op->args, side);
			Node	   *b = (Node *) list_nth(op->args, 1 - side);
			Var		   *var;
			TypeCacheEntry *tc;

			while (IsA(a, RelabelType))
				a = (Node *) ((RelabelType *) a)->arg;
			if (!IsA(a, Var))
				continue;
			var = (Var *) a;
			if (var->varno != varno || var->varattno != attno || var->varlevelsup != 0)
				continue;
			tc = lookup_type_cache(var->vartype, TYPECACHE_EQ_OPR);
			if (op->opno != tc->eq_opr || exprType(b) != var->vartype || !pinned_value(b))
				continue;
			/* a collation under which distinct texts are equal is not the key's identity: no */
			if (OidIsValid(op->inputcollid) && !get_collation_isdeterministic(op->inputcollid))
				continue;
			return b;
		}
	}
	return NULL;
}

/* The arm's WHERE clause (the caller's conditions pushed down into it are there too) */
static Node *
arm_quals(PlannerInfo *root)
{
	if (root == NULL || root->parse == NULL || root->parse->jointree == NULL)
		return NULL;
	return root->parse->jointree->quals;
}

/*
 * Planner support of gnomon.as_of_keyed_c(want boolean, VARIADIC keys "any") and gnomon.as_of_key_c(...).
 * as_of_keyed_c(want, key columns...) folds to want when the arm's conditions pin every key column to a value, else to
 * not want. as_of_key_c(coordinate, track_xid, table_id, tab, fallback, false, pos, pos, ...) becomes
 * as_of_key_c(..., true, pos, value, ...) with the values the arm's conditions pin its key columns (pos: their position
 * in the column definition list) to.
 */
Datum
gnomon_as_of_support_c(PG_FUNCTION_ARGS)
{
	Node	   *rawreq = (Node *) PG_GETARG_POINTER(0);
	SupportRequestSimplify *req;
	FuncExpr   *f;
	Node	   *quals;
	char	   *name;

	if (!IsA(rawreq, SupportRequestSimplify))
		PG_RETURN_POINTER(NULL);
	req = (SupportRequestSimplify *) rawreq;
	f = req->fcall;
	quals = arm_quals(req->root);
	name = get_func_name(f->funcid);
	if (name == NULL)
		PG_RETURN_POINTER(NULL);
	if (strcmp(name, "as_of_keyed_c") == 0)
	{
		Const	   *want = linitial(f->args);
		bool		pinned = quals != NULL && list_length(f->args) > 1;
		ListCell   *lc;

		if (!IsA(want, Const) || want->constisnull)
			PG_RETURN_POINTER(NULL);
		for_each_from(lc, f->args, 1)
		{
			Var		   *var = lfirst(lc);

			if (!pinned)
				break;
			if (!IsA(var, Var) || var->varlevelsup != 0 || pinned_by(quals, var->varno, var->varattno) == NULL)
				pinned = false;
		}
		PG_RETURN_POINTER(makeBoolConst(pinned ? DatumGetBool(want->constvalue) : !DatumGetBool(want->constvalue), false));
	}
	if (strcmp(name, "as_of_key_c") == 0 && list_length(f->args) > 6 && (list_length(f->args) - 6) % 2 == 0)
	{
		Const	   *keyed = list_nth(f->args, 5);
		Index		varno = 0;
		List	   *args = NIL;
		ListCell   *lc;
		int			i;
		FuncExpr   *nf;

		if (quals == NULL || !IsA(keyed, Const) || keyed->constisnull || DatumGetBool(keyed->constvalue))
			PG_RETURN_POINTER(NULL);
		/* the arm's one range table entry: this function */
		i = 0;
		foreach(lc, req->root->parse->rtable)
		{
			RangeTblEntry *rte = lfirst(lc);

			i++;
			if (rte->rtekind == RTE_FUNCTION && list_length(rte->functions) == 1
				&& IsA(((RangeTblFunction *) linitial(rte->functions))->funcexpr, FuncExpr)
				&& ((FuncExpr *) ((RangeTblFunction *) linitial(rte->functions))->funcexpr)->funcid == f->funcid)
			{
				if (varno != 0)
					PG_RETURN_POINTER(NULL);
				varno = i;
			}
		}
		if (varno == 0)
			PG_RETURN_POINTER(NULL);
		for (i = 0; i < 5; i++)
			args = lappend(args, list_nth(f->args, i));
		args = lappend(args, makeBoolConst(true, false));
		for (i = 6; i < list_length(f->args); i += 2)
		{
			Const	   *pos = list_nth(f->args, i);
			Node	   *v;

			if (!IsA(pos, Const) || pos->consttype != INT4OID || pos->constisnull)
				PG_RETURN_POINTER(NULL);
			v = pinned_by(quals, varno, (AttrNumber) DatumGetInt32(pos->constvalue));
			if (v == NULL)
				PG_RETURN_POINTER(NULL);
			args = lappend(args, pos);
			args = lappend(args, copyObject(v));
		}
		nf = makeFuncExpr(f->funcid, f->funcresulttype, args, f->funccollid, f->inputcollid, f->funcformat);
		nf->funcretset = f->funcretset;
		nf->funcvariadic = f->funcvariadic;
		nf->location = f->location;
		PG_RETURN_POINTER(nf);
	}
	PG_RETURN_POINTER(NULL);
}

/* gnomon.as_of_keyed_c(want boolean, VARIADIC keys "any") returns boolean: folded while planning; want if ever run */
Datum
gnomon_as_of_keyed_c(PG_FUNCTION_ARGS)
{
	/* (run only where no plan folded it: an arm that both pins and does not pin its key cannot be; keep the
	 * two-arm read, which is exact whatever the conditions) */
	PG_RETURN_BOOL(!PG_ARGISNULL(0) && !PG_GETARG_BOOL(0));
}

/* Per backend: a table's fallback query (prepared once) */
typedef struct KeyFallback
{
	Oid			fallback;
	int			nkeys;
	Oid			argtypes[FUNC_MAX_ARGS];
	SPIPlanPtr	plan;
} KeyFallback;

#define FALLBACK_CACHE_SIZE 16
static KeyFallback fallback_cache[FALLBACK_CACHE_SIZE];
static int	fallback_next = 0;

/* The fallback gnomon_t.<base>_as_of_k(keys..., coordinate) for one key, its rows into the tuplestore */
static void
run_fallback(Datum coordinate, Oid fallback, int nkeys, Datum *keys, Oid *keytypes, Tuplestorestate *ts)
{
	KeyFallback *fb = NULL;
	Datum		values[FUNC_MAX_ARGS];
	char		nulls[FUNC_MAX_ARGS];
	int			i;
	int			rc;
	uint64		r;

	for (i = 0; i < FALLBACK_CACHE_SIZE; i++)
		if (fallback_cache[i].plan != NULL && fallback_cache[i].fallback == fallback && fallback_cache[i].nkeys == nkeys
			&& memcmp(fallback_cache[i].argtypes, keytypes, nkeys * sizeof(Oid)) == 0)
			fb = &fallback_cache[i];
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "gnomon: SPI_connect failed");
	if (fb == NULL)
	{
		StringInfoData q;
		SPIPlanPtr	plan;

		initStringInfo(&q);
		/* (the rows as values of the table's type, dropped columns included, where "select *" would leave those out;
		 * called in the select list, since an alias for the rows could be a column's name) */
		appendStringInfo(&q, "select %s.%s(",
						 quote_identifier(get_namespace_name(get_func_namespace(fallback))),
						 quote_identifier(get_func_name(fallback)));
		for (i = 0; i <= nkeys; i++)
			appendStringInfo(&q, "%s$%d", i > 0 ? ", " : "", i + 1);
		appendStringInfoChar(&q, ')');
		keytypes[nkeys] = TEXTOID;
		plan = SPI_prepare(q.data, nkeys + 1, keytypes);
		if (plan == NULL)
			elog(ERROR, "gnomon: cannot prepare %s: %s", q.data, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(plan) != 0)
			elog(ERROR, "gnomon: SPI_keepplan failed");
		fb = &fallback_cache[fallback_next];
		fallback_next = (fallback_next + 1) % FALLBACK_CACHE_SIZE;
		if (fb->plan != NULL)
			SPI_freeplan(fb->plan);
		fb->fallback = fallback;
		fb->nkeys = nkeys;
		memcpy(fb->argtypes, keytypes, nkeys * sizeof(Oid));
		fb->plan = plan;
	}
	for (i = 0; i < nkeys; i++)
	{
		values[i] = keys[i];
		nulls[i] = ' ';
	}
	values[nkeys] = coordinate;
	nulls[nkeys] = coordinate == (Datum) 0 ? 'n' : ' ';
	rc = SPI_execute_plan(fb->plan, values, nulls, true, 0);
	if (rc != SPI_OK_SELECT)
		elog(ERROR, "gnomon: the as-of fallback failed: %s", SPI_result_code_string(rc));
	/* (rows of the table's type, as this function returns) */
	for (r = 0; r < SPI_processed; r++)
	{
		bool		isnull;
		Datum		row = SPI_getbinval(SPI_tuptable->vals[r], SPI_tuptable->tupdesc, 1, &isnull);
		HeapTupleHeader td;
		HeapTupleData t;

		if (isnull)
			continue;
		td = DatumGetHeapTupleHeader(row);
		t.t_len = HeapTupleHeaderGetDatumLength(td);
		ItemPointerSetInvalid(&t.t_self);
		t.t_tableOid = InvalidOid;
		t.t_data = td;
		tuplestore_puttuple(ts, &t);
	}
	SPI_finish();
}

/* Per backend: the equality procedures of a primary key's columns */
typedef struct KeyProcs
{
	Oid			index;
	int			nkeys;
	RegProcedure procs[INDEX_MAX_KEYS];
} KeyProcs;

#define KEY_PROCS_CACHE_SIZE 16
static KeyProcs key_procs_cache[KEY_PROCS_CACHE_SIZE];
static int	key_procs_next = 0;

static KeyProcs *
key_procs(Relation idx)
{
	KeyProcs   *kp;
	int			i;

	for (i = 0; i < KEY_PROCS_CACHE_SIZE; i++)
		if (key_procs_cache[i].index == RelationGetRelid(idx) && key_procs_cache[i].nkeys == idx->rd_index->indnkeyatts)
			return &key_procs_cache[i];
	kp = &key_procs_cache[key_procs_next];
	key_procs_next = (key_procs_next + 1) % KEY_PROCS_CACHE_SIZE;
	kp->index = InvalidOid;
	for (i = 0; i < idx->rd_index->indnkeyatts && i < INDEX_MAX_KEYS; i++)
	{
		Oid			opr = get_opfamily_member(idx->rd_opfamily[i], idx->rd_opcintype[i], idx->rd_opcintype[i],
											  BTEqualStrategyNumber);

		if (!OidIsValid(opr))
			elog(ERROR, "gnomon: no equality operator for column %d of index %s", i + 1, RelationGetRelationName(idx));
		kp->procs[i] = get_opcode(opr);
	}
	kp->nkeys = idx->rd_index->indnkeyatts;
	kp->index = RelationGetRelid(idx);
	return kp;
}

/*
 * gnomon.as_of_key_c(row anyelement, coordinate text, track_xid xid8, table_id integer, fallback regprocedure,
 * keyed boolean, VARIADIC attnum_and_values "any") returns setof anyelement: the rows of row's table as of the
 * coordinate whose key columns (attnum: their numbers in the table, in its primary key's order) have the values given
 * (at most one). Planned only with keyed true (see gnomon_as_of_support_c).
 */
Datum
gnomon_as_of_key_c(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	text	   *coordinate = PG_ARGISNULL(1) ? NULL : PG_GETARG_TEXT_PP(1);
	int			nargs = PG_NARGS();
	int			nkeys = (nargs - 6) / 2;
	Datum		keys[FUNC_MAX_ARGS];
	Oid			keytypes[FUNC_MAX_ARGS];
	int			keypos[FUNC_MAX_ARGS];
	Oid			relid;
	Oid			fallback;
	GnSnapshot *s;
	Relation	rel;
	Relation	idx;
	Oid			pk;
	Snapshot	snapshot;
	ScanKeyData sk[INDEX_MAX_KEYS];
	IndexScanDesc scan;
	TupleTableSlot *slot;
	KeyProcs   *kp;
	bool		current = false;
	int			i;

	if (PG_ARGISNULL(5) || !PG_GETARG_BOOL(5) || nkeys < 1 || nargs != 6 + 2 * nkeys || nkeys > INDEX_MAX_KEYS
		|| rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo))
		ereport(ERROR, (errcode(MAKE_SQLSTATE('G', 'N', '0', '2', '1')),
						errmsg("gnomon.as_of_key_c is called only by the as-of reads that gnomon.use_c_module(true) generates"),
						errdetail("Its key values are set while planning such a read, from the query's conditions on the key columns."),
						errhint("Read a key through gnomon_t.<table>_as_of(coordinate) with an equality on each key column.")));
	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);
	for (i = 0; i < nkeys; i++)
	{
		if (PG_ARGISNULL(6 + 2 * i))
			elog(ERROR, "gnomon.as_of_key_c: a null key position");
		keypos[i] = PG_GETARG_INT32(6 + 2 * i);
		/* "key = null" is true of no row */
		if (PG_ARGISNULL(7 + 2 * i))
			return (Datum) 0;
		keys[i] = PG_GETARG_DATUM(7 + 2 * i);
		keytypes[i] = get_fn_expr_argtype(fcinfo->flinfo, 7 + 2 * i);
	}
	/* the coordinate's check (every error of gnomon.read_snapshot), as in the two-arm read */
	s = resolve(coordinate, U64FromFullTransactionId(PG_GETARG_FULLTRANSACTIONID(2)), PG_GETARG_INT32(3));
	relid = get_typ_typrelid(get_fn_expr_argtype(fcinfo->flinfo, 0));
	fallback = PG_GETARG_OID(4);
	if (!OidIsValid(relid))
		ereport(ERROR, (errcode(MAKE_SQLSTATE('G', 'N', '0', '2', '1')),
						errmsg("gnomon.as_of_key_c: the first argument is not a row of a table")));
	rel = table_open(relid, AccessShareLock);
	pk = RelationGetPrimaryKeyIndex(rel);
	/* row-level security applies to the fallback's scans, not to a probe of ours */
	if (!OidIsValid(pk) || (rel->rd_rel->relrowsecurity && check_enable_rls(relid, InvalidOid, false) != RLS_NONE))
	{
		table_close(rel, AccessShareLock);
		run_fallback(PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1), fallback, nkeys, keys, keytypes, rsinfo->setResult);
		return (Datum) 0;
	}
	idx = index_open(pk, AccessShareLock);
	if (idx->rd_index->indnkeyatts != nkeys)
		ereport(ERROR, (errcode(MAKE_SQLSTATE('G', 'N', '0', '2', '1')),
						errmsg("the as-of read of %s names %d key columns, its primary key has %d", RelationGetRelationName(rel),
							   nkeys, idx->rd_index->indnkeyatts),
						errhint("Regenerate the table's reads: select gnomon.use_c_module(true);")));
	kp = key_procs(idx);
	for (i = 0; i < nkeys; i++)
	{
		if (idx->rd_index->indkey.values[i] != keypos[i])
			ereport(ERROR, (errcode(MAKE_SQLSTATE('G', 'N', '0', '2', '1')),
							errmsg("the as-of read of %s does not name the columns of its primary key", RelationGetRelationName(rel)),
							errhint("Regenerate the table's reads: select gnomon.use_c_module(true);")));
		ScanKeyEntryInitialize(&sk[i], 0, i + 1, BTEqualStrategyNumber, idx->rd_opcintype[i], idx->rd_indcollation[i],
							   kp->procs[i], keys[i]);
	}
	snapshot = (rsinfo->econtext != NULL && rsinfo->econtext->ecxt_estate != NULL)
		? rsinfo->econtext->ecxt_estate->es_snapshot : GetActiveSnapshot();
	slot = table_slot_create(rel, NULL);
	scan = index_beginscan(rel, idx, snapshot, nkeys, 0);
	index_rescan(scan, sk, nkeys, NULL, 0);
	if (index_getnext_slot(scan, ForwardScanDirection, slot))
	{
		bool		should_free;
		HeapTuple	t = ExecFetchSlotHeapTuple(slot, false, &should_free);

		/* the live arm's test; anything else (invisible, or not told by the xid) asks the fallback, as that arm does */
		current = xmin_visible(s, HeapTupleHeaderGetRawXmin(t->t_data)) > 0;
		/* (every column, those added since the row was written included: their values are in the table's descriptor) */
		if (current)
		{
			slot_getallattrs(slot);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, slot->tts_values, slot->tts_isnull);
		}
		if (should_free)
			heap_freetuple(t);
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	index_close(idx, AccessShareLock);
	table_close(rel, AccessShareLock);
	if (!current)
		run_fallback(PG_ARGISNULL(1) ? (Datum) 0 : PG_GETARG_DATUM(1), fallback, nkeys, keys, keytypes, rsinfo->setResult);
	return (Datum) 0;
}

/* For as_of_scan.c (read.h): the same steps as gnomon.as_of_key_c, for the executor node that takes its place */
GnSnapshot *
gnomon_resolve_coordinate(text *coordinate, uint64 track_xid, int32 table_id)
{
	return resolve(coordinate, track_xid, table_id);
}

int
gnomon_xmin_visible(GnSnapshot *s, TransactionId xmin)
{
	return xmin_visible(s, xmin);
}

void
gnomon_as_of_fallback(Datum coordinate, Oid fallback, int nkeys, Datum *keys, Oid *keytypes, Tuplestorestate *ts)
{
	run_fallback(coordinate, fallback, nkeys, keys, keytypes, ts);
}

RegProcedure *
gnomon_key_procs(Relation idx)
{
	return key_procs(idx)->procs;
}

Node *
gnomon_pinned_by(Node *qual, Index varno, AttrNumber attno)
{
	return pinned_by(qual, varno, attno);
}

bool
gnomon_pinned_value(Node *node)
{
	return pinned_value(node);
}
