/*
 * branch_scan.c: the C module's branch point read as an executor node of its own.
 *
 * A branch view's read with the module on (gnomon_t.<base>_cur(), R__08_branches.sql) is a UNION ALL of main's live
 * rows, the branch rows, the branch history and main's history, each filtered by gnomon.branch_pick_c; PostgreSQL
 * flattens it into an Append of three or four index scans, each started on every execution of a generic plan, where
 * main's point read starts one (docs/performance.md, "Branches"). Almost every key a branch read meets was never
 * written on the branch nor on main since the cutoff: its state is main's live row.
 *
 * This file puts a CustomScan, "gnomon.branch_pick_c", in place of that Append when the query pins every key column
 * and has no other condition than the pick and the partition bounds of the generated read. At execution it resolves
 * the key as gnomon.branch_pick_c does (the same functions of branch.c: the selected branch's point, the same
 * permission check and errors, the same probes), and when the key's state is main's live row it probes main's
 * primary key itself and returns that row's columns: one index descent and no other node started. Any other key (one
 * written on a level of the chain, or changed on main since the cutoff) starts the Append the planner made, as a
 * child of the node, and returns what it returns, exactly as before. gnomon.c_key_scan (as_of_scan.c) turns the node
 * off for new plans.
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
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/pathnode.h"
#include "optimizer/paths.h"
#include "optimizer/restrictinfo.h"
#include "parser/parsetree.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"

#include "branch.h"
#include "leaf_probe.h"
#include "read.h"

#define BRANCH_SCAN_NAME "gnomon.branch_pick_c"
/* gnomon.branch_pick_c(table_id, place, branch, id, no_row, VARIADIC key) */
#define PICK_FIRST_KEY 5

extern bool gnomon_c_key_scan_enabled(void);	/* as_of_scan.c */

static set_rel_pathlist_hook_type prev_set_rel_pathlist = NULL;

static Plan *plan_branch_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist, List *clauses,
							  List *custom_plans);
static Node *create_branch_state(CustomScan *cscan);
static void begin_branch(CustomScanState *node, EState *estate, int eflags);
static TupleTableSlot *exec_branch(CustomScanState *node);
static void end_branch(CustomScanState *node);
static void rescan_branch(CustomScanState *node);
static void explain_branch(CustomScanState *node, List *ancestors, ExplainState *es);

static const CustomPathMethods branch_path_methods = {
	.CustomName = BRANCH_SCAN_NAME,
	.PlanCustomPath = plan_branch_path,
};

static const CustomScanMethods branch_scan_methods = {
	.CustomName = BRANCH_SCAN_NAME,
	.CreateCustomScanState = create_branch_state,
};

static const CustomExecMethods branch_exec_methods = {
	.CustomName = BRANCH_SCAN_NAME,
	.BeginCustomScan = begin_branch,
	.ExecCustomScan = exec_branch,
	.EndCustomScan = end_branch,
	.ReScanCustomScan = rescan_branch,
	.ExplainCustomScan = explain_branch,
};

/* gnomon.branch_pick_c(...) with a constant table and key arguments that are columns of the rel; NULL if not */
static FuncExpr *
pick_call(Node *clause, Index relid)
{
	FuncExpr   *f;
	char	   *name;
	char	   *ns;
	ListCell   *lc;

	if (clause == NULL || !IsA(clause, FuncExpr))
		return NULL;
	f = (FuncExpr *) clause;
	if (list_length(f->args) <= PICK_FIRST_KEY || list_length(f->args) - PICK_FIRST_KEY > GN_MAX_KEYS - 2)
		return NULL;
	name = get_func_name(f->funcid);
	if (name == NULL || strcmp(name, "branch_pick_c") != 0)
		return NULL;
	ns = get_namespace_name(get_func_namespace(f->funcid));
	if (ns == NULL || strcmp(ns, "gnomon") != 0)
		return NULL;
	if (!IsA(linitial(f->args), Const) || ((Const *) linitial(f->args))->constisnull)
		return NULL;
	for_each_from(lc, f->args, PICK_FIRST_KEY)
	{
		Var		   *v = lfirst(lc);

		if (!IsA(v, Var) || v->varno != relid || v->varlevelsup != 0 || v->varattno <= 0)
			return NULL;
	}
	return f;
}

