/*-------------------------------------------------------------------------
 *
 * stored.c
 *	  The newest id already stored for a shard in the tables of this
 *	  database, so that a server starts making a shard's ids past it.
 *
 * A restore (pg_dump of a shard's schema), pg_upgrade (which does not carry
 * replication origins), a schema move, or a high-water mark set back by
 * hand land rows whose ids the server's mark knows nothing of.  Strict mode
 * therefore looks, at the first stamp of a shard in each backend, for the
 * newest id stored in the tables whose id column has a next_id() DEFAULT of
 * that shard, and starts the shard past it (shared.c: only as far as
 * shardid.max_lead_ms and the mark's window ahead of the clock, since any
 * role that may insert a row, even one rolled back, stores an id).  Only the
 * permanent tables of the schema that shardid.shard_registry names for the
 * shard are read (the registry through its primary key, as a catalog is):
 * a role's own table elsewhere, a temporary one above all, is not the
 * shard's.  Every table and index is locked without waiting; one that is
 * locked is skipped and counted.
 *
 * Nothing another role chose is evaluated: no query is planned (planning
 * evaluates index predicates and expressions), no cast, operator or
 * function of a table's owner is called.  The tables are found in the
 * catalogs (pg_depend rows of the DEFAULTs that call next_id(), their
 * stored expression trees read as catalog.c does), and each table is read
 * through a plain btree index whose first key column is the id column:
 * bigint with the built-in integer operator family, no predicate, no
 * expression; one backward descent reads the largest id (a dirty
 * snapshot: an uncommitted row's id counts, it only makes the start later;
 * one of an aborted transaction does not).  A table with
 * no such index is skipped and counted (shardid.info(), doctor): the
 * guarantee needs a primary key or a plain btree index on the id column.
 *
 * The map from shards to (table, column) is built once per backend with
 * one pass over the DEFAULTs that call next_id().  A relation cache
 * invalidation of a table in the map (altered, indexed, analyzed,
 * vacuumed) makes its shard be looked at again at its next stamp; one of
 * any other relation (a table created or restored; the registry, which
 * its trigger registry_changed invalidates at every write) makes the map
 * be built again and every shard be looked at again, and so does a change
 * of any schema (created, renamed, dropped: the registry names schemas).
 * So a restore into a running server, and a schema registered after its
 * data arrived, are seen by backends that stamped the shard before.  Rows
 * that arrive without any invalidation (logical replication into existing
 * tables: an online move) are not: the mover raises the mark instead.
 *
 * src/stored.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/itup.h"
#include "access/nbtree.h"
#include "access/relation.h"
#include "access/relscan.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_index.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/primnodes.h"
#include "nodes/value.h"
#include "parser/parse_func.h"
#include "storage/lmgr.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "compat.h"
#include "stored.h"

/* one column with a next_id() DEFAULT of a constant shard */
typedef struct StoredColumn
{
	Oid			relid;
	AttrNumber	attnum;
} StoredColumn;

/* the shards this backend has started past their stored ids */
uint8		shardid_stored_checked[SHARDID_NSHARDS / 8];

/* the map: columns[shard] is a List of StoredColumn, or NIL */
static MemoryContext map_context = NULL;
static List **map_columns = NULL;
static bool map_valid = false;
static bool callback_registered = false;

/* the shard of each table in the map, for invalidations */
typedef struct StoredTable
{
	Oid			relid;			/* hash key */
	int32		shard;
} StoredTable;

static HTAB *map_tables = NULL;

/*
 * A relation cache invalidation.  Of a table in the map (ANALYZE, VACUUM,
 * an index created, the table altered): look at its shard again at its
 * next stamp.  Of any other relation (a table created or restored, whose
 * DEFAULT may name any shard) or of all: build the map again and look at
 * every shard again.
 */
