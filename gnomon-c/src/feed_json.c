/*
 * feed_json.c: a row's image as json text for the change feed's C page (feed_page.c), byte for byte as row_to_json
 * writes it: datum_to_json's categories (src/backend/utils/adt/json.c), with each column's category and output
 * function looked up once per page, where row_to_json looks them up again for every row.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/transam.h"
#include "catalog/pg_type.h"
#include "common/jsonapi.h"
#include "parser/parse_coerce.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "feed_json.h"

/*
 * A column's category and function, as json_categorize_type chooses them. Arrays and composites are written by
 * PostgreSQL's own array_to_json / row_to_json of the value (whose elements' categories it looks up per value).
 */
static void
categorize(Oid typoid, ImageCol *c)
{
	Oid			outfn = InvalidOid;
	bool		varlena;

	typoid = getBaseType(typoid);
	c->typoid = typoid;
	switch (typoid)
	{
		case BOOLOID:
			c->cat = JC_BOOL;
			break;
		case INT2OID:
		case INT4OID:
		case INT8OID:
		case FLOAT4OID:
		case FLOAT8OID:
		case NUMERICOID:
			c->cat = JC_NUMERIC;
			getTypeOutputInfo(typoid, &outfn, &varlena);
			break;
		case DATEOID:
			c->cat = JC_DATE;
			break;
		case TIMESTAMPOID:
			c->cat = JC_TIMESTAMP;
			break;
		case TIMESTAMPTZOID:
			c->cat = JC_TIMESTAMPTZ;
			break;
		case JSONOID:
		case JSONBOID:
			c->cat = JC_JSON;
			getTypeOutputInfo(typoid, &outfn, &varlena);
			break;
		default:
			if (OidIsValid(get_element_type(typoid)) || typoid == ANYARRAYOID ||
				typoid == ANYCOMPATIBLEARRAYOID || typoid == RECORDARRAYOID)
				c->cat = JC_ARRAY;
			else if (type_is_rowtype(typoid))
				c->cat = JC_COMPOSITE;
			else
			{
				Oid			castfunc = InvalidOid;

				c->cat = JC_OTHER;
				/* a type of the database's own with a cast to json is written by its cast, as to_json does */
				if (typoid >= FirstNormalObjectId &&
					find_coercion_pathway(JSONOID, typoid, COERCION_EXPLICIT, &castfunc) == COERCION_PATH_FUNC &&
					OidIsValid(castfunc))
				{
					c->cat = JC_CAST;
					outfn = castfunc;
				}
				else
					getTypeOutputInfo(typoid, &outfn, &varlena);
			}
			break;
	}
	if (OidIsValid(outfn))
		fmgr_info(outfn, &c->fn);
}

/* The attribute of a tuple descriptor named name, from the first'th on (1-based); 0 when none is */
int
gnomon_attno_named(TupleDesc desc, const char *name, int first)
{
	for (int i = first - 1; i < desc->natts; i++)
	{
		Form_pg_attribute a = TupleDescAttr(desc, i);

		if (!a->attisdropped && strcmp(NameStr(a->attname), name) == 0)
			return i + 1;
	}
	return 0;
}

/*
 * An image of names (in their order) over desc: each name's attribute from the first'th on, or (by_name false) the
 * first'th, first+1'th, ... in order.
 */
void
gnomon_image_init(Image *img, int n, char **names, TupleDesc desc, int first, bool by_name)
{
	img->ncols = n;
	img->cols = palloc0(sizeof(ImageCol) * n);
	for (int k = 0; k < n; k++)
	{
		ImageCol   *c = &img->cols[k];
		StringInfoData label;

		c->attno = by_name ? gnomon_attno_named(desc, names[k], first) : first + k;
		if (c->attno < 1 || c->attno > desc->natts)
			ereport(ERROR,
					(errcode(MAKE_SQLSTATE('G', 'N', '0', '3', '6')),
					 errmsg("gnomon.feed_page_c: the history of the table has no column \"%s\"", names[k]),
					 errhint("Regenerate the table's objects (gnomon.untrack and gnomon.track), or turn the C page "
							 "off: set gnomon.feed_page_c = off;")));
		initStringInfo(&label);
		if (k > 0)
			appendStringInfoChar(&label, ',');
		escape_json(&label, names[k]);
		appendStringInfoChar(&label, ':');
		c->label = label.data;
		c->label_len = label.len;
		categorize(TupleDescAttr(desc, c->attno - 1)->atttypid, c);
	}
}

/*
 * escape_json (src/backend/utils/adt/json.c) of len bytes, which hold no NUL (a text value's): the same quotes and
 * escapes, runs of plain bytes copied at once.
 */