/* A column of the rel by name (the generated read's g_* columns); 0 if none */
static AttrNumber
column_named(RangeTblEntry *rte, const char *name)
{
	ListCell   *lc;

	foreach(lc, rte->eref->colnames)
		if (strcmp(strVal(lfirst(lc)), name) == 0)
			return foreach_current_index(lc) + 1;
	return 0;
}

/* The generated read's partition bound "(u.g_prune is null or …)", "(u.g_hprune is null or …)": true on main's row */
static bool
bound_clause(Node *clause, Index relid, AttrNumber prune, AttrNumber hprune)
{
	BoolExpr   *b;
	NullTest   *nt;
	Var		   *v;

	if (!is_orclause(clause))
		return false;
	b = (BoolExpr *) clause;
	nt = linitial(b->args);
	if (!IsA(nt, NullTest) || nt->nulltesttype != IS_NULL || nt->argisrow || !IsA(nt->arg, Var))
		return false;
	v = (Var *) nt->arg;
	return v->varno == relid && v->varlevelsup == 0 && (v->varattno == prune || v->varattno == hprune) && v->varattno > 0;
}

/* The child of the append relation that reads main's live rows: its g_place is the constant 0 */
static AppendRelInfo *
main_arm(PlannerInfo *root, Index relid, AttrNumber place)
{
	ListCell   *lc;
	AppendRelInfo *found = NULL;

	foreach(lc, root->append_rel_list)
	{
		AppendRelInfo *ai = lfirst(lc);
		Const	   *c;

		if (ai->parent_relid != relid || place > list_length(ai->translated_vars))
			continue;
		c = list_nth(ai->translated_vars, place - 1);
		if (c == NULL || !IsA(c, Const) || c->constisnull || c->consttype != INT4OID || DatumGetInt32(c->constvalue) != 0)
			continue;
		if (found != NULL || planner_rt_fetch(ai->child_relid, root)->rtekind != RTE_RELATION
			|| planner_rt_fetch(ai->child_relid, root)->inh)
			return NULL;
		found = ai;
	}
	return found;
}

/* What a branch point read needs, from the rel; false if it is not one */
static bool
branch_read(PlannerInfo *root, RelOptInfo *rel, RangeTblEntry *rte, FuncExpr **pick, List **values,
			AppendRelInfo **arm)
{
	AttrNumber	place = column_named(rte, "g_place");
	AttrNumber	prune = column_named(rte, "g_prune");
	AttrNumber	hprune = column_named(rte, "g_hprune");
	ListCell   *lc;
	ListCell   *kc;

	*pick = NULL;
	*values = NIL;
	if (place == 0)
		return false;
	foreach(lc, rel->baserestrictinfo)
	{
		FuncExpr   *f = pick_call((Node *) lfirst_node(RestrictInfo, lc)->clause, rel->relid);

		if (f != NULL)
		{
			if (*pick != NULL)
				return false;
			*pick = f;
		}
	}
	if (*pick == NULL)
		return false;
	/* every key column pinned to a value */
	for_each_from(kc, (*pick)->args, PICK_FIRST_KEY)
	{
		Var		   *k = lfirst(kc);
		Node	   *v = NULL;

		foreach(lc, rel->baserestrictinfo)
		{
			RestrictInfo *ri = lfirst_node(RestrictInfo, lc);

			if (!ri->pseudoconstant && IsA(ri->clause, OpExpr)
				&& (v = gnomon_pinned_by((Node *) ri->clause, rel->relid, k->varattno)) != NULL)
				break;
		}
		if (v == NULL || exprType(v) != k->vartype)
			return false;
		*values = lappend(*values, v);
	}
	/* and nothing else than the pick, the pins and the bounds (all true on main's live row) */
	foreach(lc, rel->baserestrictinfo)
	{
		RestrictInfo *ri = lfirst_node(RestrictInfo, lc);
		Node	   *c = (Node *) ri->clause;
		bool		pin = false;

		if (pick_call(c, rel->relid) != NULL || bound_clause(c, rel->relid, prune, hprune))
			continue;
		for_each_from(kc, (*pick)->args, PICK_FIRST_KEY)
			if (IsA(c, OpExpr) && gnomon_pinned_by(c, rel->relid, ((Var *) lfirst(kc))->varattno) != NULL)
				pin = true;
		if (!pin)
			return false;
	}
	*arm = main_arm(root, rel->relid, place);
	/* a row-level security policy on main's arm: its scan applies it, a probe of ours would not */
	return *arm != NULL && planner_rt_fetch((*arm)->child_relid, root)->securityQuals == NIL;
}

