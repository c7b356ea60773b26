/*-------------------------------------------------------------------------
 *
 * citus.c
 *	  shardid.set_id(), the row trigger that makes a row's id on the server
 *	  that stores the row.
 *
 * On Citus (schema-based sharding) a column DEFAULT is evaluated on the
 * node that received the statement, any node of the cluster, so the ids of
 * one tenant would come from several servers' clocks and counters and
 * repeat.  A BEFORE INSERT row trigger runs where the tenant's rows are (the
 * placement), for every statement shape, so set_id() makes the id there with
 * shardid.next_id(shard), and all ids of a tenant come from one server.
 *
 * Trigger arguments: the shard number and the name of the bigint id column.
 * A row whose id is given keeps it.  The first time a backend makes an id
 * for a table, it reads the newest id of the shard stored in the table, up
 * to a few seconds ahead of the clock, and makes sure its ids sort above
 * it (a table newly placed here by a Citus shard move while the other
 * server's clock was ahead): see set_id_first().  A table with no plain
 * btree index on the id column is not read.  Backends remember the tables
 * they read by OID; a table a move creates has a new one.
 *
 * next_id() is called through the function manager, as SQL would call it.
 *
 * shardid_internal.citus_guard() is the event trigger (ddl_command_end) that gives
 * a table made in, or moved into, a Citus tenant schema its ids where its
 * rows are stored.  Its C part only decides, cheaply, whether there is
 * anything to look at: Citus's catalog exists, and the command that fired
 * is the statement the client sent (Citus converts only those into tenant
 * tables; the CREATE TABLE and ALTER TABLE commands Citus itself runs
 * inside its functions are left alone).  The rest is the SQL function
 * shardid_internal.citus_guard_ddl(), called through the function manager.
 * Before that test, at any command, it refuses an ALTER TABLE (a DO
 * block's too) that leaves next_id() on Citus's row-based model: the hooks
 * of "Citus's row-based model refused" below, which also refuse it at
 * create_distributed_table() and create_reference_table(), and at every
 * INSERT and COPY that would run it, on every node, on tenant tables too.
 *
 * src/citus.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/plannodes.h"
#include "optimizer/planner.h"
#include "parser/parse_func.h"
#include "parser/parse_relation.h"
#include "parser/parsetree.h"
#include "tcop/pquery.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/acl.h"
#include "utils/catcache.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "citus.h"
#include "clock.h"
#include "floor.h"
#include "settings.h"
#include "shared.h"
#include "stored.h"

static FmgrInfo next_id_finfo;

/*
 * The Citus table that the statement being planned or executed writes, on
 * which next_id() is refused ("Citus's row-based model refused" below), or
 * an invalid relid; its kind (a CitusTable) and what reaches a node with
 * its rows ("INSERT", "COPY")
 */
typedef struct CitusWriting
{
	Oid			relid;
	int			kind;
	const char *what;
} CitusWriting;

static CitusWriting citus_writing = {InvalidOid, 0, NULL};
static bool next_id_ready = false;
static HTAB *checked_tables = NULL;

/*
 * shardid's function name(argtypes), looked up in the schema of the
 * function self that calls it (set_id(), citus_guard()), not by search_path
 */
static Oid
own_function(Oid self, const char *name, int nargs, Oid *argtypes)
{
	char	   *schema = get_namespace_name(get_func_namespace(self));

	return LookupFuncName(list_make2(makeString(schema), makeString(pstrdup(name))),
						  nargs, argtypes, false);
}

/* shardid.next_id(integer), in the schema of the calling trigger function */
static void
set_id_lookup_next_id(Oid self)
{
	Oid			argtypes[1] = {INT4OID};

	fmgr_info_cxt(own_function(self, "next_id", 1, argtypes), &next_id_finfo,
				  TopMemoryContext);
	next_id_ready = true;
}

/*
 * next_id(shard) for the row being inserted here, where it is stored: not
 * refused by the write of a Citus table it may run inside (local
 * execution of the placement's INSERT, shardid_citus_next_id_check())
 */
static int64
set_id_next(int32 shard)
{
	Oid			writing = citus_writing.relid;
	int64		v;

	citus_writing.relid = InvalidOid;
	v = DatumGetInt64(FunctionCall1Coll(&next_id_finfo, InvalidOid,
										Int32GetDatum(shard)));
	citus_writing.relid = writing;
	return v;
}

/*
 * Whether the ids stored in rel may move its shard for every session: a
 * table that is not temporary nor in a system schema, of a role that may
 * write the shard registry (INSERT on shardid.shard_registry), the tables
 * shardid.citus_tenants counts.  set_id() is EXECUTE to PUBLIC: on a TEMP table of her own, or on
 * a table of a role that may not register shards, a role could otherwise
 * put an id there and push a real shard's ids ahead of the clock.
 */
static bool
set_id_may_claim(Relation rel)
{
	Oid			registry;
	char	   *schema = get_namespace_name(RelationGetNamespace(rel));

	/* as the view: no temporary table, no table of a system schema */
	if (rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP || schema == NULL ||
		strncmp(schema, "pg_", 3) == 0 || strcmp(schema, "information_schema") == 0)
		return false;
	registry = shardid_registry_relid();
	return OidIsValid(registry) &&
		pg_class_aclcheck(registry, rel->rd_rel->relowner, ACL_INSERT) == ACLCHECK_OK;
}

/* how far ahead of the clock a stored id may be for set_id() to wait for it */
#define SET_ID_MAX_WAIT_MS 5000

/*
 * The first id this backend makes for the table: above every id of the
 * shard the table holds, up to a bound.  Returns the id to use.
 *
 * A Citus tenant table moves between workers by Citus's own shard moves,
 * with no step of shardid's at its arrival, so set_id() reads the table
 * once per backend (a moved table has a new OID), as the floor step reads
 * a shard's tables (stored.c: descents of a plain btree index on the id
 * column, nothing the table's owner chose is evaluated): the newest id of
 * the shard at most the larger of the floor's bound (shardid.max_lead_ms
 * plus 1.25 s) and SET_ID_MAX_WAIT_MS ahead of the clock.  The shard is
 * started past it (shared.c) when the table may claim the shard
 * (set_id_may_claim()) and it lies within the floor's bound; otherwise the
 * backend waits for its clock to pass it, in steps that let a cancel
 * through: at most SET_ID_MAX_WAIT_MS, once (a worker whose clock is a few
 * seconds ahead moved the tenant here).  An id further ahead, which any
 * role that may insert could write, is not read: it holds up nobody, and
 * doctor() reports it.
 */
