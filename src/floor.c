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
 * past, holds its time.  After pg_upgrade (H starts empty) or CREATE
 * DATABASE ... TEMPLATE, strict mode refuses ids until
 * shardid.apply_floors() applies the carried floors again (mark.c).
 *
 * The event triggers at the end of this file raise floors at the moments
 * PostgreSQL's own paths give: the index builds and key additions of a
 * restore (pg_dump writes rows before indexes), the ENABLE TRIGGER ALL that
 * ends a data-only restore with --disable-triggers, and DROP or ALTER
 * SUBSCRIPTION of a subscription that wrote the shard's tables (README,
 * Where data arrives; doc/design.md).
 *
 * src/floor.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/parallel.h"
#include "access/relation.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/transam.h"
#include "access/xact.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_attrdef.h"
#include "catalog/pg_authid.h"
#include "catalog/pg_trigger.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "commands/event_trigger.h"
#include "commands/trigger.h"
#include "executor/executor.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/parsenodes.h"
#include "nodes/plannodes.h"
#include "parser/parse_func.h"
#include "parser/parse_relation.h"
#include "parser/parsetree.h"
#include "storage/lmgr.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/hsearch.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"
#include "utils/tuplestore.h"

#include "catalog.h"
#include "clock.h"
#include "floor.h"
#include "mark.h"
#include "settings.h"
#include "shared.h"
#include "stored.h"

/* the sub-id of registration's locks (registration_turn()) */
#define REGISTRATION_LOCK_SUBID 0x5344
/* the schemas one transaction registers under locks of their own */
#define REGISTRATION_SCHEMA_LOCKS 64

/*
 * Set while floor_after_ddl() writes a floor it read itself from one table:
 * the registry's trigger takes it as given and reads no other table (those
 * of the schema may be locked by the other jobs of a pg_restore -j).
 */
static bool floor_read_by_ddl = false;

/*
 * shardid_registry_relid(), looked up once (a scan of pg_extension): reset
 * when pg_proc changes, as CREATE and DROP EXTENSION change it
 */
static bool registry_known = false;
static Oid	registry_cached = InvalidOid;

static Oid
registry_relid(void)
{
	if (!registry_known)
	{
		registry_cached = shardid_registry_relid();
		registry_known = true;
	}
	return registry_cached;
}

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

/* the newest id of the columns read (freed), warning of what was not read */
static int64
newest_of(int32 shard, List *columns)
{
	int64		newest = -1;
	ListCell   *lc;

	foreach(lc, columns)
	{
		ShardidStoredColumn *col = lfirst(lc);

		if (col->beyond >= 0)
			warn_beyond(shard, col);
		if (!col->complete)
			warn_incomplete(shard, col);
		newest = Max(newest, col->newest);
	}
	list_free_deep(columns);
	return newest;
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

static void registration_lock(Oid registry, Oid nsp);
static int32 registered_shard_dirty(const char *nspname);

PG_FUNCTION_INFO_V1(shardid_registry_floor);

/*
 * shardid_internal.registry_floor(): the BEFORE INSERT OR UPDATE row trigger
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

	if (!CALLED_AS_TRIGGER(fcinfo) ||
		!TRIGGER_FIRED_BEFORE(trigdata->tg_event) ||
		!TRIGGER_FIRED_FOR_ROW(trigdata->tg_event) ||
		TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("shardid_internal.registry_floor() must be a BEFORE INSERT OR UPDATE ... FOR EACH ROW trigger")));
	rel = trigdata->tg_relation;
	if (RelationGetRelid(rel) != registry_relid())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("shardid_internal.registry_floor() is a trigger of shardid.shard_registry only")));
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

	if (!floor_read_by_ddl)
	{
		int64		newest;

		/*
		 * The tables the previous row of this statement read: that row is in
		 * place now (a BEFORE ROW trigger keeps COPY from batching rows), so
		 * a step that reads one of them finds it (see registration_turn())
		 */
		shardid_stored_let_go();
		/* registration's turn, to the end of the transaction (see registration_turn()) */
		registration_lock(RelationGetRelid(rel), nsp);
		shardid_stored_keep_locks(true);
		columns = shardid_stored_read(shard, nsp, shardid_stored_bound(shard),
									  GetUserId());
		shardid_stored_keep_locks(false);
		newest = newest_of(shard, columns);
		floor_id = Max(floor_id, newest);
	}

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

/*
 * The table whose rows an ALTER TABLE can bring in or make readable, or
 * NULL: the table of the command where a key or index is added (a
 * restore's post-data section; a CHECK or foreign key makes none), a
 * column retyped, a parent inherited, triggers enabled again
 * (pg_restore --data-only --disable-triggers ends with that); the
 * partition attached, not its new parent, whose other partitions hold
 * nothing new (reading them would scan their indexes under the lock).
 */
static RangeVar *
alter_brings_ids(AlterTableStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->cmds)
	{
		AlterTableCmd *cmd = lfirst_node(AlterTableCmd, lc);

		switch (cmd->subtype)
		{
			case AT_AddConstraint:
				if (cmd->def != NULL && IsA(cmd->def, Constraint) &&
					((Constraint *) cmd->def)->contype != CONSTR_PRIMARY &&
					((Constraint *) cmd->def)->contype != CONSTR_UNIQUE &&
					((Constraint *) cmd->def)->contype != CONSTR_EXCLUSION)
					break;
				return stmt->relation;
			case AT_AttachPartition:
				return ((PartitionCmd *) cmd->def)->name;
			case AT_AddIndex:
			case AT_AddIndexConstraint:
			case AT_AlterColumnType:
			case AT_AddInherit:
			case AT_EnableTrig:
			case AT_EnableAlwaysTrig:
			case AT_EnableReplicaTrig:
			case AT_EnableTrigAll:
			case AT_EnableTrigUser:
				return stmt->relation;
			default:
				break;
		}
	}
	return NULL;
}

/* whether an ALTER TABLE enables triggers */
static bool
enables_triggers(AlterTableStmt *stmt)
{
	ListCell   *lc;

	foreach(lc, stmt->cmds)
	{
		switch (lfirst_node(AlterTableCmd, lc)->subtype)
		{
			case AT_EnableTrig:
			case AT_EnableAlwaysTrig:
			case AT_EnableReplicaTrig:
			case AT_EnableTrigAll:
			case AT_EnableTrigUser:
				return true;
			default:
				break;
		}
	}
	return false;
}

/*
 * The tables relid inherits from, however deep (a partition's parents
 * among them), from pg_inherits: no lock taken on them
 */
static List *
ancestors_of(Oid relid)
{
	List	   *todo = list_make1_oid(relid);
	List	   *out = NIL;
	Relation	inherits = table_open(InheritsRelationId, AccessShareLock);

	while (todo != NIL)
	{
		Oid			rel = linitial_oid(todo);
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tuple;

		todo = list_delete_first(todo);
		ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(rel));
		scan = systable_beginscan(inherits, InheritsRelidSeqnoIndexId, true,
								  NULL, 1, &key);
		while (HeapTupleIsValid(tuple = systable_getnext(scan)))
		{
			Oid			parent = ((Form_pg_inherits) GETSTRUCT(tuple))->inhparent;

			if (!list_member_oid(out, parent))
			{
				out = lappend_oid(out, parent);
				todo = lappend_oid(todo, parent);
			}
		}
		systable_endscan(scan);
	}
	table_close(inherits, AccessShareLock);
	return out;
}

/* relid and the namespaces of every table it inherits from, however deep */
static pg_noinline List *
namespaces_up(Oid relid)
{
	List	   *ancestors = ancestors_of(relid);
	List	   *out = list_make1_oid(get_rel_namespace(relid));
	ListCell   *lc;

	foreach(lc, ancestors)
		out = list_append_unique_oid(out, get_rel_namespace(lfirst_oid(lc)));
	list_free(ancestors);
	return out;
}