static void
branch_set_rel_pathlist(PlannerInfo *root, RelOptInfo *rel, Index rti, RangeTblEntry *rte)
{
	FuncExpr   *pick;
	List	   *values;
	AppendRelInfo *arm;
	Path	   *append = NULL;
	CustomPath *cp;
	ListCell   *lc;

	if (prev_set_rel_pathlist)
		prev_set_rel_pathlist(root, rel, rti, rte);
	if (!gnomon_c_key_scan_enabled() || rte->rtekind != RTE_SUBQUERY || !rte->inh || rel->reloptkind != RELOPT_BASEREL
		|| IS_DUMMY_REL(rel) || !bms_is_empty(rel->lateral_relids))
		return;
	if (!branch_read(root, rel, rte, &pick, &values, &arm))
		return;
	foreach(lc, values)
		if (contain_var_clause(lfirst(lc)) || contain_volatile_functions(lfirst(lc)))
			return;
	/* the columns the rel gives: plain columns, each found in main's arm as a column or a constant */
	foreach(lc, rel->reltarget->exprs)
	{
		Var		   *v = lfirst(lc);
		Node	   *m;

		if (!IsA(v, Var) || v->varno != rti || v->varattno <= 0 || v->varattno > list_length(arm->translated_vars))
			return;
		m = list_nth(arm->translated_vars, v->varattno - 1);
		if (m == NULL || !(IsA(m, Const) || (IsA(m, Var) && ((Var *) m)->varattno > 0)))
			return;
	}
	foreach(lc, rel->pathlist)
	{
		Path	   *p = lfirst(lc);

		if (p->param_info == NULL && (append == NULL || p->total_cost < append->total_cost))
			append = p;
	}
	if (append == NULL)
		return;
	cp = makeNode(CustomPath);
	cp->path.pathtype = T_CustomScan;
	cp->path.parent = rel;
	cp->path.pathtarget = rel->reltarget;
	cp->path.param_info = NULL;
	cp->path.parallel_aware = false;
	cp->path.parallel_safe = false;
	cp->path.parallel_workers = 0;
	cp->path.rows = append->rows;
	cp->path.startup_cost = 0;
	/* one resolution and one primary-key probe for nearly every key; the append only for the others */
	cp->path.total_cost = append->total_cost / 4;
	cp->path.pathkeys = NIL;
	cp->flags = CUSTOMPATH_SUPPORT_PROJECTION;
	cp->custom_paths = list_make1(append);
	cp->custom_private = NIL;
	cp->methods = &branch_path_methods;
	rel->pathlist = NIL;
	rel->partial_pathlist = NIL;
	add_path(rel, &cp->path);
}

static Plan *
plan_branch_path(PlannerInfo *root, RelOptInfo *rel, CustomPath *best_path, List *tlist, List *clauses,
				 List *custom_plans)
{
	RangeTblEntry *rte = planner_rt_fetch(rel->relid, root);
	FuncExpr   *pick;
	List	   *values;
	AppendRelInfo *arm;
	CustomScan *cs = makeNode(CustomScan);
	List	   *scan_tlist = NIL;
	List	   *colmap = NIL;	/* per scan column: main's column number, or 0 and a constant */
	List	   *consts = NIL;
	List	   *keycols = NIL;
	ListCell   *lc;

	if (!branch_read(root, rel, rte, &pick, &values, &arm))
		elog(ERROR, "gnomon: the branch read's node lost its conditions while planning");
	/* (the path's target: the rel's own, which a projection for the query's output may have replaced since) */
	foreach(lc, best_path->path.pathtarget->exprs)
	{
		Var		   *v = lfirst(lc);
		Node	   *m = list_nth(arm->translated_vars, v->varattno - 1);

		scan_tlist = lappend(scan_tlist, makeTargetEntry((Expr *) copyObject(v), list_length(scan_tlist) + 1, NULL, false));
		if (IsA(m, Var))
		{
			colmap = lappend_int(colmap, ((Var *) m)->varattno);
			consts = lappend(consts, makeNullConst(INT4OID, -1, InvalidOid));
		}
		else
		{
			colmap = lappend_int(colmap, 0);
			consts = lappend(consts, copyObject(m));
		}
	}
	for_each_from(lc, pick->args, PICK_FIRST_KEY)
	{
		Node	   *m = list_nth(arm->translated_vars, ((Var *) lfirst(lc))->varattno - 1);

		keycols = lappend_int(keycols, (m != NULL && IsA(m, Var)) ? ((Var *) m)->varattno : 0);
	}
	cs->scan.plan.targetlist = tlist;
	cs->scan.plan.qual = NIL;
	cs->scan.scanrelid = 0;
	cs->flags = best_path->flags;
	cs->custom_plans = custom_plans;
	cs->custom_exprs = values;
	cs->custom_private = list_make5(list_make2(copyObject(linitial(pick->args)),
											   makeConst(OIDOID, -1, InvalidOid, sizeof(Oid),
														 ObjectIdGetDatum(planner_rt_fetch(arm->child_relid, root)->relid),
														 false, true)),
									colmap, consts, keycols, NIL);
	cs->custom_scan_tlist = scan_tlist;
	cs->methods = &branch_scan_methods;
	return &cs->scan.plan;
}