static int64
set_id_first(Relation rel, AttrNumber attnum, int32 shard, int64 v)
{
	int64		newest;
	int64		bound = shardid_stored_bound(shard);
	int64		wait_ms = shardid_clock_ms() + SET_ID_MAX_WAIT_MS - shardid_epoch_ms;
	bool		read;

	if (wait_ms > 0 && wait_ms < SHARDID_SIGN_MILLIS)
		bound = Max(bound, shardid_pack(wait_ms, shard, SHARDID_SEQ_MASK));
	newest = shardid_stored_newest_in(rel, attnum, shard, bound, &read);
	if (newest < v)
		return v;
	if (shardid_shared_kind() != SHARDID_SHARED_NONE &&
		set_id_may_claim(rel) &&
		shardid_strict_start_past(shard, newest))
		v = set_id_next(shard);
	while (v <= newest)
	{
		pg_usleep(10000L);
		CHECK_FOR_INTERRUPTS();
		v = set_id_next(shard);
	}
	return v;
}

PG_FUNCTION_INFO_V1(shardid_set_id);

Datum
shardid_set_id(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Trigger    *trigger;
	Relation	rel;
	TupleDesc	tupdesc;
	HeapTuple	tuple;
	const char *column;
	int32		shard;
	int			attnum;
	bool		isnull;
	Datum		value;
	int64		v;
	Oid			relid;
	bool		found;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		!TRIGGER_FIRED_BY_INSERT(trigdata->tg_event) ||
		trigdata->tg_trigger->tgnargs != 2)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("shardid.set_id() must be a BEFORE INSERT ... FOR EACH ROW trigger with arguments (shard, id column)"),
				 errhint("Install it with shardid.citus_use_trigger(table, shard).")));

	trigger = trigdata->tg_trigger;
	rel = trigdata->tg_relation;
	tupdesc = RelationGetDescr(rel);
	tuple = trigdata->tg_trigtuple;
	shard = pg_strtoint32(trigger->tgargs[0]);
	column = trigger->tgargs[1];
	attnum = SPI_fnumber(tupdesc, column);
	if (attnum <= 0 || TupleDescAttr(tupdesc, attnum - 1)->atttypid != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("table \"%s\" has no bigint column \"%s\"",
						RelationGetRelationName(rel), column)));

	/* an id given in the statement is kept, as with a DEFAULT */
	(void) heap_getattr(tuple, attnum, tupdesc, &isnull);
	if (!isnull)
		return PointerGetDatum(tuple);

	if (!next_id_ready)
		set_id_lookup_next_id(fcinfo->flinfo->fn_oid);
	if (checked_tables == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(Oid);
		checked_tables = hash_create("shardid set_id tables", 64, &ctl,
									 HASH_ELEM | HASH_BLOBS);
	}

	v = set_id_next(shard);
	relid = RelationGetRelid(rel);
	(void) hash_search(checked_tables, &relid, HASH_FIND, &found);
	if (!found)
	{
		v = set_id_first(rel, (AttrNumber) attnum, shard, v);
		(void) hash_search(checked_tables, &relid, HASH_ENTER, NULL);
	}

	value = Int64GetDatum(v);
	isnull = false;
	tuple = heap_modify_tuple_by_cols(tuple, tupdesc, 1, &attnum, &value, &isnull);
	return PointerGetDatum(tuple);
}

/* ---------------------------------------------------------------------
 * Citus's row-based model refused
 *
 * Citus runs a column's DEFAULT on the node that receives the INSERT or the
 * COPY, any node of the cluster.  On a table that Citus distributes by a
 * column (one shardid shard's rows on many Citus shards) or copies to every
 * node (a reference table), each node would make next_id(shard) of the
 * same shard from its own clock and counter, and the ids repeat.  shardid
 * serves such tables nowhere, and refuses next_id() on them where it would
 * run, on every node.  So it does on a table of one shard (a tenant table,
 * or one distributed without a column), whose ids the set_id() trigger
 * makes where its rows are stored, and, on the workers, on a Citus local
 * table (its rows and ids are the coordinator's).  With hooks of this
 * library:
 *
 *	- the planner hook: an INSERT or a MERGE (in a WITH too) into such a
 *	  table that calls next_id(), by a column's DEFAULT (its own, its
 *	  domain's) or in the statement.  The rewritten query is where a DEFAULT
 *	  is seen whatever Citus then plans: Citus's planner hook replaces the
 *	  ModifyTable by a plan of its own, and runs after this one (Citus must
 *	  come first in shared_preload_libraries);
 *	- the executor hooks (start, run, finish), the planner and utility hooks
 *	  mark the table such a statement, or a COPY FROM, writes while it runs,
 *	  and next_id() and next_ids() refuse a call meanwhile: a function of
 *	  the user's that calls next_id() (DEFAULT myid()), which no check of
 *	  the statement sees.  Citus evaluates the statement's functions in its
 *	  scan's start (an INSERT ... SELECT's in the run), keeping the original
 *	  range table beside its own;
 *	- the utility hook: a COPY FROM into such a table that leaves a column
 *	  whose DEFAULT calls next_id() (floor.c's id columns) to its DEFAULT;
 *	- the function manager hook around create_distributed_table(),
 *	  create_reference_table() and alter_distributed_table(), which are
 *	  SELECTs and fire no event trigger: a table they made such a table in
 *	  this transaction (its row of pg_dist_partition) with such a column, or
 *	  with a set_id() trigger when it is distributed by a column or a
 *	  reference table;
 *	- the event trigger shardid_citus_guard, at an ALTER TABLE a function
 *	  runs too (a DO block): such a table left with such a column; at a
 *	  CREATE TABLE in, or ALTER TABLE ... SET SCHEMA into, a tenant schema
 *	  after citus_guard_ddl(): a column whose DEFAULT still calls next_id()
 *	  (its domain's).
 *
 * Whether a table is such a table is read from pg_dist_partition once per
 * table and backend, and forgotten at the table's relcache invalidation
 * (Citus sends one at each change of the table's row there).  Without
 * Citus, an INSERT planned, started, run and finished or a COPY costs one
 * lookup in a hash table each, and next_id() a test of one variable.
 * ---------------------------------------------------------------------
 */

