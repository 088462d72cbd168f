/*
 * gnomon.c: Gnomon's optional C write path.
 *
 * One trigger function, gnomon.write_c(), that the installer (gnomon.install_triggers) puts behind a tracked
 * table's statement-level triggers when the module is enabled (gnomon.use_c_module(true)). It writes exactly the
 * versions the generated PL/pgSQL trigger function (gnomon_t.<base>_write) writes, in the same order:
 *
 *   INSERT  one version per new row:  g_vid = nextval(gnomon.version_seq), g_xid = the top transaction's xid,
 *           g_op 'I', the key columns of the new row (the other columns NULL);
 *   DELETE  one version per old row: 'D' and the whole old image;
 *   UPDATE  one version per old row: 'U' and the whole old image.
 *
 * It forms each version's heap tuple from the transition table, routes it to the history partition whose xid
 * range holds the writing transaction's xid (the open partition reaches MAXVALUE; gnomon.roll_history closes it
 * at a future xid), and inserts it with table_tuple_insert and ExecInsertIndexTuples (the btree on the key and the
 * BRIN on g_xid), with the partition and its indexes open for the whole statement.
 *
 * The rare paths are not duplicated here: an UPDATE whose keys changed (found by comparing the old and new rows),
 * any UPDATE of a partitioned table (rows moved between partitions must be paired by key), TRUNCATE, and a history
 * whose columns do not match the table by name and type are handed to the table's PL/pgSQL trigger function,
 * called with the same trigger data (it is SECURITY DEFINER and runs its SQL through SPI).
 *
 * Only the trigger writes history: the function looks the table up in gnomon.tracked_table by the OID of the
 * relation that fired it, and refuses (GN071) to run as anything but one of that table's four Gnomon triggers.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/table.h"
#include "access/toast_internals.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/index.h"
#include "catalog/pg_type.h"
#include "commands/sequence.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "nodes/execnodes.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "partitioning/partbounds.h"
#include "partitioning/partdesc.h"
#include "storage/lmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/partcache.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"
#include "utils/xid8.h"

PG_MODULE_MAGIC;

/* This build's interface version. The catalog's gnomon.c_module_interface_version() says which one it expects (the one
 * definition on the SQL side): gnomon.use_c_module() compares them when it loads the library, and the first write of
 * each session here (a new session may load another build of the library). Bump it with the SQL side. */
#define GNOMON_C_VERSION 1

/* Gnomon's SQLSTATEs for this module (registered in R__01_errors.sql). */
#define ERRCODE_GN_C_MODULE_UNAVAILABLE MAKE_SQLSTATE('G', 'N', '0', '7', '0')
#define ERRCODE_GN_C_TRIGGER_MISUSE MAKE_SQLSTATE('G', 'N', '0', '7', '1')
#define ERRCODE_GN_C_TRIGGER_INTERNAL MAKE_SQLSTATE('G', 'N', '0', '7', '3')

/* Whether this session has compared GNOMON_C_VERSION with the catalog's expected version. */
static bool version_checked = false;

/* What the trigger needs to know about one tracked table, cached per backend and dropped on any relcache
 * invalidation of the table or its history (ALTER TABLE, re-created triggers, a partition roll). */
typedef struct WriteTarget
{
	Oid			relid;			/* hash key: the tracked table */
	bool		valid;
	int32		table_id;
	Oid			history_oid;	/* gnomon_t.<base>_h, partitioned by range on g_xid */
	Oid			fallback_oid;	/* gnomon_t.<base>_write(), the PL/pgSQL trigger function */
	Oid			seq_oid;		/* gnomon.version_seq */
	int			nkeys;
	NameData	keys[INDEX_MAX_KEYS];
	AttrNumber	keyattnums[INDEX_MAX_KEYS];	/* the key columns in the tracked table */

	/*
	 * The history partition the last statement wrote, kept between statements so that a write neither opens the
	 * history's parent (it only locks it) nor builds its indexes' descriptors again. part_valid: the partition's xid
	 * range (dropped with the parent's relcache entry, which a partition attached, detached or rolled invalidates).
	 * info_valid: what was built from the partition's descriptor, the column maps and its indexes' IndexInfo (dropped
	 * with the partition's or an index's relcache entry: a column added, an index created or dropped).
	 */
	bool		part_valid;
	Oid			part_oid;
	uint64		part_lo;		/* the partition holds the xids part_lo <= xid < part_hi */
	uint64		part_hi;
	bool		info_valid;
	uint64		info_generation;	/* counts the invalidations of the entry's partition information */
	Oid			info_oid;		/* the partition they were built from */
	MemoryContext info_cxt;		/* a child of CacheMemoryContext holding the maps and the IndexInfos */
	bool		maps_match;		/* build_map's answer: false hands every statement to the PL/pgSQL function */
	int		   *map_old;		/* build_map for 'U' and 'D' versions (the whole old image) */
	int		   *map_new;		/* build_map for 'I' versions (the key only) */
	int			nindexes;
	Oid		   *index_oids;
	IndexInfo **index_infos;
} WriteTarget;