typedef struct BranchScanState
{
	CustomScanState css;
	int32		table_id;
	Oid			main_relid;
	int			nkeys;
	GnArgs		args;			/* the key values */
	AttrNumber	keycols[GN_MAX_KEYS];
	int			natts;
	AttrNumber *colmap;
	Datum	   *constvals;
	bool	   *constnulls;
	AttrNumber	maxatt;
	int			eflags;
	Relation	rel;
	Relation	idx;
	IndexScanDesc scan;			/* main's primary key by an index scan, begun when a key needs it */
	LeafProbe	lp;				/* else by a probe of its leaf (leaf_probe.c) */
	bool		lp_ok;
	TupleTableSlot *heapslot;
	RegProcedure *procs;
	bool		probe_main;		/* main's primary key is the key's columns, in order */
	bool		checked;		/* the permission check and the point's age, once per execution */
	bool		done;
	bool		from_child;
	PlanState  *child;			/* the planner's append, started only when a key needs it */
} BranchScanState;

static Node *
create_branch_state(CustomScan *cscan)
{
	BranchScanState *st = (BranchScanState *) newNode(sizeof(BranchScanState), T_CustomScanState);
	List	   *ids = linitial(cscan->custom_private);
	List	   *colmap = lsecond(cscan->custom_private);
	List	   *consts = lthird(cscan->custom_private);
	List	   *keycols = lfourth(cscan->custom_private);
	ListCell   *lc;
	int			i;

	st->css.methods = &branch_exec_methods;
	st->table_id = DatumGetInt32(((Const *) linitial(ids))->constvalue);
	st->main_relid = DatumGetObjectId(((Const *) lsecond(ids))->constvalue);
	st->nkeys = list_length(keycols);
	foreach(lc, keycols)
		st->keycols[foreach_current_index(lc)] = (AttrNumber) lfirst_int(lc);
	st->natts = list_length(colmap);
	st->colmap = palloc0(sizeof(AttrNumber) * (st->natts + 1));
	st->constvals = palloc0(sizeof(Datum) * (st->natts + 1));
	st->constnulls = palloc0(sizeof(bool) * (st->natts + 1));
	for (i = 0; i < st->natts; i++)
	{
		Const	   *c = list_nth(consts, i);

		st->colmap[i] = (AttrNumber) list_nth_int(colmap, i);
		st->maxatt = Max(st->maxatt, st->colmap[i]);
		st->constvals[i] = c->constvalue;
		st->constnulls[i] = c->constisnull;
	}
	return (Node *) st;
}

static void
start_child(BranchScanState *st)
{
	CustomScan *cs = (CustomScan *) st->css.ss.ps.plan;
	EState	   *estate = st->css.ss.ps.state;
	MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);

	st->child = ExecInitNode(linitial(cs->custom_plans), estate, st->eflags);
	st->css.custom_ps = list_make1(st->child);
	MemoryContextSwitchTo(old);
}