typedef enum CitusTable
{
	CITUS_TABLE_OTHER,			/* not Citus's */
	CITUS_TABLE_DISTRIBUTED,	/* distributed by a column */
	CITUS_TABLE_REFERENCE,		/* a copy on every node */
	CITUS_TABLE_SINGLE,			/* one shard: a tenant table, or distributed
								 * without a column */
	CITUS_TABLE_LOCAL			/* a Citus local table: rows on the
								 * coordinator */
} CitusTable;

typedef struct CitusTableEntry
{
	Oid			relid;
	CitusTable	kind;
} CitusTableEntry;

static HTAB *citus_tables = NULL;

static planner_hook_type prev_planner = NULL;
static ProcessUtility_hook_type prev_utility = NULL;
static needs_fmgr_hook_type prev_needs_fmgr = NULL;
static fmgr_hook_type prev_fmgr = NULL;
static ExecutorStart_hook_type prev_executor_start = NULL;
static ExecutorRun_hook_type prev_executor_run = NULL;
static ExecutorFinish_hook_type prev_executor_finish = NULL;

/* Citus's functions that make a table distributed or reference */
#define CITUS_MAX_DISTRIBUTING 16
static bool distributing_known = false;
static int	distributing_count = 0;
static Oid	distributing_oids[CITUS_MAX_DISTRIBUTING];

/* the columns of pg_dist_partition that say what a table is */
typedef struct CitusPartitionColumns
{
	AttrNumber	relid;
	AttrNumber	method;
	AttrNumber	key;
	AttrNumber	repmodel;
	AttrNumber	colocation;
} CitusPartitionColumns;

static bool
citus_partition_columns(Oid catalog, CitusPartitionColumns *cols)
{
	cols->relid = get_attnum(catalog, "logicalrelid");
	cols->method = get_attnum(catalog, "partmethod");
	cols->key = get_attnum(catalog, "partkey");
	cols->repmodel = get_attnum(catalog, "repmodel");
	cols->colocation = get_attnum(catalog, "colocationid");
	return cols->relid > 0 && cols->method > 0 && cols->key > 0 && cols->repmodel > 0 &&
		cols->colocation > 0;
}

/*
 * What a row of pg_dist_partition makes its table, and for a table
 * distributed by a column, that column (from partkey, the Var Citus
 * stores as text; 0 when it cannot be read)
 */
static CitusTable
citus_partition_kind(HeapTuple tuple, TupleDesc desc, CitusPartitionColumns *cols,
					 AttrNumber *distcol)
{
	bool		isnull;
	Datum		method = heap_getattr(tuple, cols->method, desc, &isnull);
	Datum		repmodel;
	Datum		colocation;

	if (!isnull && DatumGetChar(method) != 'n')
	{
		Datum		key = heap_getattr(tuple, cols->key, desc, &isnull);

		if (distcol != NULL)
		{
			const char *varattno = isnull ? NULL : strstr(TextDatumGetCString(key), ":varattno ");

			*distcol = varattno != NULL ? (AttrNumber) atoi(varattno + strlen(":varattno ")) : 0;
		}
		return CITUS_TABLE_DISTRIBUTED;
	}
	repmodel = heap_getattr(tuple, cols->repmodel, desc, &isnull);
	if (!isnull && DatumGetChar(repmodel) == 't')
		return CITUS_TABLE_REFERENCE;
	/* a single-shard table is colocated, a Citus local table is not */
	colocation = heap_getattr(tuple, cols->colocation, desc, &isnull);
	if (!isnull && DatumGetUInt32(colocation) != 0)
		return CITUS_TABLE_SINGLE;
	return CITUS_TABLE_LOCAL;
}