static HTAB *targets = NULL;

/* A relation's schema-qualified, quoted name, for messages. */
static char *
qualified_name(Relation rel)
{
	return quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)), RelationGetRelationName(rel));
}

void		_PG_init(void);
void		gnomon_branch_init(void);	/* branch.c */
void		gnomon_as_of_scan_init(void);	/* as_of_scan.c */
void		gnomon_branch_scan_init(void);	/* branch_scan.c */

PG_FUNCTION_INFO_V1(gnomon_c_version);
PG_FUNCTION_INFO_V1(gnomon_write);

Datum
gnomon_c_version(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(GNOMON_C_VERSION);
}

static void
invalidate_targets(Datum arg, Oid relid)
{
	HASH_SEQ_STATUS status;
	WriteTarget *t;

	if (targets == NULL)
		return;
	hash_seq_init(&status, targets);
	while ((t = (WriteTarget *) hash_seq_search(&status)) != NULL)
	{
		bool		info_stale = false;

		if (!OidIsValid(relid) || t->relid == relid || t->history_oid == relid)
		{
			t->valid = false;
			t->part_valid = false;
			info_stale = true;
		}
		else if (t->info_oid == relid)
			info_stale = true;
		else
		{
			for (int i = 0; i < t->nindexes; i++)
				if (t->index_oids[i] == relid)
					info_stale = true;
		}
		if (info_stale)
		{
			t->info_valid = false;
			t->info_generation++;
		}
	}
}

void
_PG_init(void)
{
	HASHCTL		ctl;

	memset(&ctl, 0, sizeof(ctl));
	ctl.keysize = sizeof(Oid);
	ctl.entrysize = sizeof(WriteTarget);
	targets = hash_create("gnomon write targets", 64, &ctl, HASH_ELEM | HASH_BLOBS);
	CacheRegisterRelcacheCallback(invalidate_targets, (Datum) 0);
	gnomon_branch_init();
	gnomon_as_of_scan_init();
	gnomon_branch_scan_init();
}

/* Reads the catalog row of the tracked table that fired the trigger (through SPI, once per backend and table). */
static WriteTarget *
lookup_target(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	WriteTarget *t;
	bool		found;
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1];
	bool		isnull;
	int			ret;
	WriteTarget fresh;
	Datum		keysd;

	t = (WriteTarget *) hash_search(targets, &relid, HASH_FIND, &found);
	if (found && t->valid && version_checked)
		return t;

	if (!version_checked)
	{
		int32		expected;

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "gnomon: SPI_connect failed");
		ret = SPI_execute("select gnomon.c_module_interface_version()", true, 1);
		if (ret != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "gnomon: reading gnomon.c_module_interface_version() failed: %s", SPI_result_code_string(ret));
		expected = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
		SPI_finish();
		if (isnull || expected != GNOMON_C_VERSION)
			ereport(ERROR,
					(errcode(ERRCODE_GN_C_MODULE_UNAVAILABLE),
					 errmsg("the Gnomon C module this session loaded has interface version %d, the catalog expects %s",
							GNOMON_C_VERSION, isnull ? "none" : psprintf("%d", expected)),
					 errdetail("The library on the server was replaced by a build of another Gnomon release after "
							   "gnomon.use_c_module(true) loaded it."),
					 errhint("Install gnomon-c from the catalog's release on the server (cd gnomon-c && make && make install), "
							 "or run select gnomon.use_c_module(false); to write through the PL/pgSQL triggers.")));
		version_checked = true;
		if (found && t->valid)
			return t;
	}

	memset(&fresh, 0, sizeof(fresh));
	fresh.relid = relid;
	args[0] = ObjectIdGetDatum(relid);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "gnomon: SPI_connect failed");
	ret = SPI_execute_with_args(
		"select t.table_id,"
		" pg_catalog.to_regclass(pg_catalog.format('gnomon_t.%I', t.history_table))::pg_catalog.oid,"
		" pg_catalog.to_regprocedure(pg_catalog.format('gnomon_t.%I()', t.trigger_function))::pg_catalog.oid,"
		" pg_catalog.to_regclass('gnomon.version_seq')::pg_catalog.oid,"
		" t.key_columns"
		" from gnomon.tracked_table t where t.relid operator(pg_catalog.=) $1",
		1, argtypes, args, NULL, true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "gnomon: reading gnomon.tracked_table failed: %s", SPI_result_code_string(ret));
	if (SPI_processed != 1)
		ereport(ERROR,
				(errcode(ERRCODE_GN_C_TRIGGER_MISUSE),
				 errmsg("table %s is not tracked, but gnomon.write_c() fired on it", qualified_name(rel)),
				 errhint("gnomon.write_c() is the trigger gnomon.track() installs on tracked tables; "
						 "drop the trigger that calls it, or track the table.")));
	fresh.table_id = DatumGetInt32(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull));
	fresh.history_oid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &isnull));
	if (isnull)
		fresh.history_oid = InvalidOid;
	fresh.fallback_oid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 3, &isnull));
	if (isnull)
		fresh.fallback_oid = InvalidOid;
	fresh.seq_oid = DatumGetObjectId(SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 4, &isnull));
	if (isnull)
		fresh.seq_oid = InvalidOid;
	keysd = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 5, &isnull);
	if (!isnull)
	{
		ArrayType  *arr = DatumGetArrayTypeP(keysd);
		Datum	   *elems;
		bool	   *nulls;
		int			n;

		deconstruct_array(arr, NAMEOID, NAMEDATALEN, false, TYPALIGN_CHAR, &elems, &nulls, &n);
		if (n > INDEX_MAX_KEYS)
			elog(ERROR, "gnomon: table %s has %d key columns", qualified_name(rel), n);
		for (int i = 0; i < n; i++)
		{
			if (nulls[i])
				elog(ERROR, "gnomon: table %s has a NULL key column name", qualified_name(rel));
			namestrcpy(&fresh.keys[i], NameStr(*DatumGetName(elems[i])));
		}
		fresh.nkeys = n;
	}
	SPI_finish();

	if (!OidIsValid(fresh.history_oid) || !OidIsValid(fresh.fallback_oid) || !OidIsValid(fresh.seq_oid)
		|| fresh.nkeys == 0)
		ereport(ERROR,
				(errcode(ERRCODE_GN_C_TRIGGER_MISUSE),
				 errmsg("the generated objects of tracked table %s are missing (history, trigger function or gnomon.version_seq)",
						qualified_name(rel)),
				 errhint("They are only ever created by gnomon.track(); untrack and track the table again.")));

	for (int k = 0; k < fresh.nkeys; k++)
	{
		TupleDesc	desc = RelationGetDescr(rel);

		fresh.keyattnums[k] = InvalidAttrNumber;
		for (int j = 0; j < desc->natts; j++)
			if (!TupleDescAttr(desc, j)->attisdropped
				&& strcmp(NameStr(TupleDescAttr(desc, j)->attname), NameStr(fresh.keys[k])) == 0)
				fresh.keyattnums[k] = j + 1;
		if (fresh.keyattnums[k] == InvalidAttrNumber)
			ereport(ERROR,
					(errcode(ERRCODE_GN_C_TRIGGER_MISUSE),
					 errmsg("key column %s of tracked table %s does not exist",
							quote_identifier(NameStr(fresh.keys[k])), qualified_name(rel)),
					 errhint("Gnomon's DDL guard refuses renaming or dropping a key column; untrack the table and "
							 "track it again to version it with its new key.")));
	}

	/* SPI may have run invalidations: enter the entry only now (a stale entry's partition information goes) */
	t = (WriteTarget *) hash_search(targets, &relid, HASH_ENTER, &found);
	if (found && t->info_cxt != NULL)
		MemoryContextDelete(t->info_cxt);
	memcpy(t, &fresh, sizeof(fresh));
	t->valid = true;
	return t;
}