/*
 * Registration and the floor step of a write take turns.  The registry's
 * trigger (a row registered: register_shard(), pg_restore's COPY of the
 * registry's rows) reads the shard's tables before its row exists; the step
 * after a write (an index built, a COPY, explicit ids) looks the schema up
 * in the registry, then reads the table.  Run at the same time in two
 * transactions (pg_restore -j), each could miss the other: the registry's
 * trigger reads the table before the index another job is building is
 * committed, and that job looks the schema up before the registry's row is
 * written.  So the trigger holds a lock in ExclusiveLock to the end of its
 * transaction, and the step takes it in ShareLock first: the later one of
 * the two sees what the earlier one committed.
 *
 * The lock is the schema's: an object lock on the schema's row in
 * pg_namespace with a sub-id of its own (REGISTRATION_LOCK_SUBID), which
 * nothing else takes, so that a step waits only for a registration of a
 * schema it reads for, and a registration only for steps in that schema
 * (an index built in another schema, or on a temporary table, is no
 * registration's business; a role that is no superuser could otherwise
 * hold every registration of the database with an index on a temporary
 * table of her own).  A transaction that registers more schemas than
 * REGISTRATION_SCHEMA_LOCKS (a restore of the registry's rows, raise_floor()
 * of every shard after pg_upgrade) takes one lock for the rest, the
 * registry's (its row in pg_class, the same sub-id), instead of a lock per
 * schema that could fill the lock table; every step (but on a temporary
 * table) shares that one too.
 *
 * A step whose transaction holds an AccessExclusiveLock on a table it reads
 * does not wait (the registry's trigger, which holds the lock, may be
 * waiting for that table: a deadlock): a trigger that has not read that
 * table yet can only read it after this transaction, and sees all of it.
 * One that has read it holds on to it (ACCESS SHARE) until its row is in
 * place, which the step's look-up sees (registered_shard_dirty()): the
 * tables of a row's schema stay locked until the trigger fires for the
 * next row, or the statement that writes the rows ends (floor_executor_end(),
 * floor_process_utility(); else the transaction's end), so that a
 * registration of thousands of schemas holds the locks of one schema's
 * tables at a time, and a transaction that goes on after register_shard()
 * holds none.  Without that, a key added to a table that the trigger had
 * read, while it read the schema's other tables, would be seen by neither.
 * A trigger that must wait for a table lets go of those it kept first, and
 * reads the schema again after (stored.c, read_family()): the transaction
 * it waits for may go on to alter one of the tables read.
 */
static int	schema_locks_taken = 0;
static bool schema_locks_callback = false;

static void
schema_locks_reset(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_PREPARE)
		schema_locks_taken = 0;
}

/* the registry's trigger's turn for schema nsp, to the end of the transaction */
static void
registration_lock(Oid registry, Oid nsp)
{
	LOCKTAG		tag;

	if (!schema_locks_callback)
	{
		RegisterXactCallback(schema_locks_reset, NULL);
		schema_locks_callback = true;
	}
	SET_LOCKTAG_OBJECT(tag, MyDatabaseId, NamespaceRelationId, nsp,
					   REGISTRATION_LOCK_SUBID);
#if PG_VERSION_NUM >= 170000
	if (LockHeldByMe(&tag, ExclusiveLock, false))
#else
	if (LockHeldByMe(&tag, ExclusiveLock))
#endif
		return;
	if (schema_locks_taken < REGISTRATION_SCHEMA_LOCKS)
	{
		schema_locks_taken++;
		LockDatabaseObject(NamespaceRelationId, nsp, REGISTRATION_LOCK_SUBID,
						   ExclusiveLock);
	}
	else
		LockDatabaseObject(RelationRelationId, registry, REGISTRATION_LOCK_SUBID,
						   ExclusiveLock);
}

/* whether this transaction holds an AccessExclusiveLock on relid or a table that inherits from it */
static bool
family_held_exclusive(Oid relid)
{
	List	   *family = find_all_inheritors(relid, NoLock, NULL);
	ListCell   *lc;
	bool		held = false;

	foreach(lc, family)
	{
#if PG_VERSION_NUM >= 170000
		held = CheckRelationOidLockedByMe(lfirst_oid(lc), AccessExclusiveLock, true);
#else
		LOCKTAG		tag;

		SET_LOCKTAG_RELATION(tag, MyDatabaseId, lfirst_oid(lc));
		held = LockHeldByMe(&tag, AccessExclusiveLock);
#endif
		if (held)
			break;
	}
	list_free(family);
	return held;
}

/*
 * Whether a write's step may go on without waiting for the lock another
 * session holds for these schemas: every one of them has its registry row
 * in place (seen as registered_shard_dirty() sees it), so the registration
 * read the tables before and the step's own look-up finds its row.
 */
static bool
rows_in_place(List *namespaces)
{
	ListCell   *lc;

	foreach(lc, namespaces)
	{
		char	   *nspname;

		if (isAnyTempNamespace(lfirst_oid(lc)))
			continue;
		nspname = get_namespace_name(lfirst_oid(lc));
		if (nspname == NULL || registered_shard_dirty(nspname) < 0)
			return false;
	}
	return true;
}

/*
 * Whether this transaction holds an AccessExclusiveLock on a table of schema
 * nsp or a table that inherits from one: what the registry's trigger for
 * that schema may be waiting for (it reads them all)
 */
static bool
schema_held_exclusive(Oid nsp)
{
	List	   *tables = shardid_stored_schema_tables(nsp);
	ListCell   *lc;
	bool		held = false;

	foreach(lc, tables)
	{
		held = family_held_exclusive(lfirst_oid(lc));
		if (held)
			break;
	}
	list_free(tables);
	return held;
}

/*
 * One lock of a step's turn: whether it is held.  When another session
 * holds it, a step goes on without it where waiting could close a circle:
 * its transaction holds an AccessExclusiveLock on its table (nowait), or,
 * for the lock of a schema, on any table of that schema (the registry's
 * trigger, which holds the lock, may be waiting for it); so does a write of
 * rows where the registration's row is in place (rows_of: the
 * registration's transaction may go on to wait for the write's table).
 */
static bool
turn_lock(Oid classid, Oid objid, bool nowait, List *rows_of)
{
	if (ConditionalLockDatabaseObject(classid, objid,
									  REGISTRATION_LOCK_SUBID, ShareLock))
		return true;
	if (nowait ||
		(classid == NamespaceRelationId && schema_held_exclusive(objid)) ||
		(rows_of != NIL && rows_in_place(rows_of)))
		return false;
	LockDatabaseObject(classid, objid, REGISTRATION_LOCK_SUBID, ShareLock);
	return true;
}

/*
 * The floor step's turn (see above) for table relid, whose schema and
 * ancestors' schemas are namespaces, after a write of rows (rows) or DDL:
 * the locks it holds, as (classid, objid) pairs, for
 * registration_turn_end()
 */
static pg_noinline List *
registration_turn(Oid relid, List *namespaces, bool rows)
{
	bool		nowait = family_held_exclusive(relid);
	List	   *held = NIL;
	ListCell   *lc;

	/* the schemas' first, then the registry's, as the trigger takes them */
	foreach(lc, namespaces)
	{
		Oid			nsp = lfirst_oid(lc);

		if (isAnyTempNamespace(nsp))
			continue;
		if (turn_lock(NamespaceRelationId, nsp, nowait,
					  rows ? list_make1_oid(nsp) : NIL))
			held = lappend_oid(lappend_oid(held, NamespaceRelationId), nsp);
	}
	if (get_rel_persistence(relid) != RELPERSISTENCE_TEMP &&
		turn_lock(RelationRelationId, registry_relid(), nowait,
				  rows ? namespaces : NIL))
		held = lappend_oid(lappend_oid(held, RelationRelationId), registry_relid());
	return held;
}