/* what relid is to Citus, from pg_dist_partition (its index by table) */
static CitusTable
citus_table_read(Oid relid, AttrNumber *distcol)
{
	Oid			catalog = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	Oid			index;
	CitusPartitionColumns cols;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	CitusTable	kind = CITUS_TABLE_OTHER;

	if (!OidIsValid(catalog) || !citus_partition_columns(catalog, &cols))
		return CITUS_TABLE_OTHER;
	index = get_relname_relid("pg_dist_partition_logical_relid_index", PG_CATALOG_NAMESPACE);
	rel = table_open(catalog, AccessShareLock);
	ScanKeyInit(&key, cols.relid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(rel, index, OidIsValid(index), NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		kind = citus_partition_kind(tuple, RelationGetDescr(rel), &cols, distcol);
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return kind;
}

/* citus_table_read(relid), from the cache */
static CitusTable
citus_table(Oid relid)
{
	CitusTableEntry *entry;
	bool		found;

	if (citus_tables == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(CitusTableEntry);
		ctl.hcxt = CacheMemoryContext;
		citus_tables = hash_create("shardid citus tables", 64, &ctl,
								   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	entry = hash_search(citus_tables, &relid, HASH_FIND, NULL);
	if (entry == NULL)
	{
		CitusTable	kind = citus_table_read(relid, NULL);

		entry = hash_search(citus_tables, &relid, HASH_ENTER, &found);
		entry->kind = kind;
	}
	return entry->kind;
}

/* a table's definition, or Citus's row of it, changed */
static void
citus_table_forget(Datum arg, Oid relid)
{
	if (citus_tables == NULL)
		return;
	if (OidIsValid(relid))
		(void) hash_search(citus_tables, &relid, HASH_REMOVE, NULL);
	else
	{
		hash_destroy(citus_tables);
		citus_tables = NULL;
	}
}

/* pg_proc changed (CREATE or DROP EXTENSION citus): look them up again */
static void
citus_distributing_forget(Datum arg, int cacheid, uint32 hashvalue)
{
	distributing_known = false;
}

/* whether fn_oid is one of Citus's functions that distribute a table */
static bool
citus_distributing(Oid fn_oid)
{
	static const char *const names[] = {
		"create_distributed_table", "create_distributed_table_concurrently",
		"create_reference_table", "alter_distributed_table"
	};
	int			i;
	size_t		n;

	if (!distributing_known)
	{
		distributing_count = 0;
		for (n = 0; n < lengthof(names); n++)
		{
			CatCList   *list = SearchSysCacheList1(PROCNAMEARGSNSP, CStringGetDatum(names[n]));
			int			j;

			for (j = 0; j < list->n_members; j++)
			{
				Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(&list->members[j]->tuple);

				if (proc->pronamespace == PG_CATALOG_NAMESPACE &&
					distributing_count < CITUS_MAX_DISTRIBUTING)
					distributing_oids[distributing_count++] = proc->oid;
			}
			ReleaseSysCacheList(list);
		}
		distributing_known = true;
	}
	for (i = 0; i < distributing_count; i++)
		if (distributing_oids[i] == fn_oid)
			return true;
	return false;
}

/* whether this node is a Citus worker (pg_dist_local_group.groupid not 0) */
static bool
citus_on_worker(void)
{
	Oid			catalog = get_relname_relid("pg_dist_local_group", PG_CATALOG_NAMESPACE);
	AttrNumber	groupid;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		worker = false;

	if (!OidIsValid(catalog) || (groupid = get_attnum(catalog, "groupid")) <= 0)
		return false;
	rel = table_open(catalog, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		bool		isnull;
		Datum		group = heap_getattr(tuple, groupid, RelationGetDescr(rel), &isnull);

		worker = !isnull && DatumGetInt32(group) != 0;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return worker;
}

/* whether nsp is a Citus tenant schema (pg_dist_schema, by its key) */
static bool
citus_tenant_schema(Oid nsp)
{
	Oid			catalog = get_relname_relid("pg_dist_schema", PG_CATALOG_NAMESPACE);
	Oid			index;
	AttrNumber	schemaid;
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	bool		found;

	if (!OidIsValid(catalog) || (schemaid = get_attnum(catalog, "schemaid")) <= 0)
		return false;
	index = get_relname_relid("pg_dist_schema_pkey", PG_CATALOG_NAMESPACE);
	rel = table_open(catalog, AccessShareLock);
	ScanKeyInit(&key, schemaid, BTEqualStrategyNumber, F_OIDEQ, ObjectIdGetDatum(nsp));
	scan = systable_beginscan(rel, index, OidIsValid(index), NULL, 1, &key);
	found = HeapTupleIsValid(systable_getnext(scan));
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Whether next_id() is refused on a table of kind here: on every node but
 * for a Citus local table, whose rows (and ids) are the coordinator's
 */
static bool
citus_refused(CitusTable kind)
{
	if (kind == CITUS_TABLE_OTHER)
		return false;
	if (kind == CITUS_TABLE_LOCAL)
		return citus_on_worker();
	return true;
}

/* the name of the column Citus distributes rel by ("?" unknown), or NULL when it is no such table */
static const char *
citus_distribution_column(Relation rel, CitusTable kind)
{
	AttrNumber	distcol = 0;
	char	   *name = NULL;

	if (kind != CITUS_TABLE_DISTRIBUTED)
		return NULL;
	(void) citus_table_read(RelationGetRelid(rel), &distcol);
	if (distcol > 0)
		name = get_attname(RelationGetRelid(rel), distcol, true);
	return name != NULL ? name : "?";
}

/*
 * The refusal.  column: the first column of rel whose DEFAULT calls
 * next_id(), or 0 (a next_id() call the statement makes, itself or in a
 * function); arrives: what reaches a node with it ("INSERT", "COPY").
 */
static void
citus_refuse(Relation rel, CitusTable kind, AttrNumber column, const char *arrives)
{
	char	   *table = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												   RelationGetRelationName(rel));
	const char *name = column > 0 ?
		quote_identifier(get_attname(RelationGetRelid(rel), column, false)) : NULL;
	const char *distname;

	if (kind == CITUS_TABLE_SINGLE)
	{
		const char *noun = citus_tenant_schema(RelationGetNamespace(rel)) ?
			"tenant table" : "Citus single-shard table";
		Bitmapset  *shards = column > 0 ? shardid_id_shards(rel) : NULL;
		char	   *shard = bms_membership(shards) == BMS_SINGLETON ?
			psprintf("%d", bms_singleton_member(shards)) : "<shard>";

		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 name != NULL ?
				 errmsg("a DEFAULT that calls shardid.next_id() is refused on %s %s", noun, table) :
				 errmsg("a call of shardid.next_id() is refused on %s %s", noun, table),
				 name != NULL ?
				 errdetail("Citus runs the DEFAULT of column %s on whichever node receives the %s: the nodes would repeat each other's ids. The ids of a %s are made where its rows are stored, by the shardid.set_id() trigger.",
						   name, arrives, noun) :
				 errdetail("The %s calls shardid.next_id(), which Citus runs on whichever node receives it: the nodes would repeat each other's ids. The ids of a %s are made where its rows are stored, by the shardid.set_id() trigger.",
						   arrives, noun),
				 name != NULL ?
				 errhint("Make column %s a bigint without a DEFAULT, and install the trigger: SELECT shardid.citus_use_trigger(%s, %s, %s);",
						 name, quote_literal_cstr(table), shard,
						 quote_literal_cstr(get_attname(RelationGetRelid(rel), column, false))) :
				 errhint("Call shardid.next_id() nowhere in the statement, nor in its DEFAULTs' functions: the shardid.set_id() trigger makes the ids (shardid.citus_use_trigger()).")));
	}
	if (kind == CITUS_TABLE_LOCAL)
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("shardid.next_id() is refused on Citus local table %s on a worker", table),
				 name != NULL ?
				 errdetail("The DEFAULT of its column %s calls shardid.next_id(): the rows of a Citus local table are stored on the coordinator, and ids this worker made would repeat the coordinator's.",
						   name) :
				 errdetail("The %s calls shardid.next_id(): the rows of a Citus local table are stored on the coordinator, and ids this worker made would repeat the coordinator's.",
						   arrives),
				 errhint("Run the %s on the coordinator.", arrives)));
	distname = citus_distribution_column(rel, kind);
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 kind == CITUS_TABLE_DISTRIBUTED ?
			 errmsg("shardid does not serve table %s, which Citus distributes by column \"%s\"",
					table, distname) :
			 errmsg("shardid does not serve table %s, a Citus reference table", table),
			 name != NULL ?
			 errdetail("The DEFAULT of its column %s calls shardid.next_id(), which Citus runs on whichever node receives the %s: the nodes would repeat each other's ids.",
					   name, arrives) :
			 errdetail("The %s calls shardid.next_id(), which Citus runs on whichever node receives it: the nodes would repeat each other's ids.",
					   arrives),
			 errhint("For shardid's ids, use Citus schema-based sharding, a tenant schema per logical shard: shardid.add_shards(), shardid.citus_distribute_shard(). For this table, use a bigserial or identity column: Citus keeps their values unique across nodes.")));
}

