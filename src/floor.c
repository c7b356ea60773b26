/*-------------------------------------------------------------------------
 *
 * floor.c
 *	  The floor of each shard: raised at the moments data arrives, so that
 *	  the id path reads no table.
 *
 * shardid.shard_registry.floor_id is the newest id of the shard known to be
 * stored in this database, or to have been: it never goes down when rows
 * are deleted.  The BEFORE row trigger registry_set_floor raises it at
 * every write of a registry row (a registration by register_shard(),
 * create_shards(), shardid-move, a restore of the registry's rows, a
 * subscription's apply: the trigger is ALWAYS) and at the UPDATE that
 * shardid.raise_floor() makes (a superuser's step after a restore,
 * pg_upgrade or an online move's cutover): it reads the newest id of the
 * shard in the schema's tables (stored.c), keeps the largest of that, the
 * row's floor before and a floor a superuser gives (a restore of the
 * registry carries the source's), and applies it in strict mode (shared.c):
 * H durably past its time, the shard's state past it.  A floor a role that
 * is not a superuser gives is not taken: anyone the database owner lets
 * register shards could otherwise push ids ahead of the clock.
 *
 * The floor is durable twice: the registry is a table (WAL, standbys,
 * pg_dump, pg_upgrade), and H, which every start and promotion begins
 * past, holds its time.  After pg_upgrade (H starts empty) or a restore
 * into a fresh cluster, shardid.raise_floor() of every registered shard
 * applies the carried floors again (README, Restores and pg_upgrade).
 *
 * src/floor.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/tuplestore.h"

#include "clock.h"
#include "mark.h"
#include "settings.h"
#include "shared.h"
#include "stored.h"

/* a column of the registry, by name, or an error */
static int
registry_attnum(TupleDesc tupdesc, const char *name, Oid type)
{
	int			attnum = SPI_fnumber(tupdesc, name);

	if (attnum <= 0 || TupleDescAttr(tupdesc, attnum - 1)->atttypid != type)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("shardid.shard_registry has no column \"%s\" of type %s",
						name, format_type_be(type)),
				 errhint("Run ALTER EXTENSION shardid UPDATE.")));
	return attnum;
}

static const char *
column_text(Oid relid, AttrNumber attnum)
{
	char	   *name = get_attname(relid, attnum, true);

	return quote_identifier(name != NULL ? name : "?");
}

static char *
table_text(Oid relid)
{
	char	   *schema = get_namespace_name(get_rel_namespace(relid));
	char	   *name = get_rel_name(relid);

	return quote_qualified_identifier(schema != NULL ? schema : "?",
									  name != NULL ? name : "?");
}

/* the id ahead of the bound is reported, never followed */
static void
warn_beyond(int32 shard, const ShardidStoredColumn *col)
{
	int64		ahead = shardid_epoch_ms + shardid_unpack_millis(col->beyond) -
		shardid_clock_ms();

	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("table %s holds an id of shard %d that is " INT64_FORMAT " ms ahead of this server's clock",
					table_text(col->relid), shard, ahead),
			 errdetail("Id " INT64_FORMAT " in column %s lies beyond what strict mode follows (shardid.max_lead_ms plus 1250 ms ahead of the clock); the floor of shard %d stays below it.",
					   col->beyond, column_text(col->relid, col->attnum), shard),
			 errhint("Any role that may insert into that table could have written it: look at the row (WHERE %s = " INT64_FORMAT "). To move every id of this server past it on purpose, a superuser can call shardid.raise_high_water(at, force => true).",
					 column_text(col->relid, col->attnum), col->beyond)));
}

/* a column whose newest id rows of other shards kept from being read */
static void
warn_incomplete(int32 shard, const ShardidStoredColumn *col)
{
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("the newest id of shard %d in table %s was not read: too many milliseconds of other shards' ids lie above it",
					shard, table_text(col->relid)),
			 errdetail("Column %s holds ids of other shards in over 100,000 milliseconds above the shard's own; the floor of shard %d does not count this table.",
					   column_text(col->relid, col->attnum), shard),
			 errhint("Find them with WHERE shardid.id_shard(%s) <> %d, and move them to the schema of their shard.",
					 column_text(col->relid, col->attnum), shard)));
}