/* let go of the locks registration_turn() took */
static void
registration_turn_end(List *held)
{
	ListCell   *lc;

	for (lc = list_head(held); lc != NULL; lc = lnext(held, lnext(held, lc)))
		UnlockDatabaseObject(lfirst_oid(lc), lfirst_oid(lnext(held, lc)),
							 REGISTRATION_LOCK_SUBID, ShareLock);
	list_free(held);
}

/*
 * The shard registered to schema nspname, or -1, read under a dirty
 * snapshot through the registry's index on schema_name: a row that another
 * session is still inserting counts (pg_restore -j loads the registry's
 * rows in one job while another builds a shard table's index).
 */
static int32
registered_shard_dirty(const char *nspname)
{
	Relation	rel = table_open(registry_relid(), AccessShareLock);
	TupleDesc	desc = RelationGetDescr(rel);
	int			schema_att = registry_attnum(desc, "schema_name", NAMEOID);
	int			shard_att = registry_attnum(desc, "shard", INT4OID);
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *ic;
	Oid			indexid = InvalidOid;
	int32		shard = -1;

	foreach(ic, indexes)
	{
		Relation	index = index_open(lfirst_oid(ic), AccessShareLock);

		if (index->rd_index->indnatts == 1 &&
			index->rd_index->indkey.values[0] == schema_att)
			indexid = RelationGetRelid(index);
		index_close(index, AccessShareLock);
	}
	list_free(indexes);
	if (OidIsValid(indexid))
	{
		SnapshotData dirty;
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tuple;

		InitDirtySnapshot(dirty);
		ScanKeyInit(&key, schema_att, BTEqualStrategyNumber, F_NAMEEQ,
					CStringGetDatum(nspname));
		scan = systable_beginscan(rel, indexid, true, &dirty, 1, &key);
		while (HeapTupleIsValid(tuple = systable_getnext(scan)))
		{
			bool		isnull;
			Datum		d = heap_getattr(tuple, shard_att, desc, &isnull);

			if (!isnull && shardid_shard_ok(DatumGetInt32(d)))
				shard = DatumGetInt32(d);
		}
		systable_endscan(scan);
	}
	table_close(rel, AccessShareLock);
	return shard;
}

/*
 * Start shard past floor_id in strict mode, as apply_floor() does, but
 * never fail the DDL that asked: where strict mode makes no ids here (the
 * origins missing after pg_upgrade, another epoch), the id path refuses
 * until the step that applies the floors anyway.  Returns whether the
 * registry's row may take the floor (its trigger applies it, and would
 * fail there).
 */
static bool
apply_floor_quietly(int32 shard, int64 floor_id)
{
	bool		high_water;
	bool		epoch;

	shardid_shared_attach();
	if (shardid_shared_kind() == SHARDID_SHARED_NONE)
		return true;			/* session mode: the registry's row only */
	shardid_mark_origins(&high_water, &epoch);
	if (!high_water || !epoch || !shardid_epoch_matches())
		return false;
	(void) shardid_strict_raise_floor(shard, floor_id);
	return true;
}

/* what raise_for_table() reads and writes, by the moment that asks */
typedef enum RaiseHow
{
	RAISE_DDL,					/* relid and its children; a superuser's
								 * DDL writes the registry's row too */
	RAISE_COPIED,				/* relid and its children (COPY FROM) */
	RAISE_WRITTEN,				/* relid alone, which the statement wrote:
								 * its ids not covered yet */
	RAISE_TRIGGERED				/* the same, where only a BEFORE ROW trigger
								 * may have set ids: by descents, a column
								 * second in its index's key by a small skip
								 * scan, else not at all */
} RaiseHow;

/*
 * Raise the floor of every registered shard whose schema holds table relid
 * or a table it inherits from to the newest id of the shard in what is
 * read (how); written as the bootstrap superuser in a security-restricted
 * operation (see shardid_floor_after_ddl()).  After a DDL command a
 * superuser's also writes the registry's row; after a write of explicit
 * ids (the hooks at the end of this file) only the shard's state and H
 * take it, in strict mode, and nothing is read without it.
 */
static void
raise_for_table(Oid relid, RaiseHow how)
{
	List	   *namespaces;
	ListCell   *lc;
	Oid			save_userid;
	int			save_sec_context;
	bool		by_superuser = how == RAISE_DDL && superuser();
	List	   *turn;

	if (how != RAISE_DDL)
	{
		shardid_shared_attach();
		if (shardid_shared_kind() == SHARDID_SHARED_NONE)
			return;
	}
	if (!OidIsValid(registry_relid()))
		return;
	/*
	 * After DDL (an index built) to the end of the transaction, which is
	 * when the registry's trigger can see what the command made; after
	 * writes of rows only while they are read (the trigger's dirty read
	 * sees them once they are in the table's indexes)
	 */
	namespaces = namespaces_up(relid);
	turn = registration_turn(relid, namespaces, how != RAISE_DDL);
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID,
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		foreach(lc, namespaces)
		{
			char	   *nspname = get_namespace_name(lfirst_oid(lc));
			Oid			argtypes[2] = {INT4OID, INT8OID};
			Datum		args[2];
			int32		shard;
			int64		newest;

			if (nspname == NULL || (shard = registered_shard_dirty(nspname)) < 0)
				continue;
			if (how != RAISE_DDL)
				elog(DEBUG1, "shardid: reading the ids of shard %d in table %s, written with values of their own",
					 shard, table_text(relid));
			newest = newest_of(shard, how == RAISE_WRITTEN || how == RAISE_TRIGGERED ?
							   shardid_stored_read_written(relid, shard, shardid_stored_bound(shard),
														   shardid_strict_uncovered_from(shard),
														   how == RAISE_WRITTEN) :
							   shardid_stored_read_table(relid, shard, shardid_stored_bound(shard)));
			if (newest < 0)
				continue;
			if (!apply_floor_quietly(shard, newest))
				continue;

			/*
			 * The registry's row too, where a superuser's DDL (a restore)
			 * can take it at once: a table owner's open transaction must
			 * not hold the shard's row, and a row another job of pg_restore
			 * -j is still writing is not waited for.  The floor is in H
			 * already.
			 */
			if (!by_superuser)
				continue;
			args[0] = Int32GetDatum(shard);
			args[1] = Int64GetDatum(newest);
			floor_read_by_ddl = true;
			if (SPI_execute_with_args("UPDATE shardid.shard_registry r SET floor_id = $2 "
									  "WHERE r.ctid OPERATOR(pg_catalog.=) "
									  "(SELECT q.ctid FROM shardid.shard_registry q "
									  "WHERE q.shard OPERATOR(pg_catalog.=) $1 "
									  "AND (q.floor_id IS NULL OR q.floor_id OPERATOR(pg_catalog.<) $2) "
									  "FOR UPDATE SKIP LOCKED)",
									  2, argtypes, args, NULL, false, 0) != SPI_OK_UPDATE)
				elog(ERROR, "raising the floor of shard %d failed", shard);
			floor_read_by_ddl = false;
		}
		SPI_finish();
	}
	PG_FINALLY();
	{
		floor_read_by_ddl = false;
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	PG_END_TRY();
	if (how != RAISE_DDL)
		registration_turn_end(turn);
}