/*
 * A set_id() trigger on a table distributed by a column or a reference
 * table (made before create_distributed_table() or
 * create_reference_table()): the event trigger's refusal of CREATE TRIGGER
 * on one (citus_guard_ddl())
 */
static void
citus_refuse_trigger(Relation rel, CitusTable kind)
{
	char	   *table = quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)),
												   RelationGetRelationName(rel));
	const char *distname = citus_distribution_column(rel, kind);

	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 kind == CITUS_TABLE_DISTRIBUTED ?
			 errmsg("shardid does not serve table %s, which Citus distributes by column \"%s\"",
					table, distname) :
			 errmsg("shardid does not serve table %s, a Citus reference table", table),
			 kind == CITUS_TABLE_DISTRIBUTED ?
			 errdetail("The rows of one shardid shard would live on the placements of many Citus shards, on several nodes, and each would make ids of that shard that repeat the others'. A shard's ids must all come from one server.") :
			 errdetail("Citus keeps a copy of a reference table on every node, and each copy would make its own ids for the same rows. A shard's ids must all come from one server."),
			 errhint("For shardid's ids, use Citus schema-based sharding, a tenant schema per logical shard: shardid.add_shards(), shardid.citus_distribute_shard(). For this table, use a bigserial or identity column: Citus keeps their values unique across nodes.")));
}

/* whether rel has a trigger of shardid.set_id() */
static bool
citus_has_set_id(Relation rel)
{
	Oid			set_id;
	int			i;

	if (rel->trigdesc == NULL || !OidIsValid(get_namespace_oid("shardid", true)))
		return false;
	set_id = LookupFuncName(list_make2(makeString("shardid"), makeString("set_id")),
							0, NULL, true);
	for (i = 0; OidIsValid(set_id) && i < rel->trigdesc->numtriggers; i++)
		if (rel->trigdesc->triggers[i].tgfoid == set_id)
			return true;
	return false;
}

/* the first column of rel whose DEFAULT calls next_id(), or 0 */
static AttrNumber
citus_id_column(Relation rel)
{
	Bitmapset  *cols;
	int			first;

	if (!shardid_next_id_present())
		return 0;
	cols = shardid_id_columns(rel);
	first = bms_next_member(cols, -1);
	bms_free(cols);
	return first > 0 ? (AttrNumber) first : 0;
}

static bool
citus_calls_next_id(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr) && shardid_is_next_id(((FuncExpr *) node)->funcid))
		return true;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, citus_calls_next_id, context, 0);
	return expression_tree_walker(node, citus_calls_next_id, context);
}

/*
 * An INSERT or MERGE of query, or of its WITH, into a table of the
 * row-based model that calls next_id(): the DEFAULTs are in the rewritten
 * query (its target list, its VALUES lists)
 */
static void
citus_check_query(Query *query)
{
	ListCell   *lc;

	foreach(lc, query->cteList)
	{
		CommonTableExpr *cte = lfirst_node(CommonTableExpr, lc);

		if (cte->ctequery != NULL && IsA(cte->ctequery, Query))
			citus_check_query((Query *) cte->ctequery);
	}
	if ((query->commandType == CMD_INSERT || query->commandType == CMD_MERGE) &&
		query->resultRelation > 0)
	{
		RangeTblEntry *rte = rt_fetch(query->resultRelation, query->rtable);
		CitusTable	kind;

		if (rte->rtekind != RTE_RELATION)
			return;
		kind = citus_table(rte->relid);
		if (citus_refused(kind) && shardid_next_id_present() &&
			query_tree_walker(query, citus_calls_next_id, NULL, 0))
		{
			/* the parser locked the table */
			Relation	rel = relation_open(rte->relid, NoLock);

			citus_refuse(rel, kind, citus_id_column(rel), "INSERT");
		}
	}
}

/*
 * The table of the row-based model that a statement writes (its result
 * relations: locked RowExclusiveLock in its range table, where Citus keeps
 * the original entries beside its own), or invalid; *kind its kind
 */
static Oid
citus_written(List *rtable, CitusTable *kind)
{
	ListCell   *lc;

	foreach(lc, rtable)
	{
		RangeTblEntry *rte = (RangeTblEntry *) lfirst(lc);

		if (rte->rtekind == RTE_RELATION && rte->rellockmode == RowExclusiveLock &&
			citus_refused(*kind = citus_table(rte->relid)))
			return rte->relid;
	}
	return InvalidOid;
}

/*
 * Marks the table of the row-based model that a statement writes (relid,
 * when valid) until the caller puts back the mark returned, in a
 * PG_FINALLY(): a next_id() that runs meanwhile, whatever called it (a
 * function of a DEFAULT, of the statement), is refused
 * (shardid_citus_next_id_check())
 */
static CitusWriting
citus_writing_mark(Oid relid, CitusTable kind, const char *what)
{
	CitusWriting saved = citus_writing;

	if (OidIsValid(relid))
	{
		citus_writing.relid = relid;
		citus_writing.kind = (int) kind;
		citus_writing.what = what;
	}
	return saved;
}

