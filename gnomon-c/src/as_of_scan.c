/*
 * as_of_scan.c: the C module's point read as an executor node of its own.
 *
 * A point read as of a coordinate (gnomon_t.<table>_as_of(c) where every key column is pinned) plans one arm, a
 * function scan of gnomon.as_of_key_c (read.c). A function scan starts a tuplestore, a function call with its eight
 * arguments and a projection of the function's result type on every execution of a generic plan: by callgrind most
 * of the instructions the read costs above a live read (docs/performance.md, "Past reads"). This file puts a
 * CustomScan, "gnomon.as_of_key_c", in place of that function scan while planning: its rel's only path. At execution it
 * opens the table and its primary key once, probes the key (index_rescan per execution or rescan), returns the live
 * row when its xmin is visible in the coordinate, and otherwise the rows of the table's fallback
 * gnomon_t.<base>_as_of_k for the key, exactly as gnomon.as_of_key_c does: the same functions of read.c, the same
 * errors, the same fallback (row-level security, a table without a primary key). It returns only the columns the plan
 * reads, as a virtual tuple over the live row's buffer, and leaves out the conditions that only pin the key (the probe
 * is them).
 *
 * The node is planned only for a function scan of gnomon.as_of_key_c whose key values the planner support function
 * has set (keyed true), whose arguments refer to no other relation, and whose columns are plain columns; anything else
 * keeps the function scan. gnomon.c_key_scan (on by default; a setting of the session) turns it off for new plans.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/pg_type.h"
#include "commands/explain.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/extensible.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/pathnodes.h"
#include "parser/parsetree.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/planner.h"
#include "optimizer/restrictinfo.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/regproc.h"
#include "utils/xid8.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/tuplestore.h"

#include "read.h"

#define AS_OF_SCAN_NAME "gnomon.as_of_key_c"
/* gnomon.as_of_key_c(row_type, coordinate, track_xid, table_id, fallback, keyed, pos, value, ...) */
#define ARG_COORDINATE 1
#define ARG_TRACK_XID 2
#define ARG_TABLE_ID 3
#define ARG_FALLBACK 4
#define ARG_KEYED 5
#define ARG_FIRST_KEY 6

static bool c_key_scan = true;

bool		gnomon_c_key_scan_enabled(void);

/* gnomon.c_key_scan, for branch_scan.c */
bool
gnomon_c_key_scan_enabled(void)
{
	return c_key_scan;
}
static bool as_of_planned = false;	/* a node was planned since the last reshape (see as_of_planner) */
static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

static Plan *plan_as_of_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist, List *clauses,
							 List *custom_plans);