/* Hands the statement to the table's PL/pgSQL trigger function, with the same trigger data. */
static Datum
call_fallback(WriteTarget *t, FunctionCallInfo outer)
{
	FmgrInfo	flinfo;
	LOCAL_FCINFO(fc, 0);
	Datum		result;

	fmgr_info(t->fallback_oid, &flinfo);
	InitFunctionCallInfoData(*fc, &flinfo, 0, InvalidOid, outer->context, NULL);
	result = FunctionCallInvoke(fc);
	if (fc->isnull)
		return (Datum) 0;
	return result;
}

/*
 * Whether an UPDATE changed a key: the old and new transition tables hold the rows of an UPDATE of a plain table in
 * the same order (PostgreSQL adds each row's old and new image together), so they are compared pairwise, byte for
 * byte. A key that changed only in its bytes (numeric 1.0 to 1.00) counts as changed: the PL/pgSQL function then
 * pairs the rows by key equality and writes the same 'U' versions. With the C module, tables have no key-change
 * row trigger (its WHEN clause, prepared for every statement, cost more than this comparison).
 */
static bool
keys_changed(WriteTarget *t, Relation rel, Tuplestorestate *olds, Tuplestorestate *news)
{
	TupleDesc	sd = RelationGetDescr(rel);
	TupleTableSlot *o;
	TupleTableSlot *n;
	int			optr;
	int			nptr;
	bool		changed = false;
	AttrNumber	maxatt = 0;

	if (tuplestore_tuple_count(olds) != tuplestore_tuple_count(news))
		return true;
	for (int k = 0; k < t->nkeys; k++)
		maxatt = Max(maxatt, t->keyattnums[k]);
	o = MakeSingleTupleTableSlot(sd, &TTSOpsMinimalTuple);
	n = MakeSingleTupleTableSlot(sd, &TTSOpsMinimalTuple);
	optr = tuplestore_alloc_read_pointer(olds, EXEC_FLAG_REWIND);
	nptr = tuplestore_alloc_read_pointer(news, EXEC_FLAG_REWIND);
	tuplestore_select_read_pointer(olds, optr);
	tuplestore_rescan(olds);
	tuplestore_select_read_pointer(news, nptr);
	tuplestore_rescan(news);
	for (;;)
	{
		bool		has_old;
		bool		has_new;

		tuplestore_select_read_pointer(olds, optr);
		has_old = tuplestore_gettupleslot(olds, true, false, o);
		tuplestore_select_read_pointer(news, nptr);
		has_new = tuplestore_gettupleslot(news, true, false, n);
		if (!has_old || !has_new)
		{
			changed = has_old != has_new;
			break;
		}
		slot_getsomeattrs(o, maxatt);
		slot_getsomeattrs(n, maxatt);
		for (int k = 0; k < t->nkeys && !changed; k++)
		{
			int			a = t->keyattnums[k] - 1;
			Form_pg_attribute att = TupleDescAttr(sd, a);

			if (o->tts_isnull[a] != n->tts_isnull[a])
				changed = true;
			else if (!o->tts_isnull[a]
					 && !datumIsEqual(o->tts_values[a], n->tts_values[a], att->attbyval, att->attlen))
				changed = true;
		}
		if (changed)
			break;
	}
	tuplestore_select_read_pointer(olds, 0);
	tuplestore_select_read_pointer(news, 0);
	ExecDropSingleTupleTableSlot(o);
	ExecDropSingleTupleTableSlot(n);
	return changed;
}