/* make the shard's ids sort after floor_id, as far as this server can */
static void
apply_floor(int32 shard, int64 floor_id)
{
	int64		ms = shardid_epoch_ms + shardid_unpack_millis(floor_id);

	shardid_shared_attach();
	shardid_check_epoch();
	if (shardid_shared_kind() != SHARDID_SHARED_NONE)
	{
		if (!shardid_strict_raise_floor(shard, floor_id))
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the floor of shard %d is " INT64_FORMAT " ms ahead of this server's clock, further than strict mode follows",
							shard, ms - shardid_clock_ms()),
					 errdetail("Floor " INT64_FORMAT " is kept in shardid.shard_registry; new ids of the shard may sort before it.", floor_id),
					 errhint("Check the clocks of the servers; a superuser can move every id of this server past it with shardid.raise_high_water(at, force => true).")));
	}
	else if (ms >= shardid_clock_ms())
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the floor of shard %d is ahead of this server's clock, and without shared state its ids follow the clock",
						shard),
				 errdetail("Ids the shard makes before %s may sort before id " INT64_FORMAT ".",
						   shardid_format_unix_ms(ms), floor_id),
				 errhint("Add shardid to shared_preload_libraries (or use PostgreSQL 17 or later), so that the floor is followed.")));
}

PG_FUNCTION_INFO_V1(shardid_registry_floor);

/*
 * shardid.registry_floor(): the BEFORE INSERT OR UPDATE row trigger
 * registry_set_floor on shardid.shard_registry (after registry_guard, which
 * checks the writer and the schema).  Sets the row's floor_id and applies
 * it (see the file's header).
 */
Datum
shardid_registry_floor(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	Relation	rel;
	TupleDesc	tupdesc;
	HeapTuple	tuple;
	int			shard_att;
	int			schema_att;
	int			floor_att;
	bool		isnull;
	Datum		d;
	int32		shard;
	Oid			nsp;
	int64		floor_id = -1;
	List	   *columns;
	ListCell   *lc;

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("shardid.registry_floor() must be a BEFORE INSERT OR UPDATE ... FOR EACH ROW trigger")));
	rel = trigdata->tg_relation;
	if (RelationGetRelid(rel) != shardid_registry_relid())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("shardid.registry_floor() is a trigger of shardid.shard_registry only")));
	tupdesc = RelationGetDescr(rel);
	tuple = TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event) ?
		trigdata->tg_newtuple : trigdata->tg_trigtuple;
	shard_att = registry_attnum(tupdesc, "shard", INT4OID);
	schema_att = registry_attnum(tupdesc, "schema_name", NAMEOID);
	floor_att = registry_attnum(tupdesc, "floor_id", INT8OID);

	d = heap_getattr(tuple, shard_att, tupdesc, &isnull);
	if (isnull)
		return PointerGetDatum(tuple);
	shard = DatumGetInt32(d);
	d = heap_getattr(tuple, schema_att, tupdesc, &isnull);
	nsp = isnull ? InvalidOid : get_namespace_oid(NameStr(*DatumGetName(d)), true);
	if (!shardid_shard_ok(shard) || !OidIsValid(nsp))
		return PointerGetDatum(tuple);	/* registry_guard refused it */

	/* a floor given by a superuser (a restore of the registry's rows) */
	d = heap_getattr(tuple, floor_att, tupdesc, &isnull);
	if (!isnull && superuser())
		floor_id = DatumGetInt64(d);
	/* never down */
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
	{
		d = heap_getattr(trigdata->tg_trigtuple, floor_att, tupdesc, &isnull);
		if (!isnull)
			floor_id = Max(floor_id, DatumGetInt64(d));
	}
	if (floor_id >= 0 && shardid_unpack_shard(floor_id) != shard)
		floor_id = -1;			/* not an id of this shard */

	columns = shardid_stored_read(shard, nsp, shardid_stored_bound(shard),
								  GetUserId());
	foreach(lc, columns)
	{
		ShardidStoredColumn *col = lfirst(lc);

		if (col->beyond >= 0)
			warn_beyond(shard, col);
		if (!col->complete)
			warn_incomplete(shard, col);
		floor_id = Max(floor_id, col->newest);
	}
	list_free_deep(columns);

	if (floor_id >= 0)
	{
		apply_floor(shard, floor_id);
		d = Int64GetDatum(floor_id);
		isnull = false;
	}
	else
	{
		d = (Datum) 0;
		isnull = true;
	}
	tuple = heap_modify_tuple_by_cols(tuple, tupdesc, 1, &floor_att, &d, &isnull);
	return PointerGetDatum(tuple);
}

