/*
 * feed_read.c: gnomon.feed_read in C. gnomon.install_feed_read (R__07_feed.sql) creates gnomon.feed_read as this
 * function when the module's page reader is there (gnomon.use_c_module(true)), else as PL/pgSQL; both run the
 * statements gnomon.feed_page_plan chooses, the same way and with the same settings, and return the same rows.
 *
 * What it saves over the PL/pgSQL one: a page that the plan gives the C page (main, one table, images) is written
 * straight into feed_read's own result, in feed_read's columns (gnomon_feed_page_run with a shape). The PL/pgSQL
 * feed_read planned a statement over gnomon.feed_page_c for every page and copied each of its rows again, from the
 * C page's result into its own (RETURN QUERY): 8% of a page of 10,000 events' instructions in tuplestore_puttupleslot,
 * and part of the 13% in heap_form_minimal_tuple (docs/performance.md). Every other page (a branch, no images, the
 * SQL page, a heartbeat) runs the plan's statement with its parameters into the result, as RETURN QUERY EXECUTE does.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/params.h"
#include "tcop/dest.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/tuplestore.h"

#include "feed_page.h"

PG_FUNCTION_INFO_V1(gnomon_feed_read);

/* gnomon.feed_page_plan's columns: q, then the statement's parameters $1..$19, then the C page's table and name */
#define PLAN_Q 1
#define PLAN_NPARAMS 19
#define PLAN_C_TABLE 21
#define PLAN_TABLE_NAME 22
/* gnomon.feed_page_c's arguments after the table's id ($1..$16 of the statement, in order; the fifth is images) */
#define PAGE_NARGS 18

/* A receiver that puts a page statement's rows into feed_read's result, once it has checked their columns */
typedef struct StoreReceiver
{
	DestReceiver pub;
	Tuplestorestate *ts;
	TupleDesc	want;
	const char *q;
} StoreReceiver;

static void
store_startup(DestReceiver *self, int operation, TupleDesc typeinfo)
{
	StoreReceiver *r = (StoreReceiver *) self;
	bool		same = typeinfo->natts == r->want->natts;

	for (int i = 0; same && i < typeinfo->natts; i++)
		same = TupleDescAttr(typeinfo, i)->atttypid == TupleDescAttr(r->want, i)->atttypid;
	if (!same)
		ereport(ERROR,
				(errcode(MAKE_SQLSTATE('G', 'N', '0', '3', '6')),
				 errmsg("gnomon.feed_read: a page statement of gnomon.feed_page_plan returns other columns than gnomon.feed_read"),
				 errdetail("The statement: %s", r->q),
				 errhint("The catalog and the C module come from different releases: reinstall gnomon-c from the catalog's release, or select gnomon.use_c_module(false);.")));
}

static bool
store_receive(TupleTableSlot *slot, DestReceiver *self)
{
	StoreReceiver *r = (StoreReceiver *) self;

	tuplestore_puttupleslot(r->ts, slot);
	return true;
}

static void
store_shutdown(DestReceiver *self)
{
}

static void
store_destroy(DestReceiver *self)
{
}

/* Runs a plan's statement (row r of the plan, its parameters in columns 2..20) into the result */
static void
run_statement(HeapTuple row, TupleDesc pdesc, Tuplestorestate *ts, TupleDesc want)
{
	char	   *q = SPI_getvalue(row, pdesc, PLAN_Q);
	Oid			types[PLAN_NPARAMS];
	ParamListInfo params = makeParamList(PLAN_NPARAMS);
	SPIPlanPtr	plan;
	SPIExecuteOptions options;
	StoreReceiver receiver;
	int			ret;

	for (int i = 0; i < PLAN_NPARAMS; i++)
	{
		ParamExternData *prm = &params->params[i];

		types[i] = SPI_gettypeid(pdesc, i + 2);
		prm->value = SPI_getbinval(row, pdesc, i + 2, &prm->isnull);
		prm->pflags = PARAM_FLAG_CONST;
		prm->ptype = types[i];
	}
	plan = SPI_prepare(q, PLAN_NPARAMS, types);
	if (plan == NULL)
		elog(ERROR, "gnomon.feed_read: preparing a page statement failed: %s", SPI_result_code_string(SPI_result));
	memset(&receiver, 0, sizeof(receiver));
	receiver.pub.receiveSlot = store_receive;
	receiver.pub.rStartup = store_startup;
	receiver.pub.rShutdown = store_shutdown;
	receiver.pub.rDestroy = store_destroy;
	receiver.pub.mydest = DestNone;
	receiver.ts = ts;
	receiver.want = want;
	receiver.q = q;
	memset(&options, 0, sizeof(options));
	options.params = params;
	options.read_only = false;
	options.dest = (DestReceiver *) &receiver;
	ret = SPI_execute_plan_extended(plan, &options);
	/* (a SELECT into a receiver of its own reports SPI_OK_UTILITY) */
	if (ret != SPI_OK_SELECT && ret != SPI_OK_UTILITY)
		elog(ERROR, "gnomon.feed_read: a page statement failed: %s", SPI_result_code_string(ret));
	SPI_freeplan(plan);
}