static void
escape_json_bytes(StringInfo buf, const char *str, int len)
{
	int			run = 0;

	appendStringInfoCharMacro(buf, '"');
	for (int i = 0; i < len; i++)
	{
		unsigned char ch;

		/*
		 * eight bytes at a time while none of them needs an escape: no byte below 0x20, no '"' (0x22), no '\\'
		 * (0x5c); the classic test for a zero byte in a word, on the word, on it xor '"' and on it xor '\\' (it
		 * may flag a byte that needs none, 0x80 and up above a byte that does; the loop below then decides)
		 */
		while (i + 8 <= len)
		{
			uint64		w;

			memcpy(&w, str + i, 8);
#define GNOMON_HAS_LESS(x, n) (((x) - UINT64CONST(0x0101010101010101) * (n)) & ~(x) & UINT64CONST(0x8080808080808080))
#define GNOMON_HAS_ZERO(x) GNOMON_HAS_LESS(x, 1)
			if (GNOMON_HAS_LESS(w, 0x20) || GNOMON_HAS_ZERO(w ^ UINT64CONST(0x2222222222222222)) ||
				GNOMON_HAS_ZERO(w ^ UINT64CONST(0x5c5c5c5c5c5c5c5c)))
				break;
			i += 8;
		}
		if (i >= len)
			break;
		ch = (unsigned char) str[i];
		if (ch >= ' ' && ch != '"' && ch != '\\')
			continue;
		appendBinaryStringInfo(buf, str + run, i - run);
		run = i + 1;
		switch (ch)
		{
			case '\b':
				appendStringInfoString(buf, "\\b");
				break;
			case '\f':
				appendStringInfoString(buf, "\\f");
				break;
			case '\n':
				appendStringInfoString(buf, "\\n");
				break;
			case '\r':
				appendStringInfoString(buf, "\\r");
				break;
			case '\t':
				appendStringInfoString(buf, "\\t");
				break;
			case '"':
				appendStringInfoString(buf, "\\\"");
				break;
			case '\\':
				appendStringInfoString(buf, "\\\\");
				break;
			default:
				appendStringInfo(buf, "\\u%04x", (int) ch);
				break;
		}
	}
	appendBinaryStringInfo(buf, str + run, len - run);
	appendStringInfoCharMacro(buf, '"');
}

/* One value as datum_to_json writes it (not a key scalar) */
static void
render_value(StringInfo buf, ImageCol *c, Datum v, bool isnull)
{
	char	   *s;

	if (isnull)
	{
		appendStringInfoString(buf, "null");
		return;
	}
	switch (c->cat)
	{
		case JC_BOOL:
			appendStringInfoString(buf, DatumGetBool(v) ? "true" : "false");
			break;
		case JC_NUMERIC:
			/* integers are always valid json numbers: written in place, as their output functions write them */
			if (c->typoid == INT4OID || c->typoid == INT2OID || c->typoid == INT8OID)
			{
				enlargeStringInfo(buf, MAXINT8LEN + 1);
				buf->len += c->typoid == INT8OID ? pg_lltoa(DatumGetInt64(v), buf->data + buf->len)
					: pg_ltoa(c->typoid == INT4OID ? DatumGetInt32(v) : (int32) DatumGetInt16(v), buf->data + buf->len);
				break;
			}
			s = OutputFunctionCall(&c->fn, v);
			if (IsValidJsonNumber(s, strlen(s)))
				appendStringInfoString(buf, s);
			else
				escape_json(buf, s);
			break;
		case JC_DATE:
		case JC_TIMESTAMP:
		case JC_TIMESTAMPTZ:
			{
				char		dt[MAXDATELEN + 1];

				JsonEncodeDateTime(dt, v, c->typoid, NULL);
				appendStringInfoChar(buf, '"');
				appendStringInfoString(buf, dt);
				appendStringInfoChar(buf, '"');
			}
			break;
		case JC_JSON:
			appendStringInfoString(buf, OutputFunctionCall(&c->fn, v));
			break;
		case JC_ARRAY:
			{
				text	   *t = DatumGetTextPP(DirectFunctionCall1(array_to_json, v));

				appendBinaryStringInfo(buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
			}
			break;
		case JC_COMPOSITE:
			{
				text	   *t = DatumGetTextPP(DirectFunctionCall1(row_to_json, v));

				appendBinaryStringInfo(buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
			}
			break;
		case JC_CAST:
			{
				text	   *t = DatumGetTextPP(FunctionCall1(&c->fn, v));

				appendBinaryStringInfo(buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
			}
			break;
		case JC_OTHER:
			/*
			 * text, varchar and char(n) escaped from the value itself (their output functions, textout, varcharout and
			 * bpcharout, would copy it first, padding and all, and escape_json goes a byte at a time)
			 */
			if (c->typoid == TEXTOID || c->typoid == VARCHAROID || c->typoid == BPCHAROID)
			{
				text	   *t = DatumGetTextPP(v);

				escape_json_bytes(buf, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));
			}
			else
				escape_json(buf, OutputFunctionCall(&c->fn, v));
			break;
	}
}

/*
 * The image of a tuple as a json text in the caller's context; the work (detoasting, output functions) in scratch,
 * reset afterwards.
 */
text *
gnomon_render_image(Image *img, HeapTuple tup, TupleDesc desc, StringInfo buf, MemoryContext scratch)
{
	MemoryContext old = MemoryContextSwitchTo(scratch);
	text	   *result;

	resetStringInfo(buf);
	appendStringInfoChar(buf, '{');
	for (int k = 0; k < img->ncols; k++)
	{
		ImageCol   *c = &img->cols[k];
		bool		isnull;
		Datum		v = heap_getattr(tup, c->attno, desc, &isnull);

		appendBinaryStringInfo(buf, c->label, c->label_len);
		render_value(buf, c, v, isnull);
	}
	appendStringInfoChar(buf, '}');
	MemoryContextSwitchTo(old);
	result = cstring_to_text_with_len(buf->data, buf->len);
	MemoryContextReset(scratch);
	return result;
}
