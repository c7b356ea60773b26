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
 *
 * src/citus.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/plannodes.h"
#include "parser/parse_func.h"
#include "tcop/pquery.h"
#include "utils/builtins.h"
#include "utils/acl.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "clock.h"
#include "settings.h"
#include "shared.h"
#include "stored.h"

static FmgrInfo next_id_finfo;
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

static int64
set_id_next(int32 shard)
{
	return DatumGetInt64(FunctionCall1Coll(&next_id_finfo, InvalidOid,
										   Int32GetDatum(shard)));
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
	PG_RETURN_VOID();
}