/* Reads a page the plan gives the C page (row r of the plan) straight into the result, in feed_read's columns */
static void
run_c_page(HeapTuple row, TupleDesc pdesc, Tuplestorestate *ts, TupleDesc want)
{
	LOCAL_FCINFO(page, PAGE_NARGS);
	FeedReadShape shape;
	bool		isnull;

	InitFunctionCallInfoData(*page, NULL, PAGE_NARGS, InvalidOid, NULL, NULL);
	/* gnomon.feed_page_c(table, $1, $2, $3, true, $4, ..., $16): $n is the plan's column n + 1 */
	page->args[0].value = SPI_getbinval(row, pdesc, PLAN_C_TABLE, &page->args[0].isnull);
	for (int a = 1; a <= 3; a++)
		page->args[a].value = SPI_getbinval(row, pdesc, a + 1, &page->args[a].isnull);
	page->args[4].value = BoolGetDatum(true);
	page->args[4].isnull = false;
	for (int a = 5; a < PAGE_NARGS; a++)
		page->args[a].value = SPI_getbinval(row, pdesc, a, &page->args[a].isnull);
	/* the statement's select list: $15 (the tick), $17 (its time), $19 (the branch), the table's name */
	shape.tick_id = SPI_getbinval(row, pdesc, 16, &shape.tick_id_null);
	shape.tick_at = SPI_getbinval(row, pdesc, 18, &shape.tick_at_null);
	shape.branch = SPI_getbinval(row, pdesc, 20, &shape.branch_null);
	shape.table_name = SPI_getbinval(row, pdesc, PLAN_TABLE_NAME, &isnull);
	if (isnull)
		elog(ERROR, "gnomon.feed_read: the plan gives a C page no table name");
	gnomon_feed_page_run(page, ts, want, &shape);
}

/*
 * Whether gnomon.feed_page_plan's columns are those this file reads by position: q, the statement's nineteen
 * parameters (the point's composite type not checked), the C page's table and its name
 */
static bool
plan_columns_expected(TupleDesc d)
{
	static const Oid expected[PLAN_TABLE_NAME] = {
		TEXTOID, PG_SNAPSHOTOID, PG_SNAPSHOTOID, PG_SNAPSHOTOID, XID8ARRAYOID, INT8ARRAYOID, XID8OID, XID8OID,
		INT8OID, INT8OID, INT8OID, INT8OID, XID8OID, XID8OID, BOOLOID, INT8OID, INT8OID, TIMESTAMPTZOID,
		InvalidOid, TEXTOID, INT4OID, TEXTOID
	};

	if (d->natts != PLAN_TABLE_NAME)
		return false;
	for (int i = 0; i < PLAN_TABLE_NAME; i++)
		if (OidIsValid(expected[i]) && TupleDescAttr(d, i)->atttypid != expected[i])
			return false;
	return true;
}

Datum
gnomon_feed_read(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	Oid			types[3] = {TEXTOID, INT4OID, TEXTOID};
	Datum		args[3];
	char		nulls[3];
	MemoryContext page_cxt;
	SPITupleTable *plan;
	uint64		npages;
	int			ret;

	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	if (rsinfo->setDesc->natts != 12)
		elog(ERROR, "gnomon.feed_read: its result has %d columns, not 12", rsinfo->setDesc->natts);
	for (int i = 0; i < 3; i++)
	{
		args[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
	}
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "gnomon.feed_read: SPI_connect failed");
	/* a history without statistics on g_xid: plan the pages without index scans (as the PL/pgSQL feed_read) */
	ret = SPI_execute_with_args("select gnomon.feed_history_planning(true) from gnomon.consumer k"
								" where k.consumer_name = $1 and gnomon.feed_history_unanalyzed(k.table_ids, k.branch_id is not null)",
								1, types, args, nulls, false, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "gnomon.feed_read: checking the history's statistics failed: %s", SPI_result_code_string(ret));
	ret = SPI_execute_with_args("select * from gnomon.feed_page_plan($1, $2, $3)", 3, types, args, nulls, false, 0);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "gnomon.feed_read: choosing the page failed: %s", SPI_result_code_string(ret));
	/* (the pages' statements below set SPI_tuptable and SPI_processed again) */
	plan = SPI_tuptable;
	npages = SPI_processed;
	if (!plan_columns_expected(plan->tupdesc))
		ereport(ERROR,
				(errcode(MAKE_SQLSTATE('G', 'N', '0', '7', '0')),
				 errmsg("gnomon.feed_read: gnomon.feed_page_plan returns other columns than this C module reads (%d, expected %d)",
						plan->tupdesc->natts, PLAN_TABLE_NAME),
				 errhint("Reinstall gnomon-c from the catalog's release, or select gnomon.use_c_module(false);.")));
	/* each page's own memory (its history rows, images, arrays) goes when its rows are in the result */
	page_cxt = AllocSetContextCreate(CurrentMemoryContext, "gnomon feed_read page", ALLOCSET_DEFAULT_SIZES);
	for (uint64 r = 0; r < npages; r++)
	{
		MemoryContext old = MemoryContextSwitchTo(page_cxt);
		bool		isnull;

		CHECK_FOR_INTERRUPTS();
		(void) SPI_getbinval(plan->vals[r], plan->tupdesc, PLAN_C_TABLE, &isnull);
		if (isnull)
			run_statement(plan->vals[r], plan->tupdesc, rsinfo->setResult, rsinfo->setDesc);
		else
			run_c_page(plan->vals[r], plan->tupdesc, rsinfo->setResult, rsinfo->setDesc);
		MemoryContextSwitchTo(old);
		MemoryContextReset(page_cxt);
	}
	SPI_finish();
	return (Datum) 0;
}