static void
begin_branch(CustomScanState *node, EState *estate, int eflags)
{
	BranchScanState *st = (BranchScanState *) node;
	CustomScan *cs = (CustomScan *) node->ss.ps.plan;
	Oid			pk;
	int			i;

	st->eflags = eflags;
	gnomon_args_init(&st->args, cs->custom_exprs, &node->ss.ps);
	/* EXPLAIN shows the append the node starts for the keys that need it */
	if (eflags & EXEC_FLAG_EXPLAIN_ONLY)
	{
		start_child(st);
		return;
	}
	st->rel = table_open(st->main_relid, AccessShareLock);
	pk = RelationGetPrimaryKeyIndex(st->rel);
	/* (row-level security in force: main's arm applies it, so every key goes to the append) */
	if (!OidIsValid(pk)
		|| (st->rel->rd_rel->relrowsecurity && check_enable_rls(st->main_relid, InvalidOid, false) != RLS_NONE))
		return;
	st->idx = index_open(pk, AccessShareLock);
	st->probe_main = st->idx->rd_index->indnkeyatts == st->nkeys;
	for (i = 0; i < st->nkeys && st->probe_main; i++)
		st->probe_main = st->idx->rd_index->indkey.values[i] == st->keycols[i];
	if (!st->probe_main)
		return;
	st->procs = gnomon_key_procs(st->idx);
	st->heapslot = table_slot_create(st->rel, NULL);
	st->lp_ok = gnomon_leaf_probe_begin(&st->lp, st->rel, st->idx, st->nkeys, st->nkeys, estate->es_snapshot);
}

/* The header of the heap tuple in a slot of main's table (in place: a buffer slot's tuple) */
static HeapTupleHeader
live_header(TupleTableSlot *slot)
{
	bool		should_free;
	HeapTuple	t = ExecFetchSlotHeapTuple(slot, false, &should_free);

	Assert(!should_free);
	return t->t_data;
}