/* Flags the statement for the PL/pgSQL function, as its key-change row trigger would: pair old and new by key.
 * The setting's name is gnomon.key_change_setting(table_id) followed by the trigger depth (R__03_installer.sql): keep
 * this in step with it. */
static void
flag_key_change(WriteTarget *t)
{
	LOCAL_FCINFO(fc, 0);
	int			depth;
	char		name[64];

	InitFunctionCallInfoData(*fc, NULL, 0, InvalidOid, NULL, NULL);
	depth = DatumGetInt32(pg_trigger_depth(fc));
	snprintf(name, sizeof(name), "gnomon.key_change_%d_%d", t->table_id, depth);
	(void) set_config_option(name, "y", superuser() ? PGC_SUSET : PGC_USERSET, PGC_S_SESSION, GUC_ACTION_LOCAL,
							 true, 0, false);
}

#define MAP_NULL 0
#define MAP_VID (-1)
#define MAP_XID (-2)
#define MAP_OP (-3)

/*
 * For each attribute of the history partition, where its value comes from: a source attribute number (by name),
 * or MAP_NULL / MAP_VID / MAP_XID / MAP_OP. Returns false when the columns do not match by name and type (then the
 * PL/pgSQL function, with its casts and its errors, writes the statement).
 */
static bool
build_map(WriteTarget *t, TupleDesc hd, TupleDesc sd, char op, int *map)
{
	int			matched = 0;
	int			source_cols = 0;

	for (int j = 0; j < sd->natts; j++)
		if (!TupleDescAttr(sd, j)->attisdropped)
			source_cols++;

	for (int i = 0; i < hd->natts; i++)
	{
		Form_pg_attribute ha = TupleDescAttr(hd, i);
		const char *name = NameStr(ha->attname);

		map[i] = MAP_NULL;
		if (ha->attisdropped)
			continue;
		if (strcmp(name, "g_vid") == 0)
		{
			if (ha->atttypid != INT8OID)
				return false;
			map[i] = MAP_VID;
			continue;
		}
		if (strcmp(name, "g_xid") == 0)
		{
			if (ha->atttypid != XID8OID)
				return false;
			map[i] = MAP_XID;
			continue;
		}
		if (strcmp(name, "g_op") == 0)
		{
			if (ha->atttypid != CHAROID)
				return false;
			map[i] = MAP_OP;
			continue;
		}
		for (int j = 0; j < sd->natts; j++)
		{
			Form_pg_attribute sa = TupleDescAttr(sd, j);

			if (sa->attisdropped || strcmp(NameStr(sa->attname), name) != 0)
				continue;
			/* the history stores a domain column as its base type: the same bytes */
			if (sa->atttypid != ha->atttypid && getBaseType(sa->atttypid) != ha->atttypid)
				return false;
			matched++;
			if (op == 'I')
			{
				bool		is_key = false;

				for (int k = 0; k < t->nkeys; k++)
					if (strcmp(NameStr(t->keys[k]), name) == 0)
						is_key = true;
				if (!is_key)
					break;
			}
			map[i] = j + 1;
			break;
		}
	}
	/* every column of the table has its column in the history */
	return matched == source_cols;
}

/*
 * The history partition that holds versions written by a transaction with this xid, and the xids it holds
 * (*lo <= xid < *hi, MINVALUE and MAXVALUE as 0 and PG_UINT64_MAX; an empty range for the default partition, whose
 * xids no range says).
 */