static void
invalidate_map(Datum arg, Oid relid)
{
	StoredTable *t = NULL;

	if (map_valid && OidIsValid(relid) && map_tables != NULL)
		t = hash_search(map_tables, &relid, HASH_FIND, NULL);
	if (t != NULL)
		shardid_stored_checked[t->shard >> 3] &= (uint8) ~(1 << (t->shard & 7));
	else
	{
		map_valid = false;
		memset(shardid_stored_checked, 0, sizeof(shardid_stored_checked));
	}
}

/*
 * A change of a schema (created, renamed, dropped): the schema the registry
 * names for a shard may be another one now, or exist now.  Look at every
 * shard again; the map (tables by oid) stays.
 */
static void
invalidate_namespaces(Datum arg, int cacheid, uint32 hashvalue)
{
	memset(shardid_stored_checked, 0, sizeof(shardid_stored_checked));
}

PG_FUNCTION_INFO_V1(shardid_registry_changed);

/*
 * shardid.registry_changed(): the AFTER row trigger on
 * shardid.shard_registry.  A row written does not invalidate anything by
 * itself: invalidate the registry's relation cache entry (sent to every
 * backend at commit, and seen by this one at its next command), which
 * makes every backend look at the shards' stored ids again.
 */
Datum
shardid_registry_changed(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_AFTER(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("shardid.registry_changed() must be an AFTER ... FOR EACH ROW trigger")));
	CacheInvalidateRelcache(trigdata->tg_relation);
	return PointerGetDatum(NULL);
}

/*
 * The next_id() functions of the extension in this database: in schema
 * shardid (fixed by the control file), and members of the extension.
 */
static int
next_id_functions(Oid *funcs)
{
	Oid			ext = get_extension_oid("shardid", true);
	List	   *name;
	Oid			args[2] = {INT4OID, INT8OID};
	int			n = 0;

	if (!OidIsValid(ext))
		return 0;
	name = list_make2(makeString("shardid"), makeString("next_id"));
	for (int nargs = 2; nargs >= 1; nargs--)
	{
		Oid			f = LookupFuncName(name, nargs, args, true);

		if (OidIsValid(f) && getExtensionOfObject(ProcedureRelationId, f) == ext)
			funcs[n++] = f;
	}
	return n;
}

/* the constant shard of a DEFAULT that is one plain next_id() call, or -1 */
static int32
default_shard(Oid attrdef, Relation attrdef_rel, const Oid *funcs, int nfuncs,
			  Oid *relid, AttrNumber *attnum)
{
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	int32		shard = -1;

	ScanKeyInit(&key, Anum_pg_attrdef_oid, BTEqualStrategyNumber, F_OIDEQ,
				ObjectIdGetDatum(attrdef));
	scan = systable_beginscan(attrdef_rel, AttrDefaultOidIndexId, true,
							  NULL, 1, &key);
	if (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_attrdef form = (Form_pg_attrdef) GETSTRUCT(tuple);
		bool		isnull;
		Datum		bin = heap_getattr(tuple, Anum_pg_attrdef_adbin,
									   RelationGetDescr(attrdef_rel), &isnull);
		Node	   *expr = isnull ? NULL : stringToNode(TextDatumGetCString(bin));

		if (expr != NULL && IsA(expr, FuncExpr))
		{
			FuncExpr   *f = (FuncExpr *) expr;
			Const	   *c = list_length(f->args) >= 1 ? linitial(f->args) : NULL;

			for (int i = 0; i < nfuncs; i++)
				if (f->funcid == funcs[i] && c != NULL && IsA(c, Const) &&
					!c->constisnull && c->consttype == INT4OID)
				{
					shard = DatumGetInt32(c->constvalue);
					*relid = form->adrelid;
					*attnum = form->adnum;
				}
		}
	}
	systable_endscan(scan);
	return shard;
}