/*
 * Raise the floor of the shard registered to schema nspname (NULL: of every
 * registered shard) to what its schema's tables hold (the registry's own
 * trigger reads them), as the bootstrap superuser in a security-restricted
 * operation.  For a schema renamed to a registered name (a schema filled
 * elsewhere swapped in), and when the registry's triggers are enabled
 * again: pg_restore --data-only --disable-triggers restores the registry's
 * rows with them disabled (the carried floors were never applied, and the
 * tables restored before the registry, whose triggers were enabled again
 * before it had rows, never read).
 */
static void
raise_registered(const char *nspname)
{
	Oid			save_userid;
	int			save_sec_context;

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID,
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		Oid			argtypes[1] = {TEXTOID};
		Datum		args[1];

		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		args[0] = CStringGetTextDatum(nspname != NULL ? nspname : "");
		if (SPI_execute_with_args("UPDATE shardid.shard_registry r SET floor_id = r.floor_id "
								  "WHERE $1 OPERATOR(pg_catalog.=) '' "
								  "OR r.schema_name::pg_catalog.text OPERATOR(pg_catalog.=) $1",
								  1, argtypes, args, NULL, false, 0) != SPI_OK_UPDATE)
			elog(ERROR, "raising the floors of the registered shards failed");
		SPI_finish();
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	PG_END_TRY();
}

/*
 * The tables a subscription writes, read when a DROP or ALTER SUBSCRIPTION
 * starts (shardid_floor_before_ddl()) and raised when it ends: a
 * subscription that copied or applied rows into a registered shard's
 * tables (a migration by logical replication) gives no other moment, and
 * DROP SUBSCRIPTION stops its workers before it ends.
 */
static List *subscription_tables = NIL;

PG_FUNCTION_INFO_V1(shardid_floor_before_ddl);

/*
 * shardid_internal.floor_before_ddl(): the event trigger shardid_floor_subscription
 * at the start of every DROP SUBSCRIPTION and ALTER SUBSCRIPTION: remembers
 * the tables of the subscription (pg_subscription_rel) for the end of the
 * command.
 */
Datum
shardid_floor_before_ddl(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	const char *volatile subname = NULL;
	Oid			argtypes[1] = {TEXTOID};
	Datum		args[1];
	MemoryContext old;
	Oid			save_userid;
	int			save_sec_context;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("shardid_internal.floor_before_ddl() must be an event trigger on ddl_command_start")));
	trigdata = (EventTriggerData *) fcinfo->context;
	list_free(subscription_tables);
	subscription_tables = NIL;
	if (IsA(trigdata->parsetree, DropSubscriptionStmt))
		subname = ((DropSubscriptionStmt *) trigdata->parsetree)->subname;
	else if (IsA(trigdata->parsetree, AlterSubscriptionStmt))
		subname = ((AlterSubscriptionStmt *) trigdata->parsetree)->subname;
	if (subname == NULL || !OidIsValid(registry_relid()))
		PG_RETURN_VOID();

	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(BOOTSTRAP_SUPERUSERID,
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	PG_TRY();
	{
		if (SPI_connect() != SPI_OK_CONNECT)
			elog(ERROR, "SPI_connect failed");
		args[0] = CStringGetTextDatum(subname);
		if (SPI_execute_with_args("SELECT r.srrelid FROM pg_catalog.pg_subscription_rel r "
								  "JOIN pg_catalog.pg_subscription s ON s.oid OPERATOR(pg_catalog.=) r.srsubid "
								  "WHERE s.subname::pg_catalog.text OPERATOR(pg_catalog.=) $1 "
								  "AND s.subdbid OPERATOR(pg_catalog.=) "
								  "(SELECT d.oid FROM pg_catalog.pg_database d "
								  "WHERE d.datname OPERATOR(pg_catalog.=) pg_catalog.current_database())",
								  1, argtypes, args, NULL, true, 0) != SPI_OK_SELECT)
			elog(ERROR, "reading pg_subscription_rel failed");
		old = MemoryContextSwitchTo(TopMemoryContext);
		for (uint64 i = 0; i < SPI_processed; i++)
		{
			bool		isnull;
			Datum		d = SPI_getbinval(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1, &isnull);

			if (!isnull)
				subscription_tables = lappend_oid(subscription_tables, DatumGetObjectId(d));
		}
		MemoryContextSwitchTo(old);
		SPI_finish();
	}
	PG_FINALLY();
	{
		SetUserIdAndSecContext(save_userid, save_sec_context);
	}
	PG_END_TRY();
	PG_RETURN_VOID();
}

PG_FUNCTION_INFO_V1(shardid_floor_after_ddl);

/*
 * shardid_internal.floor_after_ddl(): the event trigger shardid_floor at the end of
 * every CREATE INDEX and ALTER TABLE.  Where the command made a key or index
 * of a table (or brought rows in: a partition attached, triggers enabled
 * again, the table moved by SET SCHEMA) whose schema, or the schema of a
 * table it inherits from, holds a registered shard, it reads that table's
 * newest ids of the shard and raises the shard's floor to them.
 *
 * That is the moment a restore gives: pg_dump writes the rows before the
 * indexes, so a whole-database restore (the registry's rows restored before
 * the shard tables have indexes, or rows), a schema restored into a schema
 * already registered (pg_restore -n, --clean), pg_restore -j, a plain dump
 * through psql, and a data-only restore with --disable-triggers (which
 * enables them again at its end) all raise the floors by themselves.  The
 * floor is written as the bootstrap superuser in a security-restricted
 * operation: the role that made the index may be any table owner, and
 * what is written is only what was read (bounded, as at a registration).
 * Only the table of the command is read, since pg_restore -j builds the
 * indexes of the schema's other tables at the same time in other sessions
 * (reading them would wait for their locks, and they for ours).
 *
 * At the end of a DROP SUBSCRIPTION or ALTER SUBSCRIPTION it reads the
 * tables the subscription wrote (remembered at its start): a migration by
 * logical replication raises the floors when its subscription is dropped.
 * When the registry's own triggers are enabled again (a data-only restore
 * with --disable-triggers restored its rows without them), it raises
 * every registered shard's floor; when a schema is renamed to the name of a
 * registered shard's schema, that shard's.
 */