static Oid
history_partition(Relation parent, Datum xid, uint64 *lo, uint64 *hi)
{
	PartitionKey key = RelationGetPartitionKey(parent);
	PartitionDesc pd;
	PartitionBoundInfo bi;
	bool		is_equal;
	int			offset;
	int			index;

	if (key == NULL || key->strategy != PARTITION_STRATEGY_RANGE || key->partnatts != 1
		|| key->parttypid[0] != XID8OID)
		ereport(ERROR,
				(errcode(ERRCODE_GN_C_TRIGGER_MISUSE),
				 errmsg("history table %s is not partitioned by range on g_xid", qualified_name(parent)),
				 errhint("Only gnomon.track() creates history tables; untrack and track the table again.")));
	pd = RelationGetPartitionDesc(parent, true);
	bi = pd->boundinfo;
	index = -1;
	*lo = 0;
	*hi = 0;
	if (pd->nparts > 0 && bi != NULL)
	{
		offset = partition_range_datum_bsearch(key->partsupfunc, key->partcollation, bi, 1, &xid, &is_equal);
		index = bi->indexes[offset + 1];
		if (index >= 0)
		{
			*lo = offset < 0 || bi->kind[offset][0] != PARTITION_RANGE_DATUM_VALUE
				? 0 : DatumGetUInt64(bi->datums[offset][0]);
			*hi = offset + 1 >= bi->ndatums || bi->kind[offset + 1][0] != PARTITION_RANGE_DATUM_VALUE
				? PG_UINT64_MAX : DatumGetUInt64(bi->datums[offset + 1][0]);
		}
		else
			index = bi->default_index;
	}
	if (index < 0)
		ereport(ERROR,
				(errcode(ERRCODE_GN_C_TRIGGER_INTERNAL),
				 errmsg("no partition of history table %s holds xid %llu",
						qualified_name(parent), (unsigned long long) DatumGetUInt64(xid)),
				 errdetail("The open history partition reaches MAXVALUE unless it was detached by hand."),
				 errhint("Attach a partition for values from (the last bound) to (maxvalue), for example "
						 "create table gnomon_t.NAME partition of %s for values from (...) to (maxvalue);",
						 qualified_name(parent))));
	return pd->oids[index];
}

/*
 * Opens (RowExclusiveLock) the history partition that holds this transaction's versions: the kept one when its xid
 * range holds the xid, with only a lock on the history's parent, else the one the parent's partition bounds give,
 * which is kept for the next statements. Taking the parent's lock runs the invalidations that a roll, an attach or
 * a detach (each invalidates the parent) sent, and those drop the kept range: a transaction never writes on a stale
 * one. (The range changes only under ACCESS EXCLUSIVE on the parent, which waits for every writer.)
 */
static Relation
open_partition(WriteTarget *t, Datum xid)
{
	Relation	parent;
	Relation	part;
	Oid			oid;
	uint64		x = DatumGetUInt64(xid);
	uint64		lo;
	uint64		hi;

	if (t->part_valid && x >= t->part_lo && x < t->part_hi)
	{
		/*
		 * The parent's lock first, as every writer and reader of the history takes it, and as gnomon.roll_history
		 * does before the partition's: a transaction holding the partition alone could later wait for the parent
		 * (a read of the history, the PL/pgSQL function's INSERT) behind a roll that waits for the partition. Only the
		 * lock: the parent's relcache entry and partition descriptor are not needed. A new lock runs the pending
		 * invalidations, and one of the parent (a roll, an attach, a detach committed) drops the kept range.
		 */
		LockRelationOid(t->history_oid, RowExclusiveLock);
		if (t->part_valid)
		{
			part = try_table_open(t->part_oid, RowExclusiveLock);
			if (part != NULL && t->part_valid)
				return part;
			if (part != NULL)
				table_close(part, NoLock);
		}
	}
	parent = table_open(t->history_oid, RowExclusiveLock);
	oid = history_partition(parent, xid, &lo, &hi);
	/* kept before the partition's lock is taken: invalidations it runs drop it again */
	t->part_oid = oid;
	t->part_lo = lo;
	t->part_hi = hi;
	t->part_valid = t->valid && lo < hi;
	part = table_open(oid, RowExclusiveLock);
	table_close(parent, NoLock);
	if (part->rd_rel->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_GN_C_TRIGGER_MISUSE),
				 errmsg("history partition %s is not a plain table", qualified_name(part)),
				 errhint("Gnomon's history partitions are plain tables created by gnomon.roll_history(); "
						 "replace this one by a plain table.")));
	return part;
}

/*
 * Builds, once per partition (and again after its or an index's relcache entry is invalidated), what writing into it
 * needs from its descriptor: the column maps of both kinds of version and the IndexInfo of each index (the executor's
 * ExecOpenIndices built them again for every statement).
 */