/* build the map from the DEFAULTs that call next_id() */
static void
build_map(void)
{
	Oid			funcs[2];
	int			nfuncs;
	Relation	depend_rel;
	Relation	attrdef_rel;

	if (!callback_registered)
	{
		CacheRegisterRelcacheCallback(invalidate_map, (Datum) 0);
		CacheRegisterSyscacheCallback(NAMESPACEOID, invalidate_namespaces,
									  (Datum) 0);
		callback_registered = true;
	}
	if (map_context == NULL)
		map_context = AllocSetContextCreate(TopMemoryContext,
											"shardid stored ids",
											ALLOCSET_SMALL_SIZES);
	MemoryContextReset(map_context);
	map_columns = MemoryContextAllocZero(map_context,
										 sizeof(List *) * SHARDID_NSHARDS);
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(StoredTable);
		ctl.hcxt = map_context;
		map_tables = hash_create("shardid stored tables", 256, &ctl,
								 HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	map_valid = true;			/* an invalidation from here on counts */

	nfuncs = next_id_functions(funcs);
	depend_rel = table_open(DependRelationId, AccessShareLock);
	attrdef_rel = table_open(AttrDefaultRelationId, AccessShareLock);
	for (int i = 0; i < nfuncs; i++)
	{
		ScanKeyData keys[2];
		SysScanDesc scan;
		HeapTuple	tuple;

		ScanKeyInit(&keys[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(ProcedureRelationId));
		ScanKeyInit(&keys[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(funcs[i]));
		scan = systable_beginscan(depend_rel, DependReferenceIndexId, true,
								  NULL, 2, keys);
		while (HeapTupleIsValid(tuple = systable_getnext(scan)))
		{
			Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tuple);
			Oid			relid = InvalidOid;
			AttrNumber	attnum = InvalidAttrNumber;
			int32		shard;

			if (dep->classid != AttrDefaultRelationId)
				continue;
			shard = default_shard(dep->objid, attrdef_rel, funcs, nfuncs,
								  &relid, &attnum);
			if (shard >= 0 && shard < SHARDID_NSHARDS)
			{
				MemoryContext old = MemoryContextSwitchTo(map_context);
				StoredColumn *col = palloc(sizeof(StoredColumn));
				StoredTable *t;

				col->relid = relid;
				col->attnum = attnum;
				map_columns[shard] = lappend(map_columns[shard], col);
				t = hash_search(map_tables, &relid, HASH_ENTER, NULL);
				t->shard = shard;
				MemoryContextSwitchTo(old);
			}
		}
		systable_endscan(scan);
	}
	table_close(attrdef_rel, AccessShareLock);
	table_close(depend_rel, AccessShareLock);
}

/* a plain btree index on the bigint column attnum, first key column */
static bool
usable_index(Relation index, AttrNumber attnum)
{
	Form_pg_index form = index->rd_index;

	return form->indisvalid &&
		index->rd_rel->relam == BTREE_AM_OID &&
		form->indkey.values[0] == attnum &&
		heap_attisnull(index->rd_indextuple, Anum_pg_index_indexprs, NULL) &&
		heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL) &&
		index->rd_opfamily[0] == INTEGER_BTREE_FAM_OID &&
		index->rd_opcintype[0] == INT8OID;
}

/*
 * An index of a table, locked without waiting (a role that reindexes its
 * own table must not make next_id() wait), or NULL.  Close it with
 * close_index().
 */
static Relation
open_index(Oid indexid)
{
	Relation	index;

	if (!ConditionalLockRelationOid(indexid, AccessShareLock))
		return NULL;
	index = try_relation_open(indexid, NoLock);
	if (index != NULL && index->rd_rel->relkind != RELKIND_INDEX)
	{
		relation_close(index, NoLock);
		index = NULL;
	}
	if (index == NULL)
		UnlockRelationOid(indexid, AccessShareLock);
	return index;
}

static void
close_index(Relation index)
{
	Oid			indexid = RelationGetRelid(index);

	relation_close(index, NoLock);
	UnlockRelationOid(indexid, AccessShareLock);
}

/*
 * The largest id of shard in the index, or -1: the largest entry, or one
 * of the next few when the largest belong to other shards.  Under a dirty
 * snapshot: the rows of transactions in progress count (they may commit),
 * those of aborted transactions do not (anyone who may insert stores one
 * that way, and it is no row), nor rows deleted for good.  At most 1000
 * entries are looked at, visible or not.
 */
static int64
newest_in_index(Relation heap, Relation index, int32 shard)
{
	ScanKeyData key;
	IndexScanDesc scan;
	SnapshotData dirty;
	TupleTableSlot *slot;
	ScanDirection dir = (index->rd_indoption[0] & INDOPTION_DESC) ?
		ForwardScanDirection : BackwardScanDirection;
	int64		found = -1;

	InitDirtySnapshot(dirty);
	ScanKeyEntryInitialize(&key, SK_ISNULL | SK_SEARCHNOTNULL, 1,
						   InvalidStrategy, InvalidOid, InvalidOid,
						   InvalidOid, (Datum) 0);
	slot = table_slot_create(heap, NULL);
	scan = shardid_index_beginscan(heap, index, &dirty, 1);
	scan->xs_want_itup = true;
	index_rescan(scan, &key, 1, NULL, 0);
	for (int i = 0; i < 1000 && index_getnext_tid(scan, dir) != NULL; i++)
	{
		bool		isnull;
		Datum		value = index_getattr(scan->xs_itup, 1, scan->xs_itupdesc,
										  &isnull);

		if (!isnull && DatumGetInt64(value) >= 0 &&
			shardid_unpack_shard(DatumGetInt64(value)) == shard &&
			index_fetch_heap(scan, slot))
		{
			found = DatumGetInt64(value);
			break;
		}
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return found;
}

/*
 * The newest id of shard in the bigint column attnum of the table rel
 * (opened and locked by the caller), read through the first usable index
 * that is not locked; -1: none.  Returns false when no such index was read
 * (none, or each one locked: then *locked is set).
 */
bool
shardid_stored_newest_in(Relation rel, AttrNumber attnum, int32 shard,
						 int64 *newest, bool *locked)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *ic;
	bool		read = false;

	*newest = -1;
	*locked = false;
	foreach(ic, indexes)
	{
		Relation	index = open_index(lfirst_oid(ic));

		if (index == NULL)
		{
			*locked = true;
			continue;
		}
		if (usable_index(index, attnum))
		{
			*newest = newest_in_index(rel, index, shard);
			read = true;
		}
		close_index(index);
		if (read)
			break;
	}
	list_free(indexes);
	if (read)
		*locked = false;
	return read;
}

/*
 * The relation shardid.shard_registry, if it is extension shardid's own, or
 * InvalidOid.  Looked up by name: for the rare paths that read it, never
 * for every id.
 */
Oid
shardid_registry_relid(void)
{
	Oid			ext = get_extension_oid("shardid", true);
	Oid			nsp = get_namespace_oid("shardid", true);
	Oid			relid;

	if (!OidIsValid(ext) || !OidIsValid(nsp))
		return InvalidOid;
	relid = get_relname_relid("shard_registry", nsp);
	if (!OidIsValid(relid) ||
		getExtensionOfObject(RelationRelationId, relid) != ext)
		return InvalidOid;
	return relid;
}

/*
 * The schema that shardid.shard_registry names for shard, read through the
 * registry's primary key (no query, no code of another role), or
 * InvalidOid: none registered, no registry, or the registry locked (then
 * *locked is set).
 */
static Oid
registered_schema(int32 shard, bool *locked)
{
	Oid			relid = shardid_registry_relid();
	AttrNumber	shard_att;
	AttrNumber	schema_att;
	Relation	rel;
	List	   *indexes;
	ListCell   *ic;
	Oid			result = InvalidOid;

	*locked = false;
	if (!OidIsValid(relid))
		return InvalidOid;
	shard_att = get_attnum(relid, "shard");
	schema_att = get_attnum(relid, "schema_name");
	if (shard_att == InvalidAttrNumber || schema_att == InvalidAttrNumber ||
		get_atttype(relid, shard_att) != INT4OID ||
		get_atttype(relid, schema_att) != NAMEOID)
		return InvalidOid;
	if (!ConditionalLockRelationOid(relid, AccessShareLock))
	{
		*locked = true;
		return InvalidOid;
	}
	rel = try_relation_open(relid, NoLock);
	if (rel == NULL)
	{
		UnlockRelationOid(relid, AccessShareLock);
		return InvalidOid;
	}
	indexes = RelationGetIndexList(rel);
	foreach(ic, indexes)
	{
		Relation	index = open_index(lfirst_oid(ic));
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tuple;

		if (index == NULL)
		{
			*locked = true;
			continue;
		}
		if (!index->rd_index->indisunique || !index->rd_index->indisvalid ||
			index->rd_rel->relam != BTREE_AM_OID ||
			index->rd_index->indnkeyatts != 1 ||
			index->rd_index->indkey.values[0] != shard_att ||
			!heap_attisnull(index->rd_indextuple, Anum_pg_index_indexprs, NULL) ||
			!heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL) ||
			index->rd_opfamily[0] != INTEGER_BTREE_FAM_OID ||
			index->rd_opcintype[0] != INT4OID)
		{
			close_index(index);
			continue;
		}
		*locked = false;
		ScanKeyInit(&key, shard_att, BTEqualStrategyNumber, F_INT4EQ,
					Int32GetDatum(shard));
		scan = systable_beginscan(rel, RelationGetRelid(index), true, NULL,
								  1, &key);
		if (HeapTupleIsValid(tuple = systable_getnext(scan)))
		{
			bool		isnull;
			Datum		d = heap_getattr(tuple, schema_att,
										 RelationGetDescr(rel), &isnull);

			if (!isnull)
				result = get_namespace_oid(NameStr(*DatumGetName(d)), true);
		}
		systable_endscan(scan);
		close_index(index);
		break;
	}
	list_free(indexes);
	relation_close(rel, AccessShareLock);
	return result;
}

