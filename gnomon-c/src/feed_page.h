/*
 * feed_page.h: the change feed's C page (feed_page.c), for gnomon.feed_read in C (feed_read.c).
 */
#ifndef GNOMON_FEED_PAGE_H
#define GNOMON_FEED_PAGE_H

#include "fmgr.h"
#include "access/tupdesc.h"
#include "utils/tuplestore.h"

/* The columns of gnomon.feed_read that are the same for every row of a page (its plan's $15, $17, $19, table) */
typedef struct FeedReadShape
{
	Datum		tick_id;
	bool		tick_id_null;
	Datum		tick_at;
	bool		tick_at_null;
	Datum		table_name;		/* text, the table as SQL (schema.table) */
	Datum		branch;
	bool		branch_null;
} FeedReadShape;

/*
 * The page of gnomon.feed_page_c's 18 arguments (in fcinfo), its rows put into ts (whose columns are ts_desc):
 * gnomon.feed_page_c's columns, or gnomon.feed_read's given a shape.
 */
extern void gnomon_feed_page_run(FunctionCallInfo fcinfo, Tuplestorestate *ts, TupleDesc ts_desc,
								 const FeedReadShape *shape);

#endif