static void
ensure_partition_info(WriteTarget *t, Relation part, TupleDesc sd)
{
	TupleDesc	hd = RelationGetDescr(part);
	MemoryContext old;
	List	   *indexes;
	ListCell   *lc;
	int			i = 0;
	uint64		generation;

	if (t->info_valid && t->info_oid == RelationGetRelid(part))
		return;
	/* invalid until complete: an error while the indexes are opened (a lock timeout, a cancel) leaves it so */
	t->info_valid = false;
	t->nindexes = 0;
	t->index_oids = NULL;
	t->index_infos = NULL;
	if (t->info_cxt == NULL)
		t->info_cxt = AllocSetContextCreate(CacheMemoryContext, "gnomon write target", ALLOCSET_SMALL_SIZES);
	else
		MemoryContextReset(t->info_cxt);
	t->info_oid = RelationGetRelid(part);
	generation = t->info_generation;
	old = MemoryContextSwitchTo(t->info_cxt);
	t->map_old = (int *) palloc(sizeof(int) * hd->natts);
	t->map_new = (int *) palloc(sizeof(int) * hd->natts);
	t->maps_match = build_map(t, hd, sd, 'U', t->map_old) && build_map(t, hd, sd, 'I', t->map_new);
	indexes = RelationGetIndexList(part);
	t->index_oids = (Oid *) palloc0(sizeof(Oid) * Max(list_length(indexes), 1));
	t->index_infos = (IndexInfo **) palloc0(sizeof(IndexInfo *) * Max(list_length(indexes), 1));
	foreach(lc, indexes)
	{
		Relation	ind = index_open(lfirst_oid(lc), RowExclusiveLock);

		t->index_oids[i] = lfirst_oid(lc);
		t->index_infos[i] = BuildIndexInfo(ind);
		index_close(ind, NoLock);
		t->nindexes = ++i;
	}
	MemoryContextSwitchTo(old);
	/* this statement uses it either way; it is kept for the next ones unless an invalidation came meanwhile */
	t->info_valid = t->info_generation == generation;
}

/*
 * A version's values of COMPRESS_MIN bytes or more are stored compressed inline, as PostgreSQL's toaster would store
 * them in a row too large for its page: history is written once and read rarely, and a row's image is mostly values
 * that did not change. A value is compressed when its history column's storage is EXTENDED or MAIN (the default for
 * text, bpchar, jsonb, bytea, numeric...; `alter table ... alter column ... set storage external` turns it off), with
 * the column's compression method (`set compression lz4`) or default_toast_compression, and kept only when it saves
 * more than two bytes (toast_compress_datum's rule). Readers see the same values: PostgreSQL decompresses inline
 * compressed values wherever they are read. Values already compressed or stored out of line are left as they are.
 */
#define COMPRESS_MIN 32

static Datum
compress_value(Form_pg_attribute att, Datum value)
{
	struct varlena *v;
	Datum		compressed;

	if (att->attlen != -1 || (att->attstorage != TYPSTORAGE_EXTENDED && att->attstorage != TYPSTORAGE_MAIN))
		return value;
	v = (struct varlena *) DatumGetPointer(value);
	if (VARATT_IS_EXTERNAL(v) || VARATT_IS_COMPRESSED(v))
		return value;
	if (VARSIZE_ANY_EXHDR(v) < COMPRESS_MIN)
		return value;
	compressed = toast_compress_datum(value, att->attcompression);
	return DatumGetPointer(compressed) != NULL ? compressed : value;
}

/* Versions a statement of many rows inserts at a time (the slots and tuples of one batch are kept until it is flushed) */
#define WRITE_BATCH 1000

/*
 * Inserts a batch of versions into the history partition with one table_multi_insert (heap_multi_insert fills a page
 * per lock and WAL record), then their index entries, each at its tuple's new TID; the slots are cleared.
 */
static void
flush_batch(Relation part, ResultRelInfo *rri, EState *estate, TupleTableSlot **batch, int n, CommandId cid,
			int nindexes)
{
	MemoryContext old;

	table_multi_insert(part, batch, n, cid, 0, NULL);
	old = MemoryContextSwitchTo(GetPerTupleMemoryContext(estate));
	for (int i = 0; i < n; i++)
	{
		if (nindexes > 0)
			list_free(ExecInsertIndexTuples(rri, batch[i], estate, false, false, NULL, NIL));
		ResetPerTupleExprContext(estate);
		ExecClearTuple(batch[i]);
	}
	MemoryContextSwitchTo(old);
}