Datum
shardid_floor_after_ddl(PG_FUNCTION_ARGS)
{
	EventTriggerData *trigdata;
	RangeVar   *rv = NULL;
	Oid			relid;
	char		kind;

	if (!CALLED_AS_EVENT_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_OBJECT_DEFINITION),
				 errmsg("shardid_internal.floor_after_ddl() must be an event trigger on ddl_command_end")));
	trigdata = (EventTriggerData *) fcinfo->context;
	if (IsBinaryUpgrade)
		PG_RETURN_VOID();		/* pg_upgrade: tables without their files */
	if (IsA(trigdata->parsetree, DropSubscriptionStmt) ||
		IsA(trigdata->parsetree, AlterSubscriptionStmt))
	{
		List	   *tables = subscription_tables;
		ListCell   *lc;

		subscription_tables = NIL;
		foreach(lc, tables)
		{
			relid = lfirst_oid(lc);
			kind = get_rel_relkind(relid);
			if (kind == RELKIND_RELATION || kind == RELKIND_PARTITIONED_TABLE)
				raise_for_table(relid, RAISE_DDL);
		}
		list_free(tables);
		PG_RETURN_VOID();
	}
	if (IsA(trigdata->parsetree, IndexStmt))
		rv = ((IndexStmt *) trigdata->parsetree)->relation;
	else if (IsA(trigdata->parsetree, AlterTableStmt))
		rv = alter_brings_ids((AlterTableStmt *) trigdata->parsetree);
	else if (IsA(trigdata->parsetree, RenameStmt))
	{
		RenameStmt *stmt = (RenameStmt *) trigdata->parsetree;

		if (stmt->renameType == OBJECT_SCHEMA &&
			OidIsValid(registry_relid()))
			raise_registered(stmt->newname);
		PG_RETURN_VOID();
	}
	else if (IsA(trigdata->parsetree, AlterObjectSchemaStmt))
	{
		/* ALTER TABLE ... SET SCHEMA: the table, now in its new schema */
		AlterObjectSchemaStmt *stmt = (AlterObjectSchemaStmt *) trigdata->parsetree;

		if ((stmt->objectType == OBJECT_TABLE ||
			 stmt->objectType == OBJECT_MATVIEW) && stmt->relation != NULL)
			rv = makeRangeVar(stmt->newschema, stmt->relation->relname, -1);
	}
	if (rv == NULL)
		PG_RETURN_VOID();
	/* the command holds its lock on the table */
	relid = RangeVarGetRelid(rv, NoLock, true);
	if (!OidIsValid(relid))
		PG_RETURN_VOID();
	kind = get_rel_relkind(relid);
	if (kind != RELKIND_RELATION && kind != RELKIND_PARTITIONED_TABLE &&
		kind != RELKIND_MATVIEW)
		PG_RETURN_VOID();
	if (!OidIsValid(registry_relid()))
		PG_RETURN_VOID();

	if (relid == registry_relid())
	{
		/* its triggers enabled again (no key of the registry is a shard's) */
		if (IsA(trigdata->parsetree, AlterTableStmt) &&
			enables_triggers((AlterTableStmt *) trigdata->parsetree))
			raise_registered(NULL);
		PG_RETURN_VOID();
	}
	raise_for_table(relid, RAISE_DDL);
	PG_RETURN_VOID();
}

/* ---------------------------------------------------------------------
 * Writes of explicit ids
 *
 * COPY FROM, INSERT, UPDATE and MERGE that write a column whose DEFAULT
 * (its own, or its domain's) calls next_id() with values of their own (a
 * data-only restore into the existing tables, \copy, an application that
 * carries ids over) raise the shard's floor at their end, as a restore's
 * index build does: the floor step reads that table.  Hooks, so that only
 * sessions that load the library have them: every session where shardid is
 * in shared_preload_libraries.  A statement whose ids all come from the
 * DEFAULT, by far the most common, costs a look at its plan: the values of
 * the id column are the next_id() call the rewriter put there.
 * ---------------------------------------------------------------------
 */

static ExecutorStart_hook_type prev_executor_start = NULL;
static ExecutorEnd_hook_type prev_executor_end = NULL;
static ProcessUtility_hook_type prev_process_utility = NULL;

/* shardid.next_id(integer) and next_id(integer, bigint) here, or invalid */
static bool next_id_known = false;
static Oid	next_id_oids[2];
static Oid	own_trigger_oids[2];	/* shardid.set_id(), shardid.move_guard() */
static char next_id_patterns[2][32];

/* a statement that wrote explicit ids: its tables, read at its end */
typedef struct PendingWrite
{
	EState	   *estate;
	List	   *relids;			/* written with values of their own */
	List	   *triggered;		/* where only a trigger may have set ids */
} PendingWrite;

static List *pending_writes = NIL;

/* the id columns of a table (id_default_columns()), by its oid */
typedef struct IdColumns
{
	Oid			relid;
	Bitmapset  *cols;			/* in CacheMemoryContext; NULL: none */
	Bitmapset  *shards;			/* the constant shards of their DEFAULTs */
} IdColumns;

static HTAB *id_columns_cache = NULL;

/* shardid_id_columns_forgotten()'s function, or NULL */
static ShardidIdColumnsForgotten id_columns_forgotten = NULL;

static void
id_columns_forget_all(void)
{
	HASH_SEQ_STATUS status;
	IdColumns  *entry;

	if (id_columns_cache == NULL)
		return;
	hash_seq_init(&status, id_columns_cache);
	while ((entry = hash_seq_search(&status)) != NULL)
	{
		bms_free(entry->cols);
		bms_free(entry->shards);
		(void) hash_search(id_columns_cache, &entry->relid, HASH_REMOVE, NULL);
	}
}

/*
 * A table's definition changed (its DEFAULTs among others): its entry goes.
 * A parent's new DEFAULT reaches its partitions and children with their own
 * invalidations (ALTER TABLE recurses, ATTACH PARTITION and INHERIT name
 * the child); only ALTER TABLE ONLY on the parent leaves a child's entry
 * as it was, until the next invalidation of that child.  Not all entries:
 * temporary tables made and dropped by the second would empty the cache of
 * every backend as often.
 */
static void
id_columns_forget(Datum arg, Oid relid)
{
	IdColumns  *entry;

	if (id_columns_forgotten != NULL)
		id_columns_forgotten(relid);
	if (id_columns_cache == NULL)
		return;
	if (!OidIsValid(relid))
	{
		id_columns_forget_all();
		return;
	}
	entry = hash_search(id_columns_cache, &relid, HASH_FIND, NULL);
	if (entry != NULL)
	{
		bms_free(entry->cols);
		bms_free(entry->shards);
		(void) hash_search(id_columns_cache, &relid, HASH_REMOVE, NULL);
	}
}

/*
 * pg_proc changed (CREATE or DROP EXTENSION among others): look next_id()
 * up again; pg_type changed (a domain's DEFAULT): the columns too
 */
static void
next_id_forget(Datum arg, int cacheid, uint32 hashvalue)
{
	if (cacheid == PROCOID)
	{
		next_id_known = false;
		registry_known = false;
	}
	if (id_columns_forgotten != NULL)
		id_columns_forgotten(InvalidOid);
	id_columns_forget_all();
}

/* whether this database has shardid's next_id() */
static bool
next_id_present(void)
{
	if (!next_id_known)
	{
		Oid			argtypes[2] = {INT4OID, INT8OID};
		int			i;

		for (i = 0; i < 2; i++)
		{
			next_id_oids[i] = InvalidOid;
			if (OidIsValid(get_namespace_oid("shardid", true)))
				next_id_oids[i] = LookupFuncName(list_make2(makeString("shardid"),
															makeString("next_id")),
												 i + 1, argtypes, true);
			own_trigger_oids[i] = InvalidOid;
			if (OidIsValid(get_namespace_oid("shardid", true)))
				own_trigger_oids[i] = LookupFuncName(list_make2(makeString("shardid"),
																makeString(i == 0 ? "set_id" : "move_guard")),
													 0, NULL, true);
			/* how a stored DEFAULT (nodeToString()) names the call */
			snprintf(next_id_patterns[i], sizeof(next_id_patterns[i]),
					 ":funcid %u ", next_id_oids[i]);
		}
		next_id_known = true;
	}
	return OidIsValid(next_id_oids[0]) || OidIsValid(next_id_oids[1]);
}

static bool
calls_next_id(const char *stored)
{
	return (OidIsValid(next_id_oids[0]) && strstr(stored, next_id_patterns[0]) != NULL) ||
		(OidIsValid(next_id_oids[1]) && strstr(stored, next_id_patterns[1]) != NULL);
}

/*
 * shards with the shard of stored, a DEFAULT that calls next_id(), added
 * when it is a plain call with a constant shard (catalog.c reads the tree)
 */
static Bitmapset *
add_default_shard(Bitmapset *shards, const char *stored)
{
	int32		shard;

	if (shardid_default_shard(stringToNode(stored), next_id_oids[1], next_id_oids[0], &shard))
		shards = bms_add_member(shards, shard);
	return shards;
}