static PlannedStmt *
citus_planner(Query *parse, const char *query_string, int cursorOptions,
			  ParamListInfo boundParams)
{
	PlannedStmt *result;
	Oid			relid = InvalidOid;
	CitusTable	kind = CITUS_TABLE_OTHER;
	CitusWriting saved;

	if (parse->commandType == CMD_INSERT || parse->commandType == CMD_MERGE ||
		parse->hasModifyingCTE)
	{
		citus_check_query(parse);
		/* Citus may evaluate the statement's functions while it plans */
		relid = citus_written(parse->rtable, &kind);
	}
	saved = citus_writing_mark(relid, kind, "INSERT");
	PG_TRY();
	{
		if (prev_planner)
			result = prev_planner(parse, query_string, cursorOptions, boundParams);
		else
			result = standard_planner(parse, query_string, cursorOptions, boundParams);
	}
	PG_FINALLY();
	{
		citus_writing = saved;
	}
	PG_END_TRY();
	return result;
}

/* the table of the row-based model queryDesc writes, or invalid */
static Oid
citus_executor_written(QueryDesc *queryDesc, CitusTable *kind)
{
	if ((queryDesc->operation != CMD_INSERT && queryDesc->operation != CMD_MERGE &&
		 !queryDesc->plannedstmt->hasModifyingCTE))
		return InvalidOid;
	return citus_written(queryDesc->plannedstmt->rtable, kind);
}

/*
 * The executor's steps of a statement that writes a table of the
 * row-based model: Citus evaluates the statement's functions (its
 * DEFAULTs among them) in the first (CitusBeginScan()), an INSERT ...
 * SELECT's in the second
 */
static void
citus_executor_start(QueryDesc *queryDesc, int eflags)
{
	CitusTable	kind = CITUS_TABLE_OTHER;
	Oid			relid = citus_executor_written(queryDesc, &kind);
	CitusWriting saved = citus_writing_mark(relid, kind, "INSERT");

	PG_TRY();
	{
		if (prev_executor_start)
			prev_executor_start(queryDesc, eflags);
		else
			standard_ExecutorStart(queryDesc, eflags);
	}
	PG_FINALLY();
	{
		citus_writing = saved;
	}
	PG_END_TRY();
}

static void
#if PG_VERSION_NUM >= 180000
citus_executor_run(QueryDesc *queryDesc, ScanDirection direction, uint64 count)
#else
citus_executor_run(QueryDesc *queryDesc, ScanDirection direction, uint64 count,
				   bool execute_once)
#endif
{
	CitusTable	kind = CITUS_TABLE_OTHER;
	Oid			relid = citus_executor_written(queryDesc, &kind);
	CitusWriting saved = citus_writing_mark(relid, kind, "INSERT");

	PG_TRY();
	{
#if PG_VERSION_NUM >= 180000
		if (prev_executor_run)
			prev_executor_run(queryDesc, direction, count);
		else
			standard_ExecutorRun(queryDesc, direction, count);
#else
		if (prev_executor_run)
			prev_executor_run(queryDesc, direction, count, execute_once);
		else
			standard_ExecutorRun(queryDesc, direction, count, execute_once);
#endif
	}
	PG_FINALLY();
	{
		citus_writing = saved;
	}
	PG_END_TRY();
}

static void
citus_executor_finish(QueryDesc *queryDesc)
{
	CitusTable	kind = CITUS_TABLE_OTHER;
	Oid			relid = citus_executor_written(queryDesc, &kind);
	CitusWriting saved = citus_writing_mark(relid, kind, "INSERT");

	PG_TRY();
	{
		if (prev_executor_finish)
			prev_executor_finish(queryDesc);
		else
			standard_ExecutorFinish(queryDesc);
	}
	PG_FINALLY();
	{
		citus_writing = saved;
	}
	PG_END_TRY();
}

/*
 * From next_id() and next_ids(): refused while a statement that writes a
 * table of the row-based model is planned or executed here, however it
 * was called (a function of a DEFAULT or of the statement, which the
 * planner hook does not see).  The set_id() trigger's call is not
 * (set_id_next()).
 */
void
shardid_citus_next_id_check(void)
{
	Relation	rel;

	if (!OidIsValid(citus_writing.relid))
		return;
	rel = relation_open(citus_writing.relid, NoLock);
	citus_refuse(rel, (CitusTable) citus_writing.kind, 0, citus_writing.what);
}

/*
 * A COPY FROM into a table of the row-based model that leaves a column
 * whose DEFAULT calls next_id() to its DEFAULT: not in its column list, or
 * with COPY's DEFAULT option
 */
static void
citus_check_copy(CopyStmt *copy)
{
	Oid			relid;
	CitusTable	kind;
	Relation	rel;
	Bitmapset  *cols;
	bool		defaults = false;
	int			col = -1;
	ListCell   *lc;

	if (!copy->is_from || copy->relation == NULL)
		return;
	relid = RangeVarGetRelid(copy->relation, NoLock, true);
	if (!OidIsValid(relid) || !citus_refused(kind = citus_table(relid)) ||
		!shardid_next_id_present())
		return;
	foreach(lc, copy->options)
		if (strcmp(lfirst_node(DefElem, lc)->defname, "default") == 0)
			defaults = true;
	rel = relation_open(relid, AccessShareLock);
	cols = shardid_id_columns(rel);
	while ((col = bms_next_member(cols, col)) >= 0)
	{
		bool		given = copy->attlist == NIL && !defaults;

		foreach(lc, copy->attlist)
			if (!defaults &&
				attnameAttNum(rel, strVal(lfirst(lc)), false) == (AttrNumber) col)
				given = true;
		if (!given)
			citus_refuse(rel, kind, (AttrNumber) col, "COPY");
	}
	relation_close(rel, AccessShareLock);
}