/* Writes one version per row of a transition table into the history, with the operation op. */
static bool
write_versions(WriteTarget *t, Relation rel, Tuplestorestate *rows, char op)
{
	Relation	part;
	TupleDesc	hd;
	TupleDesc	sd = RelationGetDescr(rel);
	Datum		xid;
	int		   *map;
	int			nindexes;
	EState	   *estate;
	ResultRelInfo *rri;
	TupleTableSlot *src;
	TupleTableSlot *dst;
	Datum	   *values;
	bool	   *nulls;
	CommandId	cid;
	int			readptr;
	int64		nrows = tuplestore_tuple_count(rows);
	/* a statement of many rows inserts its versions a batch at a time (table_multi_insert, as COPY does): one heap
	 * page lock and one WAL record per page filled instead of per version */
	int			batch_max = nrows > 1 ? (int) Min(nrows, WRITE_BATCH) : 0;
	TupleTableSlot **batch = NULL;
	int			nbatch = 0;
	MemoryContext batch_cxt = NULL;

	if (nrows == 0)
		return true;

	xid = FullTransactionIdGetDatum(GetTopFullTransactionId());
	part = open_partition(t, xid);
	ensure_partition_info(t, part, sd);
	if (!t->maps_match)
	{
		table_close(part, NoLock);
		return false;
	}
	hd = RelationGetDescr(part);
	map = op == 'I' ? t->map_new : t->map_old;

	estate = CreateExecutorState();
	cid = GetCurrentCommandId(true);
	estate->es_output_cid = cid;
	rri = makeNode(ResultRelInfo);
	InitResultRelInfo(rri, part, 1, NULL, 0);
	/* the indexes, as ExecOpenIndices would open them, with the kept IndexInfos: their per-statement state (an access
	 * method's cache, expression states) is reset and lives in this statement's memory */
	nindexes = t->nindexes;
	if (nindexes > 0)
	{
		rri->ri_NumIndices = nindexes;
		rri->ri_IndexRelationDescs = (RelationPtr) palloc(sizeof(Relation) * nindexes);
		rri->ri_IndexRelationInfo = (IndexInfo **) palloc(sizeof(IndexInfo *) * nindexes);
		for (int i = 0; i < nindexes; i++)
		{
			IndexInfo  *ii = t->index_infos[i];

			rri->ri_IndexRelationDescs[i] = index_open(t->index_oids[i], RowExclusiveLock);
			ii->ii_Context = CurrentMemoryContext;
			ii->ii_AmCache = NULL;
			ii->ii_ExpressionsState = NIL;
			ii->ii_PredicateState = NULL;
			rri->ri_IndexRelationInfo[i] = ii;
		}
	}
	src = MakeSingleTupleTableSlot(sd, &TTSOpsMinimalTuple);
	dst = MakeSingleTupleTableSlot(hd, &TTSOpsHeapTuple);
	values = (Datum *) palloc(sizeof(Datum) * hd->natts);
	nulls = (bool *) palloc(sizeof(bool) * hd->natts);
	if (batch_max > 0)
	{
		batch = (TupleTableSlot **) palloc(sizeof(TupleTableSlot *) * batch_max);
		for (int i = 0; i < batch_max; i++)
			batch[i] = MakeSingleTupleTableSlot(hd, &TTSOpsHeapTuple);
		/* the batch's tuples live until it is flushed */
		batch_cxt = AllocSetContextCreate(CurrentMemoryContext, "gnomon write batch", ALLOCSET_DEFAULT_SIZES);
	}

	/* a read pointer of our own: other triggers of the statement may read the same transition table */
	readptr = tuplestore_alloc_read_pointer(rows, EXEC_FLAG_REWIND);
	tuplestore_select_read_pointer(rows, readptr);
	tuplestore_rescan(rows);
	while (tuplestore_gettupleslot(rows, true, false, src))
	{
		MemoryContext old;
		HeapTuple	tup;

		CHECK_FOR_INTERRUPTS();
		old = MemoryContextSwitchTo(GetPerTupleMemoryContext(estate));
		slot_getallattrs(src);
		for (int i = 0; i < hd->natts; i++)
		{
			switch (map[i])
			{
				case MAP_NULL:
					values[i] = (Datum) 0;
					nulls[i] = true;
					break;
				case MAP_VID:
					values[i] = Int64GetDatum(nextval_internal(t->seq_oid, false));
					nulls[i] = false;
					break;
				case MAP_XID:
					values[i] = xid;
					nulls[i] = false;
					break;
				case MAP_OP:
					values[i] = CharGetDatum(op);
					nulls[i] = false;
					break;
				default:
					values[i] = src->tts_values[map[i] - 1];
					nulls[i] = src->tts_isnull[map[i] - 1];
					if (!nulls[i])
						values[i] = compress_value(TupleDescAttr(hd, i), values[i]);
					break;
			}
		}
		if (batch != NULL)
		{
			MemoryContextSwitchTo(batch_cxt);
			tup = heap_form_tuple(hd, values, nulls);
			MemoryContextSwitchTo(old);
			/* the slot owns it (freed when cleared): heap_multi_insert would otherwise copy it to materialise it */
			ExecStoreHeapTuple(tup, batch[nbatch++], true);
			ResetPerTupleExprContext(estate);
			if (nbatch == batch_max)
			{
				flush_batch(part, rri, estate, batch, nbatch, cid, nindexes);
				nbatch = 0;
				MemoryContextReset(batch_cxt);
			}
			continue;
		}
		tup = heap_form_tuple(hd, values, nulls);
		ExecStoreHeapTuple(tup, dst, false);
		table_tuple_insert(part, dst, cid, 0, NULL);
		if (nindexes > 0)
			list_free(ExecInsertIndexTuples(rri, dst, estate, false, false, NULL, NIL));
		ExecClearTuple(dst);
		MemoryContextSwitchTo(old);
		ResetPerTupleExprContext(estate);
	}
	if (nbatch > 0)
		flush_batch(part, rri, estate, batch, nbatch, cid, nindexes);
	if (batch != NULL)
	{
		for (int i = 0; i < batch_max; i++)
			ExecDropSingleTupleTableSlot(batch[i]);
		MemoryContextDelete(batch_cxt);
	}
	tuplestore_select_read_pointer(rows, 0);

	ExecDropSingleTupleTableSlot(src);
	ExecDropSingleTupleTableSlot(dst);
	/* the locks stay until the transaction ends, as the partition's does (the IndexInfos' per-statement state, in
	 * this statement's memory, is reset before their next use) */
	for (int i = 0; i < nindexes; i++)
		index_close(rri->ri_IndexRelationDescs[i], NoLock);
	FreeExecutorState(estate);
	table_close(part, NoLock);
	pfree(values);
	pfree(nulls);
	return true;
}

