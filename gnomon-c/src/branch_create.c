/*
 * branch_create.c: the optional C module's gnomon.branch_create, for the common case.
 *
 * With the module enabled (gnomon.use_c_module(true)), gnomon.branch_create is this function. A logged branch of main,
 * now, with a plain ASCII name, is created here: the name is checked (1 to 200 characters, not 'main', no control
 * character), and the catalog row — the id from gnomon.branch_seq, the cutoff pg_current_snapshot(), the creating xid,
 * the clock; no chain, snapshots or main snapshot, which a branch of main leaves null (catalog version 12: its point is
 * {id}, {null} and the cutoff, gnomon.branch_point) — is inserted with heap_insert, and
 * its entries with index_insert into the primary key and the name's unique index, both checked as an INSERT checks
 * them (UNIQUE_CHECK_YES: a name being inserted by a transaction in progress is waited for); the partial index on
 * parent_id takes no entry for a branch of main. When gnomon.branch has other indexes than these three (see
 * known_indexes), the entries go through ExecInsertIndexTuples instead. The name's unique index decides whether the name is
 * taken: its unique violation is re-thrown as GN051 (the transaction is aborted either way; the statement, as with
 * the SQL function, creates nothing), so there is no lookup before the insert. No executor, no PL/pgSQL, no
 * foreign-key trigger (a branch of main has no parent to check). Every other case — a parent branch, a coordinate,
 * a scratch branch, a name with non-ASCII or control characters, a role without INSERT on gnomon.branch, a trigger on
 * gnomon.branch other than the foreign key's — goes to gnomon.branch_create_sql, the PL/pgSQL function, which raises
 * the errors.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_index.h"
#include "commands/sequence.h"
#include "catalog/pg_trigger.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "parser/parse_func.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/syscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#define ERRCODE_GN_BRANCH_EXISTS MAKE_SQLSTATE('G', 'N', '0', '5', '1')

/* gnomon.branch, its name index and sequence, and the attribute numbers of its columns, cached per backend. */
static bool create_cache_valid = false;
static Oid	cat_oid,
			name_idx_oid,
			pkey_idx_oid,
			parent_idx_oid,
			seq_oid;

/*
 * Whether gnomon.branch has exactly its three B-tree indexes: the primary key on branch_id, the name's unique index
 * and the partial index on parent_id (parent_id is not null). Then a branch of main goes into the first two by
 * index_insert, and not into the third (its predicate is false for a null parent_id); otherwise (someone added an
 * index, or changed one) the row's entries go through ExecInsertIndexTuples, which handles any index.
 */
static bool known_indexes = false;
/* The name index's name, which a unique violation names (GN051 instead), kept with the cache: a rename invalidates it. */
static char name_idx_name[NAMEDATALEN];
static AttrNumber att_id,
			att_name,
			att_parent,
			att_cutoff,
			att_created_xid,
			att_created_at;

static void
invalidate_create_cache(Datum arg, Oid relid)
{
	if (!OidIsValid(relid) || relid == cat_oid || relid == name_idx_oid || relid == pkey_idx_oid
		|| relid == parent_idx_oid || relid == seq_oid)
		create_cache_valid = false;
}

/* Whether relation index_oid is a B-tree. */
static bool
btree_index(Oid index_oid)
{
	HeapTuple	t = SearchSysCache1(RELOID, ObjectIdGetDatum(index_oid));
	bool		ok;

	if (!HeapTupleIsValid(t))
		return false;
	ok = ((Form_pg_class) GETSTRUCT(t))->relam == BTREE_AM_OID;
	ReleaseSysCache(t);
	return ok;
}