static void
citus_utility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
			  ProcessUtilityContext context, ParamListInfo params,
			  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Oid			relid = InvalidOid;
	CitusTable	kind = CITUS_TABLE_OTHER;
	CitusWriting saved;

	if (IsA(pstmt->utilityStmt, CopyStmt))
	{
		CopyStmt   *copy = (CopyStmt *) pstmt->utilityStmt;

		citus_check_copy(copy);
		/* Citus's COPY evaluates the DEFAULTs where it arrives */
		if (copy->is_from && copy->relation != NULL)
		{
			relid = RangeVarGetRelid(copy->relation, NoLock, true);
			if (OidIsValid(relid) && !citus_refused(kind = citus_table(relid)))
				relid = InvalidOid;
		}
	}
	saved = citus_writing_mark(relid, kind, "COPY");
	PG_TRY();
	{
		if (prev_utility)
			prev_utility(pstmt, queryString, readOnlyTree, context, params,
						 queryEnv, dest, qc);
		else
			standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
									params, queryEnv, dest, qc);
	}
	PG_FINALLY();
	{
		citus_writing = saved;
	}
	PG_END_TRY();
}

/*
 * After a function that distributes tables: the tables that this
 * transaction made distributed by a column or reference tables (their rows
 * of pg_dist_partition, which Citus writes and makes visible at once), and
 * a column of theirs whose DEFAULT calls next_id()
 */
static void
citus_check_distributed(void)
{
	Oid			catalog = get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE);
	CitusPartitionColumns cols;
	Relation	pdp;
	SysScanDesc scan;
	HeapTuple	tuple;
	Snapshot	snapshot;
	List	   *made = NIL;
	List	   *kinds = NIL;
	ListCell   *lc,
			   *kc;

	if (!OidIsValid(catalog) || !citus_partition_columns(catalog, &cols) ||
		!shardid_next_id_present())
		return;
	pdp = table_open(catalog, AccessShareLock);
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	scan = systable_beginscan(pdp, InvalidOid, false, snapshot, 0, NULL);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		CitusTable	kind;
		bool		isnull;
		Datum		relid;

		if (!TransactionIdIsCurrentTransactionId(HeapTupleHeaderGetXmin(tuple->t_data)))
			continue;
		kind = citus_partition_kind(tuple, RelationGetDescr(pdp), &cols, NULL);
		relid = heap_getattr(tuple, cols.relid, RelationGetDescr(pdp), &isnull);
		if (kind == CITUS_TABLE_OTHER || kind == CITUS_TABLE_LOCAL || isnull)
			continue;
		made = lappend_oid(made, DatumGetObjectId(relid));
		kinds = lappend_int(kinds, (int) kind);
	}
	systable_endscan(scan);
	UnregisterSnapshot(snapshot);
	table_close(pdp, AccessShareLock);
	forboth(lc, made, kc, kinds)
	{
		Relation	rel = try_relation_open(lfirst_oid(lc), AccessShareLock);
		AttrNumber	column;

		if (rel == NULL)
			continue;
		column = citus_id_column(rel);
		if (column > 0)
			citus_refuse(rel, (CitusTable) lfirst_int(kc), column, "INSERT");
		/* a set_id() trigger created before (citus.enable_unsafe_triggers) */
		if ((lfirst_int(kc) == CITUS_TABLE_DISTRIBUTED || lfirst_int(kc) == CITUS_TABLE_REFERENCE) &&
			citus_has_set_id(rel))
			citus_refuse_trigger(rel, (CitusTable) lfirst_int(kc));
		relation_close(rel, AccessShareLock);
	}
}

static bool
citus_needs_fmgr_hook(Oid fn_oid)
{
	if (prev_needs_fmgr && prev_needs_fmgr(fn_oid))
		return true;
	return citus_distributing(fn_oid);
}

static void
citus_fmgr_hook(FmgrHookEventType event, FmgrInfo *flinfo, Datum *arg)
{
	if (prev_fmgr)
		prev_fmgr(event, flinfo, arg);
	if (event == FHET_END && citus_distributing(flinfo->fn_oid))
		citus_check_distributed();
}

static bool citus_guard_toplevel(Node *parsetree);

/*
 * At the end of an ALTER TABLE, a function's (a DO block's) as well as the
 * client's: a table of the row-based model or a tenant table (the client's
 * statement on one in a tenant schema is citus_guard_ddl()'s) left with a
 * column whose DEFAULT calls next_id() (its own, its domain's).  Not in Citus's
 * internal sessions nor with citus.enable_ddl_propagation off (Citus's own
 * steps), as citus_guard_ddl().
 */
static void
citus_guard_served(Node *parsetree)
{
	const char *propagation = GetConfigOption("citus.enable_ddl_propagation", true, false);
	const char *application = GetConfigOption("application_name", true, false);
	bool		on = true;
	Oid			relid;
	CitusTable	kind;
	Relation	rel;
	AttrNumber	column;

	if (parsetree == NULL || !IsA(parsetree, AlterTableStmt) ||
		((AlterTableStmt *) parsetree)->relation == NULL)
		return;
	if ((propagation != NULL && parse_bool(propagation, &on) && !on) ||
		(application != NULL &&
		 (strncmp(application, "citus_internal gpid=", 20) == 0 ||
		  strncmp(application, "citus_rebalancer gpid=", 22) == 0)))
		return;
	relid = RangeVarGetRelid(((AlterTableStmt *) parsetree)->relation, NoLock, true);
	if (!OidIsValid(relid) || (kind = citus_table(relid)) == CITUS_TABLE_OTHER ||
		kind == CITUS_TABLE_LOCAL)
		return;
	/* a tenant table's statement from the client: citus_guard_ddl()'s */
	if (kind == CITUS_TABLE_SINGLE && citus_guard_toplevel(parsetree) &&
		citus_tenant_schema(get_rel_namespace(relid)))
		return;
	rel = relation_open(relid, AccessShareLock);
	column = citus_id_column(rel);
	if (column > 0)
		citus_refuse(rel, kind, column, "INSERT");
	relation_close(rel, AccessShareLock);
}

