/*
 * read.h: what read.c lends the executor node of as_of_scan.c (the same steps as gnomon.as_of_key_c), and what
 * as_of_scan.c lends branch_scan.c (the arguments of a node, gnomon_args_*).
 */
#ifndef GNOMON_READ_H
#define GNOMON_READ_H

#include "postgres.h"

#include "nodes/primnodes.h"
#include "utils/relcache.h"
#include "utils/tuplestore.h"

typedef struct GnSnapshot GnSnapshot;

/* The checked snapshot of a coordinate (every error of gnomon.read_snapshot), from the per-backend cache */
extern GnSnapshot *gnomon_resolve_coordinate(text *coordinate, uint64 track_xid, int32 table_id);

/* Whether a live row's xmin is visible in the coordinate: 1, 0, or -1 (cannot be told from the xid: ask the history) */
extern int	gnomon_xmin_visible(GnSnapshot *s, TransactionId xmin);

/* The rows of one key as of the coordinate from the table's fallback gnomon_t.<base>_as_of_k, into ts */
extern void gnomon_as_of_fallback(Datum coordinate, Oid fallback, int nkeys, Datum *keys, Oid *keytypes,
								  Tuplestorestate *ts);

/* The equality procedures of an index's key columns (cached per backend) */
extern RegProcedure *gnomon_key_procs(Relation idx);

/* The value a qual pins column (varno, attno) to ("col = value" with the type's own equality); NULL if none */
extern Node *gnomon_pinned_by(Node *qual, Index varno, AttrNumber attno);

/* Whether an expression is the same at every row (no column, no sub-select or executor parameter, nothing volatile) */
extern bool gnomon_pinned_value(Node *node);

/* The values an executor node of the module reads per execution: constants and plain parameters read as they are
 * (compiling an expression per execution costs more than the probe's own set-up), anything else compiled */
typedef struct GnArgs
{
	int			n;
	struct ExprState **exprs;
	Const	  **consts;
	int		   *params;
} GnArgs;

extern void gnomon_args_init(GnArgs *a, List *exprs, struct PlanState *ps);
extern Datum gnomon_arg_value(GnArgs *a, int i, struct PlanState *ps, bool *isnull);

/* as_of_scan.c: registers the executor node and its planner hook (from _PG_init) */
extern void gnomon_as_of_scan_init(void);

#endif