/* One index of gnomon.branch as expected: a valid, immediate B-tree on the one column attnum, unique or not. */
static bool
index_is(Oid index_oid, AttrNumber attnum, bool unique, bool partial)
{
	HeapTuple	t = SearchSysCache1(INDEXRELID, ObjectIdGetDatum(index_oid));
	Form_pg_index ix;
	bool		ok;

	if (!HeapTupleIsValid(t))
		return false;
	ix = (Form_pg_index) GETSTRUCT(t);
	ok = ix->indrelid == cat_oid && ix->indnatts == 1 && ix->indnkeyatts == 1 && ix->indkey.values[0] == attnum
		&& ix->indisunique == unique && ix->indimmediate && ix->indisvalid && ix->indisready && ix->indislive
		&& heap_attisnull(t, Anum_pg_index_indexprs, NULL)
		&& heap_attisnull(t, Anum_pg_index_indpred, NULL) == !partial
		&& btree_index(index_oid);
	ReleaseSysCache(t);
	return ok;
}

/*
 * Whether gnomon.branch's indexes are the three of its migration and nothing else (see known_indexes). The partial
 * index's predicate is taken on trust from its name and shape (one column, parent_id, with a predicate): the catalog
 * migration creates it as "where parent_id is not null", and a branch of main is the only row written here.
 */
static bool
check_known_indexes(void)
{
	Relation	rel;
	List	   *indexes;
	bool		ok;

	if (!OidIsValid(pkey_idx_oid) || !OidIsValid(parent_idx_oid))
		return false;
	rel = table_open(cat_oid, AccessShareLock);
	indexes = RelationGetIndexList(rel);
	ok = list_length(indexes) == 3 && list_member_oid(indexes, pkey_idx_oid)
		&& list_member_oid(indexes, name_idx_oid) && list_member_oid(indexes, parent_idx_oid)
		&& index_is(pkey_idx_oid, att_id, true, false) && index_is(name_idx_oid, att_name, true, false)
		&& index_is(parent_idx_oid, att_parent, false, true);
	list_free(indexes);
	table_close(rel, AccessShareLock);
	return ok;
}

static void
load_create_cache(void)
{
	static bool registered = false;
	Oid			ns;

	if (create_cache_valid)
		return;
	if (!registered)
	{
		CacheRegisterRelcacheCallback(invalidate_create_cache, (Datum) 0);
		registered = true;
	}
	ns = get_namespace_oid("gnomon", false);
	cat_oid = get_relname_relid("branch", ns);
	name_idx_oid = get_relname_relid("branch_branch_name_key", ns);
	pkey_idx_oid = get_relname_relid("branch_pkey", ns);
	parent_idx_oid = get_relname_relid("branch_parent_idx", ns);
	seq_oid = get_relname_relid("branch_seq", ns);
	if (!OidIsValid(cat_oid) || !OidIsValid(name_idx_oid) || !OidIsValid(seq_oid))
		elog(ERROR, "gnomon: gnomon.branch, its name index or gnomon.branch_seq is missing");
	att_id = get_attnum(cat_oid, "branch_id");
	att_name = get_attnum(cat_oid, "branch_name");
	att_parent = get_attnum(cat_oid, "parent_id");
	att_cutoff = get_attnum(cat_oid, "cutoff");
	att_created_xid = get_attnum(cat_oid, "created_xid");
	att_created_at = get_attnum(cat_oid, "created_at");
	if (att_id <= 0 || att_name <= 0 || att_parent <= 0 || att_cutoff <= 0 || att_created_xid <= 0 || att_created_at <= 0)
		elog(ERROR, "gnomon: gnomon.branch lacks a column the C module writes");
	known_indexes = check_known_indexes();
	{
		char	   *n = get_rel_name(name_idx_oid);

		strlcpy(name_idx_name, n ? n : "", NAMEDATALEN);
	}
	create_cache_valid = true;
}

