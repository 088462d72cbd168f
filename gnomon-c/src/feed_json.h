/*
 * feed_json.h: what feed_json.c lends feed_page.c: a row's image as json text, written as row_to_json writes it.
 */
#ifndef GNOMON_FEED_JSON_H
#define GNOMON_FEED_JSON_H

#include "postgres.h"

#include "access/htup.h"
#include "access/tupdesc.h"
#include "fmgr.h"
#include "lib/stringinfo.h"

/* datum_to_json's type categories (src/backend/utils/adt/json.c, json_categorize_type) */
typedef enum JsonCat
{
	JC_BOOL,
	JC_NUMERIC,
	JC_DATE,
	JC_TIMESTAMP,
	JC_TIMESTAMPTZ,
	JC_JSON,
	JC_ARRAY,
	JC_COMPOSITE,
	JC_CAST,
	JC_OTHER
} JsonCat;

/* One column of an image: its label ("name": with the separator before it), where it is, how it is written */
typedef struct ImageCol
{
	char	   *label;
	int			label_len;
	int			attno;
	Oid			typoid;			/* the base type (json_categorize_type looks through domains) */
	JsonCat		cat;
	FmgrInfo	fn;				/* the output function, or the cast to json (JC_CAST) */
} ImageCol;

typedef struct Image
{
	int			ncols;
	ImageCol   *cols;
} Image;


/* The attribute of a tuple descriptor named name, from the first'th on (1-based); 0 when none is */
extern int	gnomon_attno_named(TupleDesc desc, const char *name, int first);

/*
 * An image of the columns names (in their order) over desc: each name's attribute from the first'th on, or (by_name
 * false) the first'th, first+1'th, ... in order; each column's category and output function looked up once
 */
extern void gnomon_image_init(Image *img, int n, char **names, TupleDesc desc, int first, bool by_name);

/* The image of a tuple as json text, in the caller's memory context (the work in scratch, reset afterwards) */
extern text *gnomon_render_image(Image *img, HeapTuple tup, TupleDesc desc, StringInfo buf, MemoryContext scratch);

#endif