static Node *create_as_of_state(CustomScan *cscan);
static void begin_as_of(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_as_of(CustomScanState *node);
static void end_as_of(CustomScanState *node);
static void rescan_as_of(CustomScanState *node);
static void explain_as_of(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods as_of_path_methods = {
	.CustomName = AS_OF_SCAN_NAME,
	.PlanCustomPath = plan_as_of_path,
};

static const CustomScanMethods as_of_scan_methods = {
	.CustomName = AS_OF_SCAN_NAME,
	.CreateCustomScanState = create_as_of_state,
};

static const CustomExecMethods as_of_exec_methods = {
	.CustomName = AS_OF_SCAN_NAME,
	.BeginCustomScan = begin_as_of,
	.ExecCustomScan = exec_as_of,
	.EndCustomScan = end_as_of,
	.ReScanCustomScan = rescan_as_of,
	.ExplainCustomScan = explain_as_of,
};

/* The call of gnomon.as_of_key_c with its key values set that a function scan runs; NULL if the rel is not one */
static FuncExpr *
keyed_call(RelOptInfo *rel, RangeTblEntry *rte)
{
	RangeTblFunction *rtf;
	FuncExpr   *f;
	Const	   *keyed;
	char	   *name;
	char	   *ns;
	int			nargs;
	int			i;

	if (rte->rtekind != RTE_FUNCTION || rte->funcordinality || list_length(rte->functions) != 1
		|| rel->reloptkind != RELOPT_BASEREL || IS_DUMMY_REL(rel) || !bms_is_empty(rel->lateral_relids))
		return NULL;
	rtf = linitial(rte->functions);
	if (!IsA(rtf->funcexpr, FuncExpr))
		return NULL;
	f = (FuncExpr *) rtf->funcexpr;
	nargs = list_length(f->args);
	if (!f->funcretset || nargs <= ARG_FIRST_KEY || (nargs - ARG_FIRST_KEY) % 2 != 0
		|| (nargs - ARG_FIRST_KEY) / 2 > INDEX_MAX_KEYS)
		return NULL;
	name = get_func_name(f->funcid);
	if (name == NULL || strcmp(name, "as_of_key_c") != 0)
		return NULL;
	ns = get_namespace_name(get_func_namespace(f->funcid));
	if (ns == NULL || strcmp(ns, "gnomon") != 0)
		return NULL;
	keyed = list_nth(f->args, ARG_KEYED);
	if (!IsA(keyed, Const) || keyed->constisnull || !DatumGetBool(keyed->constvalue))
		return NULL;
	for (i = 0; i < nargs; i++)
	{
		Node	   *a = list_nth(f->args, i);

		if (i == ARG_COORDINATE || (i >= ARG_FIRST_KEY && (i - ARG_FIRST_KEY) % 2 == 1))
		{
			if (!gnomon_pinned_value(a))
				return NULL;
		}
		else if (i != 0 && (!IsA(a, Const) || ((Const *) a)->constisnull))
			return NULL;
	}
	if (!OidIsValid(get_typ_typrelid(exprType(linitial(f->args)))))
		return NULL;
	return f;
}

/* Whether every column the rel's output and conditions read is a plain column of the table (no whole row, no system) */
static bool
plain_columns(RelOptInfo *rel)
{
	List	   *vars = pull_var_clause((Node *) rel->reltarget->exprs, PVC_INCLUDE_PLACEHOLDERS);
	ListCell   *lc;

	foreach(lc, rel->baserestrictinfo)
		vars = list_concat(vars, pull_var_clause((Node *) lfirst_node(RestrictInfo, lc)->clause, PVC_INCLUDE_PLACEHOLDERS));
	foreach(lc, vars)
	{
		Var		   *v = lfirst(lc);

		if (!IsA(v, Var) || v->varno != rel->relid || v->varattno <= 0 || v->varlevelsup != 0)
			return false;
	}
	return true;
}

static void
as_of_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	CustomPath *cp;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);
	if (!c_key_scan || keyed_call(rel, rte) == NULL || !plain_columns(rel))
		return;
	cp = makeNode(CustomPath);
	cp->path.pathtype = T_CustomScan;
	cp->path.parent = rel;
	cp->path.pathtarget = rel->reltarget;
	cp->path.param_info = NULL;
	cp->path.parallel_aware = false;
	cp->path.parallel_safe = false;
	cp->path.parallel_workers = 0;
	cp->path.rows = rel->rows;
	/* one primary key probe: cheaper than the function scan it replaces, which is dropped */
	cp->path.startup_cost = 0;
	cp->path.total_cost = cpu_tuple_cost + cpu_operator_cost * list_length(rel->baserestrictinfo);
	cp->path.pathkeys = NIL;
	cp->flags = CUSTOMPATH_SUPPORT_PROJECTION;	/* ExecScan projects */
	cp->custom_paths = NIL;
	cp->custom_private = NIL;
	cp->methods = &as_of_path_methods;
	rel->pathlist = NIL;
	rel->partial_pathlist = NIL;
	add_path(rel, &cp->path);
	as_of_planned = true;
}