/* from _PG_init() */
void
shardid_citus_hooks_init(void)
{
	prev_planner = planner_hook;
	planner_hook = citus_planner;
	prev_utility = ProcessUtility_hook;
	ProcessUtility_hook = citus_utility;
	prev_needs_fmgr = needs_fmgr_hook;
	needs_fmgr_hook = citus_needs_fmgr_hook;
	prev_fmgr = fmgr_hook;
	fmgr_hook = citus_fmgr_hook;
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = citus_executor_start;
	prev_executor_run = ExecutorRun_hook;
	ExecutorRun_hook = citus_executor_run;
	prev_executor_finish = ExecutorFinish_hook;
	ExecutorFinish_hook = citus_executor_finish;
	CacheRegisterRelcacheCallback(citus_table_forget, (Datum) 0);
	CacheRegisterSyscacheCallback(PROCOID, citus_distributing_forget, (Datum) 0);
}


/*
 * The table a command of the guard's tags names (its trigger's name for
 * CREATE TRIGGER), or NULL.
 */
static const char *
citus_guard_target(Node *stmt)
{
	RangeVar   *rv = NULL;

	switch (nodeTag(stmt))
	{
		case T_CreateStmt:
			rv = ((CreateStmt *) stmt)->relation;
			break;
		case T_CreateTableAsStmt:
			if (((CreateTableAsStmt *) stmt)->into != NULL)
				rv = ((CreateTableAsStmt *) stmt)->into->rel;
			break;
		case T_AlterTableStmt:
			rv = ((AlterTableStmt *) stmt)->relation;
			break;
		case T_AlterObjectSchemaStmt:
			rv = ((AlterObjectSchemaStmt *) stmt)->relation;
			break;
		case T_CreateTrigStmt:
			return ((CreateTrigStmt *) stmt)->trigname;
		default:
			break;
	}
	return rv != NULL ? rv->relname : NULL;
}

/*
 * Whether the command that fired the event trigger is a statement the
 * client sent: a statement of the active portal of the same kind that names
 * the same table.  Not compared whole: Citus qualifies a copy of the
 * statement before PostgreSQL runs it.  A command that a function runs (a
 * DO block, Citus's own conversions: CREATE TABLE of a new relation,
 * ALTER TABLE ... RENAME) is of another kind, or names another table.
 */
static bool
citus_guard_toplevel(Node *parsetree)
{
	const char *target;
	ListCell   *lc;

	if (ActivePortal == NULL || parsetree == NULL)
		return false;
	target = citus_guard_target(parsetree);
	if (target == NULL)
		return false;
	foreach(lc, ActivePortal->stmts)
	{
		Node	   *stmt = (Node *) lfirst(lc);
		Node	   *utility;
		const char *name;

		if (!IsA(stmt, PlannedStmt))
			continue;
		utility = ((PlannedStmt *) stmt)->utilityStmt;
		if (utility == NULL || nodeTag(utility) != nodeTag(parsetree))
			continue;
		name = citus_guard_target(utility);
		if (name != NULL && strcmp(name, target) == 0)
			return true;
	}
	return false;
}

/*
 * After citus_guard_ddl(), for a table the client made in or moved into a
 * tenant schema, which Citus makes a tenant table next: a column whose
 * DEFAULT still calls next_id() is refused (its domain's, which the guard
 * cannot drop; its own with a shard that is no constant).  Where
 * citus_guard_ddl() does nothing, as it.
 */
static void
citus_guard_tenant_made(Node *parsetree)
{
	const char *propagation = GetConfigOption("citus.enable_ddl_propagation", true, false);
	const char *application = GetConfigOption("application_name", true, false);
	bool		on = true;
	RangeVar   *rv;
	Oid			relid;
	Relation	rel;
	AttrNumber	column;

	if (IsA(parsetree, CreateStmt))
		rv = ((CreateStmt *) parsetree)->relation;
	else if (IsA(parsetree, AlterObjectSchemaStmt) &&
			 ((AlterObjectSchemaStmt *) parsetree)->objectType == OBJECT_TABLE &&
			 ((AlterObjectSchemaStmt *) parsetree)->relation != NULL)
		rv = makeRangeVar(((AlterObjectSchemaStmt *) parsetree)->newschema,
						  ((AlterObjectSchemaStmt *) parsetree)->relation->relname, -1);
	else
		return;
	if ((propagation != NULL && parse_bool(propagation, &on) && !on) ||
		(application != NULL &&
		 (strncmp(application, "citus_internal gpid=", 20) == 0 ||
		  strncmp(application, "citus_rebalancer gpid=", 22) == 0)) ||
		citus_on_worker())
		return;
	relid = RangeVarGetRelid(rv, NoLock, true);
	if (!OidIsValid(relid) || get_rel_relkind(relid) != RELKIND_RELATION ||
		get_rel_persistence(relid) != RELPERSISTENCE_PERMANENT ||
		!citus_tenant_schema(get_rel_namespace(relid)))
		return;
	rel = relation_open(relid, AccessShareLock);
	column = citus_id_column(rel);
	if (column > 0)
		citus_refuse(rel, CITUS_TABLE_SINGLE, column, "INSERT");
	relation_close(rel, AccessShareLock);
}

PG_FUNCTION_INFO_V1(shardid_citus_guard);

Datum
shardid_citus_guard(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	FmgrInfo	flinfo;

	LOCAL_FCINFO(guard_fcinfo, 0);

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("shardid_internal.citus_guard() must be fired by an event trigger")));
	trigdata = (EventTriggerData *) fcinfo->context;

	/* without Citus in this database: one catalog cache lookup */
	if (!OidIsValid(get_relname_relid("pg_dist_schema", PG_CATALOG_NAMESPACE)))
		PG_RETURN_VOID();
	/* a function's command too: next_id() on the row-based model refused */
	citus_guard_served(trigdata->parsetree);
	if (!citus_guard_toplevel(trigdata->parsetree))
		PG_RETURN_VOID();

	/*
	 * shardid_internal.citus_guard_ddl(), in the schema of this function; called
	 * through the function manager, which checks no EXECUTE privilege (it
	 * is not PUBLIC's) and applies its SET search_path
	 */
	fmgr_info(own_function(fcinfo->flinfo->fn_oid, "citus_guard_ddl", 0, NULL), &flinfo);
	InitFunctionCallInfoData(*guard_fcinfo, &flinfo, 0, InvalidOid, NULL, NULL);
	(void) FunctionCallInvoke(guard_fcinfo);
	citus_guard_tenant_made(trigdata->parsetree);
	PG_RETURN_VOID();
}