/* The PL/pgSQL implementation, for every case but the common one. */
static Datum
create_through_sql(FunctionCallInfo fcinfo)
{
	Oid			argtypes[4] = {TEXTOID, TEXTOID, TEXTOID, BOOLOID};
	Oid			fn = LookupFuncName(list_make2(makeString("gnomon"), makeString("branch_create_sql")), 4, argtypes, false);
	LOCAL_FCINFO(call, 4);
	Datum		result;

	InitFunctionCallInfoData(*call, NULL, 4, InvalidOid, NULL, NULL);
	for (int i = 0; i < 4; i++)
	{
		call->args[i].value = PG_GETARG_DATUM(i);
		call->args[i].isnull = PG_ARGISNULL(i);
	}
	{
		FmgrInfo	flinfo;

		fmgr_info(fn, &flinfo);
		call->flinfo = &flinfo;
		result = FunctionCallInvoke(call);
	}
	if (call->isnull)
		PG_RETURN_NULL();
	return result;
}

/* Whether the name is plain: 1 to 200 ASCII characters, none a control character, not 'main'. */
static bool
plain_name(text *name)
{
	const char *s = VARDATA_ANY(name);
	int			len = VARSIZE_ANY_EXHDR(name);

	if (len < 1 || len > 200 || (len == 4 && memcmp(s, "main", 4) == 0))
		return false;
	for (int i = 0; i < len; i++)
	{
		unsigned char ch = (unsigned char) s[i];

		if (ch < 0x20 || ch >= 0x7f)
			return false;
	}
	return true;
}

/* Whether only the foreign key's check trigger fires on an INSERT into the catalog. */
static bool
plain_triggers(Relation rel)
{
	TriggerDesc *td = rel->trigdesc;

	if (td == NULL)
		return true;
	for (int i = 0; i < td->numtriggers; i++)
	{
		Trigger    *t = &td->triggers[i];

		if (TRIGGER_FOR_INSERT(t->tgtype) && t->tgenabled != TRIGGER_DISABLED && t->tgfoid != F_RI_FKEY_CHECK_INS)
			return false;
	}
	return true;
}

/* The row's entries in the primary key and the name's index, when gnomon.branch has only its own indexes. */
static void
insert_known_index_entries(Relation rel, HeapTuple tup)
{
	Oid			oids[2] = {pkey_idx_oid, name_idx_oid};
	AttrNumber	atts[2] = {att_id, att_name};

	for (int i = 0; i < 2; i++)
	{
		Relation	idx = index_open(oids[i], RowExclusiveLock);
		bool		isnull;
		Datum		value = heap_getattr(tup, atts[i], RelationGetDescr(rel), &isnull);

		index_insert(idx, &value, &isnull, &tup->t_self, rel, UNIQUE_CHECK_YES, false, NULL);
		index_close(idx, NoLock);
	}
}

/* The row's entries in every index of gnomon.branch, the way an INSERT makes them. */
static void
insert_any_index_entries(Relation rel, HeapTuple tup, CommandId cid)
{
	EState	   *estate = CreateExecutorState();
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	TupleTableSlot *slot;

	estate->es_output_cid = cid;
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	ExecOpenIndices(rri, false);
	slot = MakeSingleTupleTableSlot(RelationGetDescr(rel), &TTSOpsHeapTuple);
	ExecStoreHeapTuple(tup, slot, false);
	if (rri->ri_NumIndices > 0)
		list_free(ExecInsertIndexTuples(rri, slot, estate, false, false, NULL, NIL));
	ExecDropSingleTupleTableSlot(slot);
	ExecCloseIndices(rri);
	FreeExecutorState(estate);
}

/*
 * The row and its index entries. A unique violation of the name's index is re-thrown as GN051, with the message and
 * hint of gnomon.branch_create_sql: the error is only re-labelled (copied, then thrown again with nothing done in
 * between), and the transaction aborts as it would have.
 */