/*
 * The columns of rel, without a DEFAULT of their own, whose column of the
 * same name in a table rel inherits from has a DEFAULT that calls
 * next_id(): a partition attached from a table made without the DEFAULT
 * (a write into the partition itself gives its ids), a child of ALTER
 * TABLE ... INHERIT.  From pg_attrdef, locking no ancestor.
 */
static Bitmapset *
inherited_id_columns(Relation rel, Bitmapset *cols, Bitmapset **shards)
{
	List	   *ancestors;
	ListCell   *lc;
	Relation	attrdef;

	if (!rel->rd_rel->relispartition && !has_superclass(RelationGetRelid(rel)))
		return cols;
	ancestors = ancestors_of(RelationGetRelid(rel));
	attrdef = table_open(AttrDefaultRelationId, AccessShareLock);
	foreach(lc, ancestors)
	{
		ScanKeyData key;
		SysScanDesc scan;
		HeapTuple	tuple;

		ScanKeyInit(&key, Anum_pg_attrdef_adrelid, BTEqualStrategyNumber,
					F_OIDEQ, ObjectIdGetDatum(lfirst_oid(lc)));
		scan = systable_beginscan(attrdef, AttrDefaultIndexId, true, NULL, 1, &key);
		while (HeapTupleIsValid(tuple = systable_getnext(scan)))
		{
			Form_pg_attrdef def = (Form_pg_attrdef) GETSTRUCT(tuple);
			bool		isnull;
			Datum		bin = heap_getattr(tuple, Anum_pg_attrdef_adbin,
										   RelationGetDescr(attrdef), &isnull);
			char	   *name;
			AttrNumber	attnum;

			if (isnull || !calls_next_id(TextDatumGetCString(bin)))
				continue;
			name = get_attname(lfirst_oid(lc), def->adnum, true);
			attnum = name != NULL ? get_attnum(RelationGetRelid(rel), name) : InvalidAttrNumber;
			if (attnum > 0 && !TupleDescAttr(RelationGetDescr(rel), attnum - 1)->atthasdef)
			{
				cols = bms_add_member(cols, attnum);
				*shards = add_default_shard(*shards, TextDatumGetCString(bin));
			}
		}
		systable_endscan(scan);
	}
	table_close(attrdef, AccessShareLock);
	list_free(ancestors);
	return cols;
}

/*
 * The columns of rel whose DEFAULT calls next_id(): the column's own, or
 * else its domain's (domains are types of their own, never built in), or
 * else that of a table it inherits from (inherited_id_columns()).  Into
 * *shards the shards of those DEFAULTs that name a constant one.
 */
static Bitmapset *
id_default_columns(Relation rel, Bitmapset **shards)
{
	TupleDesc	desc = RelationGetDescr(rel);
	Bitmapset  *cols = NULL;
	int			i;

	if (desc->constr != NULL)
		for (i = 0; i < desc->constr->num_defval; i++)
			if (calls_next_id(desc->constr->defval[i].adbin))
			{
				cols = bms_add_member(cols, desc->constr->defval[i].adnum);
				*shards = add_default_shard(*shards, desc->constr->defval[i].adbin);
			}
	for (i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		Oid			type = att->atttypid;

		if (att->attisdropped || att->atthasdef || type < FirstNormalObjectId)
			continue;
		while (OidIsValid(type))
		{
			HeapTuple	tuple = SearchSysCache1(TYPEOID, ObjectIdGetDatum(type));
			Form_pg_type typ;
			bool		isnull;
			Datum		bin;

			if (!HeapTupleIsValid(tuple))
				break;
			typ = (Form_pg_type) GETSTRUCT(tuple);
			type = InvalidOid;
			if (typ->typtype == TYPTYPE_DOMAIN)
			{
				bin = SysCacheGetAttr(TYPEOID, tuple, Anum_pg_type_typdefaultbin, &isnull);
				if (!isnull)
				{
					char	   *stored = TextDatumGetCString(bin);

					if (calls_next_id(stored))
					{
						cols = bms_add_member(cols, att->attnum);
						*shards = add_default_shard(*shards, stored);
					}
				}
				else
					type = typ->typbasetype;	/* the base domain's default */
			}
			ReleaseSysCache(tuple);
		}
	}
	return inherited_id_columns(rel, cols, shards);
}