static TupleTableSlot *
next_branch(ScanState *ss)
{
	BranchScanState *st = (BranchScanState *) ss;
	TupleTableSlot *out = ss->ss_ScanTupleSlot;

	if (!st->done)
	{
		Datum		keys[GN_MAX_KEYS];
		BranchTable *t;
		BranchPoint *p;
		KeyState	ks;
		int			i;

		st->done = true;
		st->from_child = false;
		for (i = 0; i < st->nkeys; i++)
		{
			bool		isnull;

			keys[i] = gnomon_arg_value(&st->args, i, &ss->ps, &isnull);
			/* keys are never null: the pick is false for every row */
			if (isnull)
				return ExecClearTuple(out);
		}
		t = gnomon_branch_table(st->table_id);
		if (t->nkeys != st->nkeys)
			elog(ERROR, "gnomon: the branch read of table %d names %d key columns, the table has %d", st->table_id,
				 st->nkeys, t->nkeys);
		/* gnomon.branch_pick_c's checks, in its order: the permission, the point, its age */
		if (!st->checked
			&& pg_class_aclcheck(t->main_relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK
			&& (!OidIsValid(t->view_relid) || pg_class_aclcheck(t->view_relid, GetUserId(), ACL_SELECT) != ACLCHECK_OK))
			ereport(ERROR,
					(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
					 errmsg("permission denied to read the branch rows of table %s", get_rel_name(t->main_relid)),
					 errhint("Grant SELECT on the table, or on its branch view.")));
		p = gnomon_branch_point(ss->ps.state->es_query_cxt);
		if (!st->checked)
		{
			if (!gnomon_branch_visible(t->track_xid, p->main_snap))
				gnomon_branch_raise("select gnomon.point_too_old($1, gnomon.current_point())", st->table_id);
			st->checked = true;
		}
		if (!st->probe_main)
			gnomon_branch_resolve_key(t, p, keys, &ks);
		else if (!gnomon_branch_resolve_levels(t, p, keys, &ks))
		{
			bool		found = false;
			int			n = -1;

			/*
			 * main's live row, as main's arm reads it (the statement's snapshot): the entries of the key on a leaf of
			 * main's primary key, the first the snapshot sees; an index scan when the leaf probe cannot run
			 * (SERIALIZABLE) or the key's entries may continue on the next leaf
			 */
			if (st->lp_ok)
			{
				bool		nulls[GN_MAX_KEYS];

				memset(nulls, 0, sizeof(nulls));
				n = gnomon_leaf_probe(&st->lp, keys, nulls);
				for (i = 0; i < n && !found; i++)
					found = gnomon_leaf_probe_fetch(&st->lp, i, st->heapslot);
			}
			if (n < 0)
			{
				ScanKeyData sk[GN_MAX_KEYS];

				elog(DEBUG1, "gnomon: branch read of table %d: main's primary key by an index scan (%s)", st->table_id,
					 st->lp_ok ? "the key's entries may continue on the next leaf" : "no leaf probe: SERIALIZABLE");

				for (i = 0; i < st->nkeys; i++)
					ScanKeyEntryInitialize(&sk[i], 0, i + 1, BTEqualStrategyNumber, st->idx->rd_opcintype[i],
										   st->idx->rd_indcollation[i], st->procs[i], keys[i]);
				if (st->scan == NULL)
					st->scan = index_beginscan(st->rel, st->idx, st->css.ss.ps.state->es_snapshot, st->nkeys, 0);
				index_rescan(st->scan, sk, st->nkeys, NULL, 0);
				found = index_getnext_slot(st->scan, ForwardScanDirection, st->heapslot);
			}

			/*
			 * A live row whose writer the main snapshot sees was there at the cutoff and is still the key's row: no
			 * version of the key since the cutoff, and main's history need not be probed (as the as-of read's live
			 * arm, read.c). Otherwise (no live row, a row written since, or an xid too old to tell) the history says.
			 */
			if (!found || gnomon_xmin_visible((GnSnapshot *) PG_DETOAST_DATUM(p->main_snap),
											  HeapTupleHeaderGetRawXmin(live_header(st->heapslot))) <= 0)
			{
				gnomon_branch_resolve_main(t, p, keys, &ks);
				/* (a version since the cutoff: the append below reads the key's version at the cutoff) */
				if (ks.main_vid < 0 && !found)
					return ExecClearTuple(out);
			}
		}
		if (ks.level_branch == 0 && ks.main_vid < 0 && st->probe_main)
		{
			ExecClearTuple(out);
			if (st->maxatt > 0)
				slot_getsomeattrs(st->heapslot, st->maxatt);
			for (i = 0; i < st->natts; i++)
			{
				if (st->colmap[i] == 0)
				{
					out->tts_values[i] = st->constvals[i];
					out->tts_isnull[i] = st->constnulls[i];
				}
				else
				{
					out->tts_values[i] = st->heapslot->tts_values[st->colmap[i] - 1];
					out->tts_isnull[i] = st->heapslot->tts_isnull[st->colmap[i] - 1];
				}
			}
			return ExecStoreVirtualTuple(out);
		}
		/* a key written on the chain or on main since the cutoff: the append, as without the node */
		if (st->child == NULL)
			start_child(st);
		st->from_child = true;
	}
	if (st->from_child)
	{
		TupleTableSlot *s = ExecProcNode(st->child);

		if (!TupIsNull(s))
			return s;
	}
	return ExecClearTuple(out);
}

static bool
recheck_branch(ScanState *ss, TupleTableSlot *slot)
{
	return true;
}

static TupleTableSlot *
exec_branch(CustomScanState *node)
{
	return ExecScan(&node->ss, next_branch, recheck_branch);
}

static void
rescan_branch(CustomScanState *node)
{
	BranchScanState *st = (BranchScanState *) node;

	st->done = false;
	st->from_child = false;
	if (st->child != NULL)
		ExecReScan(st->child);
	ExecScanReScan(&node->ss);
}

static void
end_branch(CustomScanState *node)
{
	BranchScanState *st = (BranchScanState *) node;

	if (st->child != NULL)
		ExecEndNode(st->child);
	if (st->heapslot != NULL)
		ExecDropSingleTupleTableSlot(st->heapslot);
	if (st->scan != NULL)
		index_endscan(st->scan);
	if (st->lp_ok)
		gnomon_leaf_probe_end(&st->lp);
	if (st->idx != NULL)
		index_close(st->idx, AccessShareLock);
	if (st->rel != NULL)
		table_close(st->rel, AccessShareLock);
}

static void
explain_branch(CustomScanState *node, List *ancestors, ExplainState *es)
{
	BranchScanState *st = (BranchScanState *) node;
	char	   *rel = get_rel_name(st->main_relid);
	char	   *ns = get_namespace_name(get_rel_namespace(st->main_relid));

	if (rel != NULL && ns != NULL)
		ExplainPropertyText("Main Row By Primary Key Of", quote_qualified_identifier(ns, rel), es);
	ExplainPropertyText("Else", "the append below", es);
}

void
gnomon_branch_scan_init(void)
{
	if (set_rel_pathlist_hook == branch_set_rel_pathlist)
		return;
	if (GetCustomScanMethods(BRANCH_SCAN_NAME, true) == NULL)
		RegisterCustomScanMethods(&branch_scan_methods);
	prev_set_rel_pathlist = set_rel_pathlist_hook;
	set_rel_pathlist_hook = branch_set_rel_pathlist;
}