static void
insert_row(Relation rel, HeapTuple tup, text *name)
{
	MemoryContext mcxt = CurrentMemoryContext;
	CommandId	cid = GetCurrentCommandId(true);

	heap_insert(rel, tup, cid, 0, NULL);
	PG_TRY();
	{
		if (known_indexes)
			insert_known_index_entries(rel, tup);
		else
			insert_any_index_entries(rel, tup, cid);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(mcxt);
		e = CopyErrorData();
		if (e->sqlerrcode != ERRCODE_UNIQUE_VIOLATION || e->constraint_name == NULL || name_idx_name[0] == '\0'
			|| strcmp(e->constraint_name, name_idx_name) != 0)
			PG_RE_THROW();
		FlushErrorState();
		e->sqlerrcode = ERRCODE_GN_BRANCH_EXISTS;
		e->message = psprintf("branch %s already exists", quote_literal_cstr(text_to_cstring(name)));
		e->detail = NULL;
		e->hint = pstrdup("Choose another name, or drop the existing branch first.");
		e->schema_name = NULL;
		e->table_name = NULL;
		e->constraint_name = NULL;
		ReThrowError(e);
	}
	PG_END_TRY();
}

PG_FUNCTION_INFO_V1(gnomon_branch_create);

/* gnomon.branch_create(branch_name text, parent text, at text, scratch boolean) returns integer (see the top). */
Datum
gnomon_branch_create(PG_FUNCTION_ARGS)
{
	text	   *name;
	Relation	rel;
	int32		id;
	Datum		cut,
				values[16];
	bool		nulls[16];
	TupleDesc	td;
	HeapTuple	tup;

	/* the common case only: a logged branch of main, now, with a plain name */
	if (PG_ARGISNULL(0) || PG_ARGISNULL(3) || PG_GETARG_BOOL(3) || !PG_ARGISNULL(2))
		return create_through_sql(fcinfo);
	if (!PG_ARGISNULL(1))
	{
		text	   *parent = PG_GETARG_TEXT_PP(1);

		if (VARSIZE_ANY_EXHDR(parent) != 4 || memcmp(VARDATA_ANY(parent), "main", 4) != 0)
			return create_through_sql(fcinfo);
	}
	name = PG_GETARG_TEXT_PP(0);
	if (!plain_name(name))
		return create_through_sql(fcinfo);
	load_create_cache();
	if (pg_class_aclcheck(cat_oid, GetUserId(), ACL_INSERT) != ACLCHECK_OK)
		return create_through_sql(fcinfo);

	rel = table_open(cat_oid, RowExclusiveLock);
	if (RelationGetForm(rel)->relkind != RELKIND_RELATION || rel->rd_rel->relam != HEAP_TABLE_AM_OID
		|| rel->rd_rel->relhasrules || rel->rd_rel->relrowsecurity
		|| !plain_triggers(rel) || RelationGetDescr(rel)->natts > 16)
	{
		table_close(rel, NoLock);
		return create_through_sql(fcinfo);
	}

	/* the row: as gnomon.branch_create_sql writes it for a branch of main, now */
	id = (int32) nextval_internal(seq_oid, true);
	cut = DirectFunctionCall1(pg_current_snapshot, (Datum) 0);
	td = RelationGetDescr(rel);
	for (int i = 0; i < td->natts; i++)
	{
		values[i] = (Datum) 0;
		nulls[i] = true;
	}
	values[att_id - 1] = Int32GetDatum(id);
	nulls[att_id - 1] = false;
	values[att_name - 1] = PointerGetDatum(name);
	nulls[att_name - 1] = false;
	values[att_cutoff - 1] = cut;
	nulls[att_cutoff - 1] = false;
	values[att_created_xid - 1] = DirectFunctionCall1(pg_current_xact_id, (Datum) 0);
	nulls[att_created_xid - 1] = false;
	values[att_created_at - 1] = TimestampTzGetDatum(GetCurrentTimestamp());
	nulls[att_created_at - 1] = false;
	/* parent_id, chain, snaps and main_snap stay null: a branch of main */
	tup = heap_form_tuple(td, values, nulls);

	insert_row(rel, tup, name);
	table_close(rel, NoLock);
	PG_RETURN_INT32(id);
}