static Plan *
plan_as_of_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist, List *clauses,
				List *custom_plans)
{
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	FuncExpr   *f = keyed_call(rel, rte);
	CustomScan *cs = makeNode(CustomScan);
	int			nkeys = (list_length(f->args) - ARG_FIRST_KEY) / 2;
	List	   *quals = NIL;
	List	   *exprs = list_make1(list_nth(f->args, ARG_COORDINATE));
	List	   *consts;
	List	   *keypos = NIL;
	List	   *attmap = NIL;
	List	   *scan_tlist = NIL;
	List	   *vars;
	ListCell   *lc;
	int			i;

	for (i = 0; i < nkeys; i++)
	{
		keypos = lappend_int(keypos, DatumGetInt32(((Const *) list_nth(f->args, ARG_FIRST_KEY + 2 * i))->constvalue));
		exprs = lappend(exprs, list_nth(f->args, ARG_FIRST_KEY + 2 * i + 1));
	}
	/* the conditions, less those that pin a key column to the value the probe looks up */
	foreach(lc, clauses)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		bool		probed = false;

		if (ri->pseudoconstant)
			continue;
		for (i = 0; i < nkeys && !probed; i++)
		{
			Node	   *v = gnomon_pinned_by((Node *) ri->clause, rel->relid, list_nth_int(keypos, i));

			probed = v != NULL && IsA(ri->clause, OpExpr) && equal(v, list_nth(exprs, i + 1));
		}
		if (!probed)
			quals = lappend(quals, ri->clause);
	}
	/* the scan tuple: the columns the rel's output (whatever tlist a projection puts on this node later) and the
	 * remaining conditions read, each once */
	vars = pull_var_clause((Node *) best_path->path.pathtarget->exprs, 0);
	vars = list_concat(vars, pull_var_clause((Node *) tlist, 0));
	vars = list_concat(vars, pull_var_clause((Node *) quals, 0));
	foreach(lc, vars)
	{
		Var		   *v = lfirst(lc);

		if (list_member_int(attmap, v->varattno))
			continue;
		attmap = lappend_int(attmap, v->varattno);
		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) copyObject(v), list_length(scan_tlist) + 1, NULL, false));
	}
	consts = list_make4(makeConst(OIDOID, -1, InvalidOid, sizeof(Oid),
								  ObjectIdGetDatum(get_typ_typrelid(exprType(linitial(f->args)))), false, true),
						list_nth(f->args, ARG_TRACK_XID), list_nth(f->args, ARG_TABLE_ID), list_nth(f->args, ARG_FALLBACK));
	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = quals;
	cs->scan.scanrelid = 0;
	cs->flags = best_path->flags;
	cs->custom_plans = NIL;
	cs->custom_exprs = exprs;
	cs->custom_private = list_make3(consts, keypos, attmap);
	cs->custom_scan_tlist = scan_tlist;
	cs->methods = &as_of_scan_methods;
	return &cs->scan.plan;
}

typedef struct AsOfScanState
{
	CustomScanState css;
	GnArgs		args;			/* the coordinate, then the key values */
	Oid			relid;
	uint64		track_xid;
	int32		table_id;
	Oid			fallback;
	int			nkeys;
	AttrNumber	keypos[INDEX_MAX_KEYS];
	Oid			keytypes[INDEX_MAX_KEYS + 1];
	int			natts;			/* the scan tuple's columns: their numbers in the table */
	AttrNumber *attmap;			/* 0: a constant of the scan tuple (see reshape_as_of) */
	Datum	   *constvals;
	bool	   *constnulls;
	AttrNumber	maxatt;
	Relation	rel;
	Relation	idx;
	IndexScanDesc scan;			/* begun once per execution, rescanned per probe */
	TupleTableSlot *heapslot;
	RegProcedure *procs;
	bool		probe_live;		/* false: the fallback reads (row-level security, no primary key) */
	bool		done;			/* this execution's (or rescan's) lookup ran */
	bool		from_fallback;
	Tuplestorestate *rows;		/* the fallback's rows */
	TupleTableSlot *rowslot;
} AsOfScanState;