/* the cache's entry of rel (id_default_columns()), made when missing */
static IdColumns *
id_columns_entry(Relation rel)
{
	Oid			relid = RelationGetRelid(rel);
	IdColumns  *entry;
	bool		found;

	if (id_columns_cache == NULL)
	{
		HASHCTL		ctl;

		ctl.keysize = sizeof(Oid);
		ctl.entrysize = sizeof(IdColumns);
		ctl.hcxt = CacheMemoryContext;
		id_columns_cache = hash_create("shardid id columns", 64, &ctl,
									   HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	entry = hash_search(id_columns_cache, &relid, HASH_FIND, NULL);
	if (entry == NULL)
	{
		Bitmapset  *shards = NULL;
		Bitmapset  *cols = id_default_columns(rel, &shards);
		MemoryContext old = MemoryContextSwitchTo(CacheMemoryContext);

		entry = hash_search(id_columns_cache, &relid, HASH_ENTER, &found);
		entry->cols = bms_copy(cols);
		entry->shards = bms_copy(shards);
		MemoryContextSwitchTo(old);
		bms_free(cols);
		bms_free(shards);
	}
	return entry;
}

/* id_default_columns(rel), from the cache; NULL: none */
static Bitmapset *
id_columns_of(Relation rel)
{
	/* a copy: an invalidation may free the cache's own at any lock taken */
	return bms_copy(id_columns_entry(rel)->cols);
}

/*
 * Whether the value of expr, an id written with a value of its own, is
 * known before the write (a constant, or a parameter of the statement) and
 * new ids of its shard sort after it already: an id this server made (the
 * shard's state is at or past it), or one whose millisecond is over.  Such
 * a write needs no read of its table.
 */
static bool
value_covered(Node *expr, ParamListInfo params)
{
	Datum		value;
	bool		isnull;
	int64		id;

	while (expr != NULL && IsA(expr, RelabelType))
		expr = (Node *) ((RelabelType *) expr)->arg;
	if (expr == NULL)
		return false;
	if (IsA(expr, Const) && ((Const *) expr)->consttype == INT8OID)
	{
		value = ((Const *) expr)->constvalue;
		isnull = ((Const *) expr)->constisnull;
	}
	else if (IsA(expr, Param) && ((Param *) expr)->paramkind == PARAM_EXTERN &&
			 ((Param *) expr)->paramtype == INT8OID && params != NULL &&
			 ((Param *) expr)->paramid > 0 && ((Param *) expr)->paramid <= params->numParams)
	{
		ParamExternData workspace;
		ParamExternData *prm;

		if (params->paramFetch != NULL)
			prm = params->paramFetch(params, ((Param *) expr)->paramid, false, &workspace);
		else
			prm = &params->params[((Param *) expr)->paramid - 1];
		if (prm == NULL || prm->ptype != INT8OID)
			return false;
		value = prm->value;
		isnull = prm->isnull;
	}
	else
		return false;
	if (isnull)
		return true;
	id = DatumGetInt64(value);
	if (id < 0)
		return true;			/* no id at all: the floor step skips it */
	return shardid_strict_covers(shardid_unpack_shard(id), id);
}

/*
 * Whether expr, a value of an id column in the plan below a ModifyTable, is
 * the next_id() call of the DEFAULT: the call itself (coerced to a domain),
 * or a column of a VALUES list whose every row has it.
 */
static bool
made_by_next_id(Node *expr, Plan *plan, ParamListInfo params)
{
	while (expr != NULL)
	{
		if (IsA(expr, RelabelType))
			expr = (Node *) ((RelabelType *) expr)->arg;
		else if (IsA(expr, CoerceToDomain))
			expr = (Node *) ((CoerceToDomain *) expr)->arg;
		else
			break;
	}
	if (expr == NULL)
		return false;
	if (IsA(expr, FuncExpr) &&
		(((FuncExpr *) expr)->funcid == next_id_oids[0] ||
		 ((FuncExpr *) expr)->funcid == next_id_oids[1]))
		return true;
	if (value_covered(expr, params))
		return true;
	if (IsA(expr, Var) && plan != NULL)
	{
		Var		   *var = (Var *) expr;

		if (var->varno == OUTER_VAR && outerPlan(plan) != NULL)
		{
			TargetEntry *tle = get_tle_by_resno(outerPlan(plan)->targetlist, var->varattno);

			return tle != NULL && made_by_next_id((Node *) tle->expr, outerPlan(plan), params);
		}
		if (IsA(plan, ValuesScan) &&
			(Index) var->varno == ((ValuesScan *) plan)->scan.scanrelid)
		{
			ListCell   *lc;

			foreach(lc, ((ValuesScan *) plan)->values_lists)
			{
				List	   *row = lfirst(lc);

				if (var->varattno < 1 || var->varattno > list_length(row) ||
					!made_by_next_id(list_nth(row, var->varattno - 1), NULL, params))
					return false;
			}
			return true;
		}
	}
	return false;
}

/*
 * Whether a BEFORE ROW trigger of rel that the statement fires may give the
 * id a value of its own (NEW.id := ...): any but shardid's own (set_id()
 * makes its ids by next_id(), move_guard() refuses the write).  A table
 * with such a trigger is read after each write of its rows, at the cost
 * of descents: a column second in its index's key (PRIMARY KEY (tenant_id,
 * id)) by a skip scan of at most a few dozen descents (about 15 tenants),
 * a column past that, or later in its key, not at all (src/stored.c).
 */
static bool
trigger_may_set_ids(Relation rel, CmdType operation, OnConflictAction on_conflict)
{
	TriggerDesc *td = rel->trigdesc;
	bool		inserts = operation == CMD_INSERT || operation == CMD_MERGE;
	bool		updates = operation == CMD_UPDATE || operation == CMD_MERGE ||
		on_conflict == ONCONFLICT_UPDATE;
	int			i;

	if (td == NULL ||
		!((inserts && td->trig_insert_before_row) || (updates && td->trig_update_before_row)))
		return false;
	for (i = 0; i < td->numtriggers; i++)
	{
		Trigger    *t = &td->triggers[i];

		if (!TRIGGER_FOR_ROW(t->tgtype) || !TRIGGER_FOR_BEFORE(t->tgtype) ||
			t->tgenabled == TRIGGER_DISABLED ||
			t->tgfoid == own_trigger_oids[0] || t->tgfoid == own_trigger_oids[1])
			continue;
		if ((inserts && TRIGGER_FOR_INSERT(t->tgtype)) ||
			(updates && TRIGGER_FOR_UPDATE(t->tgtype)))
			return true;
	}
	return false;
}

/* whether a MERGE's INSERT actions give an id column a value of their own */
static bool
merge_inserts_ids(ModifyTable *mt, int rel_index, Bitmapset *cols, ParamListInfo params)
{
	ListCell   *lc;

	if (mt->mergeActionLists == NIL || rel_index >= list_length(mt->mergeActionLists))
		return false;
	foreach(lc, (List *) list_nth(mt->mergeActionLists, rel_index))
	{
		MergeAction *action = lfirst_node(MergeAction, lc);
		ListCell   *tc;

		if (action->commandType != CMD_INSERT)
			continue;
		foreach(tc, action->targetList)
		{
			TargetEntry *tle = lfirst_node(TargetEntry, tc);

			if (bms_is_member(tle->resno, cols) &&
				!made_by_next_id((Node *) tle->expr, NULL, params))
				return true;
		}
	}
	return false;
}

/*
 * The tables a ModifyTable writes ids of their own into, added to relids:
 * values that are not the DEFAULT's next_id() call, nor known to sort
 * before the shard's new ids already (value_covered()).
 */
static List *
explicit_writes(ModifyTableState *mts, EState *estate, ParamListInfo params,
				List *relids, List **triggered)
{
	ModifyTable *mt = (ModifyTable *) mts->ps.plan;
	int			i;

	for (i = 0; i < mts->mt_nrels; i++)
	{
		ResultRelInfo *rri = &mts->resultRelInfo[i];
		Relation	rel = rri->ri_RelationDesc;
		Bitmapset  *cols;
		bool		explicit = false;

		if (rel->rd_rel->relkind != RELKIND_RELATION &&
			rel->rd_rel->relkind != RELKIND_PARTITIONED_TABLE)
			continue;
		cols = id_columns_of(rel);
		if (cols == NULL)
			continue;
		/* UPDATE, ON CONFLICT DO UPDATE and MERGE's UPDATE SET id = ... */
		if (mt->operation != CMD_INSERT || mt->onConflictAction == ONCONFLICT_UPDATE)
		{
			Bitmapset  *updated = ExecGetUpdatedCols(rri, estate);
			int			col = -1;

			while (!explicit && (col = bms_next_member(cols, col)) >= 0)
				explicit = bms_is_member(col - FirstLowInvalidHeapAttributeNumber, updated);
		}
		if (!explicit && mt->operation == CMD_INSERT && outerPlan(mt) != NULL)
		{
			ListCell   *lc;

			foreach(lc, outerPlan(mt)->targetlist)
			{
				TargetEntry *tle = lfirst_node(TargetEntry, lc);

				if (!tle->resjunk && bms_is_member(tle->resno, cols) &&
					!made_by_next_id((Node *) tle->expr, outerPlan(mt), params))
				{
					explicit = true;
					break;
				}
			}
		}
		if (!explicit && mt->operation == CMD_MERGE)
			explicit = merge_inserts_ids(mt, i, cols, params);
		if (explicit)
			relids = list_append_unique_oid(relids, RelationGetRelid(rel));
		else if (trigger_may_set_ids(rel, mt->operation, mt->onConflictAction))
			*triggered = list_append_unique_oid(*triggered, RelationGetRelid(rel));
		bms_free(cols);
	}
	return relids;
}

/* the executor state of a pending write went (its end, or an error) */
static void
forget_pending(void *arg)
{
	pending_writes = list_delete_ptr(pending_writes, arg);
}

static void
floor_executor_start(QueryDesc *queryDesc, int eflags)
{
	List	   *relids = NIL;
	List	   *triggered = NIL;
	ListCell   *lc;
	MemoryContext old;

	if (prev_executor_start)
		prev_executor_start(queryDesc, eflags);
	else
		standard_ExecutorStart(queryDesc, eflags);

	if ((queryDesc->operation == CMD_SELECT && !queryDesc->plannedstmt->hasModifyingCTE) ||
		queryDesc->operation == CMD_UTILITY ||
		(eflags & EXEC_FLAG_EXPLAIN_ONLY) || IsParallelWorker())
		return;
	/* floors are strict mode's */
	shardid_shared_attach();
	if (shardid_shared_kind() == SHARDID_SHARED_NONE || !next_id_present())
		return;
	old = MemoryContextSwitchTo(queryDesc->estate->es_query_cxt);
	if (queryDesc->planstate != NULL && IsA(queryDesc->planstate, ModifyTableState))
		relids = explicit_writes((ModifyTableState *) queryDesc->planstate,
								 queryDesc->estate, queryDesc->params, relids, &triggered);
	foreach(lc, queryDesc->estate->es_auxmodifytables)
		relids = explicit_writes(lfirst_node(ModifyTableState, lc),
								 queryDesc->estate, queryDesc->params, relids, &triggered);
	if (relids != NIL || triggered != NIL)
	{
		PendingWrite *write = palloc(sizeof(PendingWrite));
		MemoryContextCallback *cb = palloc(sizeof(MemoryContextCallback));

		write->estate = queryDesc->estate;
		write->relids = relids;
		write->triggered = triggered;
		cb->func = forget_pending;
		cb->arg = write;
		MemoryContextRegisterResetCallback(queryDesc->estate->es_query_cxt, cb);
		MemoryContextSwitchTo(TopMemoryContext);
		pending_writes = lappend(pending_writes, write);
	}
	MemoryContextSwitchTo(old);
}

static void
floor_executor_end(QueryDesc *queryDesc)
{
	ListCell   *lc;
	bool		registry_written = false;

	/*
	 * A statement that wrote the registry's rows has them in place now: the
	 * tables its trigger kept locked (shardid_stored_keep_locks()) need not
	 * wait for the next row or the transaction's end (a transaction that
	 * goes on after register_shard(), a prepared one).  Another statement's
	 * end (registry_guard's queries, run between a row's triggers) lets go
	 * of nothing.
	 */
	if (shardid_stored_kept())
		foreach(lc, queryDesc->estate->es_opened_result_relations)
			if (RelationGetRelid(((ResultRelInfo *) lfirst(lc))->ri_RelationDesc) ==
				registry_relid())
				registry_written = true;

	foreach(lc, pending_writes)
	{
		PendingWrite *write = lfirst(lc);
		ListCell   *rc;

		List	   *read = NIL;

		if (write->estate != queryDesc->estate)
			continue;

		/*
		 * The tables written: a partitioned table's rows went to the
		 * partitions its statement routed them to (an UPDATE's too, where
		 * rows moved), which are read alone, not the partitions it never
		 * touched (another session may hold their locks)
		 */
		foreach(rc, write->relids)
			if (get_rel_relkind(lfirst_oid(rc)) != RELKIND_PARTITIONED_TABLE)
				read = list_append_unique_oid(read, lfirst_oid(rc));
		foreach(rc, queryDesc->estate->es_tuple_routing_result_relations)
		{
			Relation	leaf = ((ResultRelInfo *) lfirst(rc))->ri_RelationDesc;

			if (leaf->rd_rel->relkind == RELKIND_RELATION)
				read = list_append_unique_oid(read, RelationGetRelid(leaf));
		}
		foreach(rc, read)
			raise_for_table(lfirst_oid(rc), RAISE_WRITTEN);
		foreach(rc, write->triggered)
			if (!list_member_oid(read, lfirst_oid(rc)) &&
				get_rel_relkind(lfirst_oid(rc)) == RELKIND_RELATION)
				raise_for_table(lfirst_oid(rc), RAISE_TRIGGERED);
		list_free(read);
		break;
	}
	if (prev_executor_end)
		prev_executor_end(queryDesc);
	else
		standard_ExecutorEnd(queryDesc);
	if (registry_written)
		shardid_stored_let_go();
}

/* COPY FROM into a table, with its id column among the columns copied */
static void
floor_process_utility(PlannedStmt *pstmt, const char *queryString,
					  bool readOnlyTree, ProcessUtilityContext context,
					  ParamListInfo params, QueryEnvironment *queryEnv,
					  DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	CopyStmt   *copy;
	Oid			relid;
	Relation	rel;
	Bitmapset  *cols;
	bool		explicit = false;

	if (prev_process_utility)
		prev_process_utility(pstmt, queryString, readOnlyTree, context,
							 params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	if (!IsA(parsetree, CopyStmt))
		return;
	copy = (CopyStmt *) parsetree;
	if (!copy->is_from || copy->relation == NULL)
		return;
	/* a COPY of the registry's rows has them all in place: see above */
	if (shardid_stored_kept() &&
		RangeVarGetRelid(copy->relation, NoLock, true) == registry_relid())
		shardid_stored_let_go();
	if (IsBinaryUpgrade)
		return;
	shardid_shared_attach();
	if (shardid_shared_kind() == SHARDID_SHARED_NONE || !next_id_present())
		return;
	/* COPY holds its lock on the table until the transaction ends */
	relid = RangeVarGetRelid(copy->relation, NoLock, true);
	if (!OidIsValid(relid))
		return;
	rel = relation_open(relid, NoLock);
	cols = NULL;
	if (rel->rd_rel->relkind == RELKIND_RELATION ||
		rel->rd_rel->relkind == RELKIND_PARTITIONED_TABLE)
		cols = id_columns_of(rel);
	if (cols != NULL && copy->attlist == NIL)
		explicit = true;		/* every column copied */
	else if (cols != NULL)
	{
		ListCell   *lc;

		foreach(lc, copy->attlist)
		{
			AttrNumber	attnum = attnameAttNum(rel, strVal(lfirst(lc)), false);

			if (attnum > 0 && bms_is_member(attnum, cols))
				explicit = true;
		}
	}
	relation_close(rel, NoLock);
	/*
	 * every id column, a later key column's too (a scan of its index, once
	 * per COPY), and the partitions a partitioned table's COPY routed rows
	 * to, which are not known here
	 */
	if (explicit)
		raise_for_table(relid, RAISE_COPIED);
}

/*
 * For src/citus.c, which refuses next_id() on the tables of Citus's
 * row-based model with the same detector and cache: whether this database
 * has next_id(), whether funcid is one of its two, and a table's id
 * columns (id_columns_of(): a copy, NULL when none).
 */
bool
shardid_next_id_present(void)
{
	return next_id_present();
}

bool
shardid_is_next_id(Oid funcid)
{
	return OidIsValid(funcid) &&
		(funcid == next_id_oids[0] || funcid == next_id_oids[1]);
}

Bitmapset *
shardid_id_columns(Relation rel)
{
	return id_columns_of(rel);
}

/*
 * For src/feed.c, which refuses ids of the shards an enabled subscription
 * feeds: the shards whose next_id() the DEFAULTs of rel's id columns call
 * with a constant shard (a copy, NULL when none).  The caller has called
 * shardid_next_id_present().
 */
Bitmapset *
shardid_id_shards(Relation rel)
{
	return bms_copy(id_columns_entry(rel)->shards);
}

void
shardid_id_columns_forgotten(ShardidIdColumnsForgotten fn)
{
	id_columns_forgotten = fn;
}

PG_FUNCTION_INFO_V1(shardid_load_library);

/*
 * shardid_internal.load_library(), which the login event trigger
 * shardid_load calls (PostgreSQL 17+).  Without preloading, a session loads
 * shardid only when it first calls one of its functions, and the writes of
 * explicit ids it makes before (a data-only pg_restore, a COPY) would pass
 * unseen by the hooks above.  Calling this function loaded the library,
 * whose _PG_init() installed them: that is all it does.
 */
Datum
shardid_load_library(PG_FUNCTION_ARGS)
{
	PG_RETURN_VOID();
}

/* from _PG_init(): the hooks of the writes of explicit ids */
void
shardid_floor_hooks_init(void)
{
	prev_executor_start = ExecutorStart_hook;
	ExecutorStart_hook = floor_executor_start;
	prev_executor_end = ExecutorEnd_hook;
	ExecutorEnd_hook = floor_executor_end;
	prev_process_utility = ProcessUtility_hook;
	ProcessUtility_hook = floor_process_utility;
	CacheRegisterSyscacheCallback(PROCOID, next_id_forget, (Datum) 0);
	CacheRegisterSyscacheCallback(TYPEOID, next_id_forget, (Datum) 0);
	CacheRegisterRelcacheCallback(id_columns_forget, (Datum) 0);
}