Datum
gnomon_write(PG_FUNCTION_ARGS)
{
	TriggerData *td;
	WriteTarget *t;
	const char *tgname;
	const char *expected;
	Tuplestorestate *rows;
	char		op;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_GN_C_TRIGGER_MISUSE),
				 errmsg("gnomon.write_c() was called as a function, not as a trigger"),
				 errhint("It is the trigger gnomon.track() installs on tracked tables; it is never called directly.")));
	td = (TriggerData *) fcinfo->context;
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
		expected = "gnomon_insert";
	else if (TRIGGER_FIRED_BY_UPDATE(td->tg_event))
		expected = "gnomon_update";
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
		expected = "gnomon_delete";
	else if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		expected = "gnomon_truncate";
	else
		expected = NULL;
	tgname = td->tg_trigger != NULL ? td->tg_trigger->tgname : NULL;
	/* as gnomon.install_triggers creates them: AFTER ... FOR EACH STATEMENT with the transition tables gnomon_old /
	 * gnomon_new, and BEFORE TRUNCATE (so the history holds the rows before they go) */
	if (expected == NULL || tgname == NULL || strcmp(tgname, expected) != 0
		|| !TRIGGER_FIRED_FOR_STATEMENT(td->tg_event)
		|| (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event) ? !TRIGGER_FIRED_BEFORE(td->tg_event) : !TRIGGER_FIRED_AFTER(td->tg_event))
		|| ((TRIGGER_FIRED_BY_UPDATE(td->tg_event) || TRIGGER_FIRED_BY_DELETE(td->tg_event))
			&& (td->tg_trigger->tgoldtable == NULL || strcmp(td->tg_trigger->tgoldtable, "gnomon_old") != 0))
		|| ((TRIGGER_FIRED_BY_UPDATE(td->tg_event) || TRIGGER_FIRED_BY_INSERT(td->tg_event))
			&& (td->tg_trigger->tgnewtable == NULL || strcmp(td->tg_trigger->tgnewtable, "gnomon_new") != 0)))
		ereport(ERROR,
				(errcode(ERRCODE_GN_C_TRIGGER_MISUSE),
				 errmsg("gnomon.write_c() fired as trigger %s on %s, which is not one of Gnomon's write triggers",
						tgname ? quote_identifier(tgname) : "(unnamed)", qualified_name(td->tg_relation)),
				 errdetail("Gnomon's write triggers are gnomon_insert, gnomon_update and gnomon_delete (AFTER, FOR EACH "
						   "STATEMENT, with transition tables gnomon_old / gnomon_new) and gnomon_truncate (BEFORE)."),
				 errhint("Drop the trigger, and let gnomon.use_c_module(true) re-create Gnomon's own.")));

	t = lookup_target(td->tg_relation);

	if (TRIGGER_FIRED_BY_TRUNCATE(td->tg_event))
		return call_fallback(t, fcinfo);
	if (TRIGGER_FIRED_BY_INSERT(td->tg_event))
	{
		rows = td->tg_newtable;
		op = 'I';
	}
	else if (TRIGGER_FIRED_BY_DELETE(td->tg_event))
	{
		rows = td->tg_oldtable;
		op = 'D';
	}
	else
	{
		/* rows moved between partitions, or keys changed: old and new rows are paired by key there */
		if (td->tg_relation->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
			return call_fallback(t, fcinfo);
		if (td->tg_oldtable == NULL || td->tg_newtable == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_GN_C_TRIGGER_MISUSE),
					 errmsg("trigger %s on %s has no transition tables", quote_identifier(tgname), qualified_name(td->tg_relation)),
					 errhint("Re-create Gnomon's triggers: select gnomon.use_c_module(true);")));
		if (keys_changed(t, td->tg_relation, td->tg_oldtable, td->tg_newtable))
		{
			flag_key_change(t);
			return call_fallback(t, fcinfo);
		}
		rows = td->tg_oldtable;
		op = 'U';
	}
	if (rows == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_GN_C_TRIGGER_MISUSE),
				 errmsg("trigger %s on %s has no transition table", quote_identifier(tgname), qualified_name(td->tg_relation)),
				 errhint("Re-create Gnomon's triggers: select gnomon.use_c_module(true);")));
	if (!write_versions(t, td->tg_relation, rows, op))
		return call_fallback(t, fcinfo);
	return PointerGetDatum(NULL);
}