static Node *
create_as_of_state(CustomScan *cscan)
{
	AsOfScanState *st = (AsOfScanState *) newNode(sizeof(AsOfScanState), T_CustomScanState);
	List	   *consts = linitial(cscan->custom_private);
	List	   *keypos = lsecond(cscan->custom_private);
	List	   *attmap = lthird(cscan->custom_private);
	ListCell   *lc;
	int			i;

	st->css.methods = &as_of_exec_methods;
	st->relid = DatumGetObjectId(((Const *) linitial(consts))->constvalue);
	st->track_xid = U64FromFullTransactionId(DatumGetFullTransactionId(((Const *) lsecond(consts))->constvalue));
	st->table_id = DatumGetInt32(((Const *) lthird(consts))->constvalue);
	st->fallback = DatumGetObjectId(((Const *) lfourth(consts))->constvalue);
	st->nkeys = list_length(keypos);
	i = 0;
	foreach(lc, keypos)
		st->keypos[i++] = (AttrNumber) lfirst_int(lc);
	for (i = 0; i < st->nkeys; i++)
		st->keytypes[i] = exprType(list_nth(cscan->custom_exprs, i + 1));
	st->natts = list_length(attmap);
	st->attmap = palloc(sizeof(AttrNumber) * (st->natts + 1));
	st->constvals = palloc0(sizeof(Datum) * (st->natts + 1));
	st->constnulls = palloc0(sizeof(bool) * (st->natts + 1));
	i = 0;
	st->maxatt = 0;
	foreach(lc, attmap)
	{
		st->attmap[i] = (AttrNumber) lfirst_int(lc);
		st->maxatt = Max(st->maxatt, st->attmap[i]);
		if (st->attmap[i] == 0)
		{
			Const	   *c = (Const *) ((TargetEntry *) list_nth(cscan->custom_scan_tlist, i))->expr;

			st->constvals[i] = c->constvalue;
			st->constnulls[i] = c->constisnull;
		}
		i++;
	}
	return (Node *) st;
}