/*
 * The newest id stored for shard in this database's tables (-1: none), and
 * how many tables were read and how many had no usable index.  Only the
 * permanent tables of the schema that shardid.shard_registry names for the
 * shard are read: a table in any other schema, a temporary one above all,
 * is some role's own and says nothing of the shard's ids.
 */
void
shardid_stored_newest(int32 shard, ShardidStored *out)
{
	ListCell   *lc;
	Oid			nsp;
	bool		locked;

	out->newest_id = -1;
	out->tables = 0;
	out->unindexed = 0;
	if (!map_valid)
		build_map();
	if (map_columns[shard] == NIL)
		return;
	nsp = registered_schema(shard, &locked);
	if (locked)
		out->unindexed++;
	if (!OidIsValid(nsp))
		return;
	foreach(lc, map_columns[shard])
	{
		StoredColumn *col = lfirst(lc);
		Relation	rel;
		int64		id;

		if (get_rel_namespace(col->relid) != nsp)
			continue;
		/* a table locked for DDL is read after that ends (invalidation) */
		if (!ConditionalLockRelationOid(col->relid, AccessShareLock))
		{
			out->unindexed++;
			continue;
		}
		rel = try_relation_open(col->relid, NoLock);
		if (rel == NULL)
		{
			UnlockRelationOid(col->relid, AccessShareLock);
			continue;
		}
		if (rel->rd_rel->relkind != RELKIND_RELATION ||
			rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP ||
			RelationGetNamespace(rel) != nsp ||
			TupleDescAttr(RelationGetDescr(rel), col->attnum - 1)->atttypid != INT8OID)
		{
			relation_close(rel, AccessShareLock);
			continue;
		}
		out->tables++;
		if (!shardid_stored_newest_in(rel, col->attnum, shard, &id, &locked))
			out->unindexed++;
		else if (id > out->newest_id)
			out->newest_id = id;
		relation_close(rel, AccessShareLock);
	}
}