/* the schema the registry names for shard, or InvalidOid */
static Oid
registered_schema(int32 shard)
{
	Oid			argtypes[1] = {INT4OID};
	Datum		args[1] = {Int32GetDatum(shard)};
	Oid			nsp = InvalidOid;

	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT r.schema_name::pg_catalog.text FROM shardid.shard_registry r "
							  "WHERE r.shard OPERATOR(pg_catalog.=) $1",
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "reading shardid.shard_registry failed");
	if (SPI_processed == 1)
	{
		char	   *name = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);

		if (name != NULL)
			nsp = get_namespace_oid(name, true);
	}
	SPI_finish();
	return nsp;
}

PG_FUNCTION_INFO_V1(shardid_stored_ids);

/*
 * shardid.stored_ids(shard integer, OUT tab regclass, OUT id_column name,
 * OUT newest_id bigint, OUT beyond_id bigint, OUT covered boolean): every
 * id column the floor step reads for shard in the schema the registry
 * names for it, with the newest id of the shard at or below the bound,
 * the newest above it (never followed), and whether every id the server
 * makes from now on sorts after newest_id.  For doctor() and superusers.
 */
Datum
shardid_stored_ids(PG_FUNCTION_ARGS)
{
	int32		shard = PG_GETARG_INT32(0);
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc	tupdesc;
	Tuplestorestate *store;
	Oid			nsp;
	List	   *columns;
	ListCell   *lc;
	bool		strict;

	shardid_check_shard(shard);
	shardid_materialize(fcinfo);
	store = rsinfo->setResult;
	tupdesc = rsinfo->setDesc;

	nsp = registered_schema(shard);
	if (!OidIsValid(nsp))
		return (Datum) 0;
	shardid_shared_attach();
	strict = shardid_shared_kind() != SHARDID_SHARED_NONE;
	columns = shardid_stored_read(shard, nsp, shardid_stored_bound(shard),
								  InvalidOid);
	foreach(lc, columns)
	{
		ShardidStoredColumn *col = lfirst(lc);
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		char	   *attname = get_attname(col->relid, col->attnum, false);

		values[0] = ObjectIdGetDatum(col->relid);
		values[1] = DirectFunctionCall1(namein, CStringGetDatum(attname));
		values[2] = Int64GetDatum(col->newest);
		nulls[2] = col->newest < 0 || !col->complete;
		values[3] = Int64GetDatum(col->beyond);
		nulls[3] = col->beyond < 0;
		if (!col->complete)
			values[4] = BoolGetDatum(false);	/* not read: not known */
		else if (col->newest < 0)
			nulls[4] = true;
		else if (strict)
			values[4] = BoolGetDatum(shardid_strict_covers(shard, col->newest));
		else
			values[4] = BoolGetDatum(shardid_epoch_ms + shardid_unpack_millis(col->newest) <
									 shardid_clock_ms());
		tuplestore_putvalues(store, tupdesc, values, nulls);
	}
	return (Datum) 0;
}