static void
begin_as_of(CustomScanState *node, EState *estate, int eflags)
{
	AsOfScanState *st = (AsOfScanState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	Oid			pk;
	int			i;

	gnomon_args_init(&st->args, cs->custom_exprs, &node->ss.ps);
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
		return;
	st->rel = table_open(st->relid, AccessShareLock);
	pk = RelationGetPrimaryKeyIndex(st->rel);
	/* row-level security applies to the fallback's scans, not to a probe of ours */
	st->probe_live = OidIsValid(pk)
		&& !(st->rel->rd_rel->relrowsecurity && check_enable_rls(st->relid, InvalidOid, false) != RLS_NONE);
	if (!st->probe_live)
		return;
	st->idx = index_open(pk, AccessShareLock);
	if (st->idx->rd_index->indnkeyatts != st->nkeys)
		ereport(ERROR, (errcode(MAKE_SQLSTATE('G', 'N', '0', '2', '1')),
						errmsg("the as-of read of %s names %d key columns, its primary key has %d",
							   RelationGetRelationName(st->rel), st->nkeys, st->idx->rd_index->indnkeyatts),
						errhint("Regenerate the table's reads: select gnomon.use_c_module(true);")));
	for (i = 0; i < st->nkeys; i++)
		if (st->idx->rd_index->indkey.values[i] != st->keypos[i])
			ereport(ERROR, (errcode(MAKE_SQLSTATE('G', 'N', '0', '2', '1')),
							errmsg("the as-of read of %s does not name the columns of its primary key",
								   RelationGetRelationName(st->rel)),
							errhint("Regenerate the table's reads: select gnomon.use_c_module(true);")));
	st->procs = gnomon_key_procs(st->idx);
	st->heapslot = table_slot_create(st->rel, NULL);
	st->scan = index_beginscan(st->rel, st->idx, estate->es_snapshot, st->nkeys, 0);
}

/* The scan tuple: the columns the plan reads, from a row of the table's type */
static TupleTableSlot *
emit(AsOfScanState *st, TupleTableSlot *src)
{
	TupleTableSlot *out = st->css.ss.ss_ScanTupleSlot;
	int			i;

	ExecClearTuple(out);
	if (st->maxatt > 0)
		slot_getsomeattrs(src, st->maxatt);
	for (i = 0; i < st->natts; i++)
	{
		if (st->attmap[i] == 0)
		{
			out->tts_values[i] = st->constvals[i];
			out->tts_isnull[i] = st->constnulls[i];
			continue;
		}
		out->tts_values[i] = src->tts_values[st->attmap[i] - 1];
		out->tts_isnull[i] = src->tts_isnull[st->attmap[i] - 1];
	}
	return ExecStoreVirtualTuple(out);
}

void
gnomon_args_init(GnArgs *a, List *exprs, PlanState *ps)
{
	ParamListInfo pli = ps->state->es_param_list_info;
	ListCell   *lc;

	a->n = list_length(exprs);
	a->exprs = palloc0(sizeof(ExprState *) * Max(a->n, 1));
	a->consts = palloc0(sizeof(Const *) * Max(a->n, 1));
	a->params = palloc0(sizeof(int) * Max(a->n, 1));
	foreach(lc, exprs)
	{
		Node	   *e = lfirst(lc);
		int			n = foreach_current_index(lc);

		if (IsA(e, Const))
			a->consts[n] = (Const *) e;
		else if (IsA(e, Param) && ((Param *) e)->paramkind == PARAM_EXTERN && pli != NULL && pli->paramFetch == NULL
				 && ((Param *) e)->paramid > 0 && ((Param *) e)->paramid <= pli->numParams
				 && pli->params[((Param *) e)->paramid - 1].ptype == ((Param *) e)->paramtype)
			a->params[n] = ((Param *) e)->paramid;
		else
			a->exprs[n] = ExecInitExpr((Expr *) e, ps);
	}
}

Datum
gnomon_arg_value(GnArgs *a, int i, PlanState *ps, bool *isnull)
{
	if (a->consts[i] != NULL)
	{
		*isnull = a->consts[i]->constisnull;
		return a->consts[i]->constvalue;
	}
	if (a->params[i] > 0)
	{
		ParamExternData *prm = &ps->state->es_param_list_info->params[a->params[i] - 1];

		*isnull = prm->isnull;
		return prm->value;
	}
	return ExecEvalExprSwitchContext(a->exprs[i], ps->ps_ExprContext, isnull);
}

/* The key's row as of the coordinate: the live row, or the fallback's rows (gnomon.as_of_key_c's steps) */
static TupleTableSlot *
next_as_of(ScanState *ss)
{
	AsOfScanState *st = (AsOfScanState *) ss;

	if (!st->done)
	{
		Datum		keys[INDEX_MAX_KEYS];
		Datum		coordinate;
		bool		coordinate_null;
		GnSnapshot *s;
		int			i;

		st->done = true;
		st->from_fallback = false;
		coordinate = gnomon_arg_value(&st->args, 0, &ss->ps, &coordinate_null);
		for (i = 0; i < st->nkeys; i++)
		{
			bool		isnull;

			keys[i] = gnomon_arg_value(&st->args, i + 1, &ss->ps, &isnull);
			/* "key = null" is true of no row */
			if (isnull)
				return ExecClearTuple(ss->ss_ScanTupleSlot);
		}
		/* the coordinate's check (every error of gnomon.read_snapshot) */
		s = gnomon_resolve_coordinate(coordinate_null ? NULL : DatumGetTextPP(coordinate), st->track_xid, st->table_id);
		if (st->probe_live)
		{
			ScanKeyData sk[INDEX_MAX_KEYS];

			for (i = 0; i < st->nkeys; i++)
				ScanKeyEntryInitialize(&sk[i], 0, i + 1, BTEqualStrategyNumber, st->idx->rd_opcintype[i],
									   st->idx->rd_indcollation[i], st->procs[i], keys[i]);
			index_rescan(st->scan, sk, st->nkeys, NULL, 0);
			if (index_getnext_slot(st->scan, ForwardScanDirection, st->heapslot))
			{
				bool		should_free;
				HeapTuple	t = ExecFetchSlotHeapTuple(st->heapslot, false, &should_free);
				bool		current = gnomon_xmin_visible(s, HeapTupleHeaderGetRawXmin(t->t_data)) > 0;

				if (should_free)
					heap_freetuple(t);
				if (current)
					return emit(st, st->heapslot);
			}
		}
		/* a key deleted or changed since the coordinate, or one the xid cannot place: the fallback */
		if (st->rows == NULL)
		{
			MemoryContext old = MemoryContextSwitchTo(ss->ps.state->es_query_cxt);

			st->rows = tuplestore_begin_heap(false, false, work_mem);
			st->rowslot = MakeSingleTupleTableSlot(RelationGetDescr(st->rel), &TTSOpsMinimalTuple);
			MemoryContextSwitchTo(old);
		}
		else
			tuplestore_clear(st->rows);
		gnomon_as_of_fallback(coordinate_null ? (Datum) 0 : coordinate, st->fallback, st->nkeys, keys, st->keytypes,
							  st->rows);
		st->from_fallback = true;
	}
	if (st->from_fallback && tuplestore_gettupleslot(st->rows, true, false, st->rowslot))
		return emit(st, st->rowslot);
	return ExecClearTuple(ss->ss_ScanTupleSlot);
}

static bool
recheck_as_of(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
exec_as_of(CustomScanState *node)
{
	return ExecScan(&node->ss, next_as_of, recheck_as_of);
}

static void
rescan_as_of(CustomScanState *node)
{
	AsOfScanState *st = (AsOfScanState *) node;

	st->done = false;
	st->from_fallback = false;
	ExecScanReScan(&node->ss);
}

static void
end_as_of(CustomScanState *node)
{
	AsOfScanState *st = (AsOfScanState *) node;

	if (st->heapslot != NULL)
		ExecDropSingleTupleTableSlot(st->heapslot);
	if (st->scan != NULL)
		index_endscan(st->scan);
	if (st->idx != NULL)
		index_close(st->idx, AccessShareLock);
	if (st->rowslot != NULL)
		ExecDropSingleTupleTableSlot(st->rowslot);
	if (st->rows != NULL)
		tuplestore_end(st->rows);
	if (st->rel != NULL)
		table_close(st->rel, AccessShareLock);
}

static void
explain_as_of(CustomScanState *node, List *ancestors, ExplainState *es)
{
	AsOfScanState *st = (AsOfScanState *) node;
	char	   *rel = get_rel_name(st->relid);
	char	   *ns = get_namespace_name(get_rel_namespace(st->relid));

	if (rel != NULL && ns != NULL)
		ExplainPropertyText("Primary Key Of", quote_qualified_identifier(ns, rel), es);
	ExplainPropertyText("Else", format_procedure(st->fallback), es);
}

/*
 * After planning: a node whose output is only its columns and constants (the arm of the read: the columns the query
 * reads, nulls for the others) gets a scan tuple of exactly that output, so that the executor builds no projection
 * for it at each execution (ExecConditionalAssignProjectionInfo finds the output equal to the scan tuple). The
 * planner cannot tell the node its output earlier: a projection put on a scan node replaces its target list after
 * the node is planned.
 */
static void
reshape_as_of(CustomScan *cs)
{
	List	   *scan_tlist = NIL;
	List	   *tlist = NIL;
	List	   *attmap = NIL;
	List	   *old_attmap = lthird(cs->custom_private);
	ListCell   *lc;

	if (cs->scan.plan.qual != NIL)
		return;
	foreach(lc, cs->scan.plan.targetlist)
	{
		TargetEntry *te = lfirst_node(TargetEntry, lc);
		int			n = list_length(scan_tlist) + 1;
		Expr	   *e = te->expr;

		if (IsA(e, Var) && ((Var *) e)->varno == INDEX_VAR && ((Var *) e)->varattno > 0
			&& ((Var *) e)->varattno <= list_length(cs->custom_scan_tlist))
		{
			TargetEntry *src = list_nth(cs->custom_scan_tlist, ((Var *) e)->varattno - 1);

			scan_tlist = lappend(scan_tlist, makeTargetEntry(copyObject(src->expr), n, te->resname, false));
			attmap = lappend_int(attmap, list_nth_int(old_attmap, ((Var *) e)->varattno - 1));
		}
		else if (IsA(e, Const))
		{
			scan_tlist = lappend(scan_tlist, makeTargetEntry(copyObject(e), n, te->resname, false));
			attmap = lappend_int(attmap, 0);
		}
		else
			return;
		tlist = lappend(tlist, makeTargetEntry((Expr *) makeVar(INDEX_VAR, n, exprType((Node *) e), exprTypmod((Node *) e),
																 exprCollation((Node *) e), 0),
											   te->resno, te->resname, te->resjunk));
	}
	cs->custom_scan_tlist = scan_tlist;
	cs->scan.plan.targetlist = tlist;
	cs->custom_private = list_make3(linitial(cs->custom_private), lsecond(cs->custom_private), attmap);
}

static void
reshape_plan(Plan *plan)
{
	ListCell   *lc;

	if (plan == NULL)
		return;
	check_stack_depth();
	reshape_plan(plan->lefttree);
	reshape_plan(plan->righttree);
	switch (nodeTag(plan))
	{
		case T_Append:
			foreach(lc, ((Append *) plan)->appendplans)
				reshape_plan(lfirst(lc));
			break;
		case T_MergeAppend:
			foreach(lc, ((MergeAppend *) plan)->mergeplans)
				reshape_plan(lfirst(lc));
			break;
		case T_SubqueryScan:
			reshape_plan(((SubqueryScan *) plan)->subplan);
			break;
		case T_CustomScan:
			if (((CustomScan *) plan)->methods == &as_of_scan_methods)
				reshape_as_of((CustomScan *) plan);
			foreach(lc, ((CustomScan *) plan)->custom_plans)
				reshape_plan(lfirst(lc));
			break;
		default:
			break;
	}
}

static planner_hook_type prev_planner = NULL;

static PlannedStmt *
as_of_planner(Query *parse, const char *query_string, int cursorOptions, ParamListInfo boundParams)
{
	PlannedStmt *stmt = prev_planner ? prev_planner(parse, query_string, cursorOptions, boundParams)
		: standard_planner(parse, query_string, cursorOptions, boundParams);
	ListCell   *lc;

	if (!as_of_planned)
		return stmt;
	as_of_planned = false;
	reshape_plan(stmt->planTree);
	foreach(lc, stmt->subplans)
		reshape_plan(lfirst(lc));
	return stmt;
}

void
gnomon_as_of_scan_init(void)
{
	/* once per process (see gnomon_branch_init) */
	if (set_rel_pathlist_hook == as_of_set_rel_pathlist)
		return;
	DefineCustomBoolVariable("gnomon.c_key_scan",
							 "Plans the C module's point reads (as of a coordinate, or on a branch) as executor nodes of its own (Custom Scan).",
							 "Off: a function scan of gnomon.as_of_key_c, and an append of the branch read's scans, as before. Applies to plans made after the change.",
							 &c_key_scan, true, PGC_USERSET, 0, NULL, NULL, NULL);
	if (GetCustomScanMethods(AS_OF_SCAN_NAME, true) == NULL)
		RegisterCustomScanMethods(&as_of_scan_methods);
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = as_of_set_rel_pathlist;
	prev_planner = planner_hook;
	planner_hook = as_of_planner;
}
