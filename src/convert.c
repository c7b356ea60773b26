/*-------------------------------------------------------------------------
 *
 * convert.c
 *	  The legacy ids of converted tables: recording where they end, and
 *	  reading it back.
 *
 * shardid.convert_table() switches an existing table's serial, bigserial,
 * identity or integer id column to shardid ids.  The ids the table holds
 * stay as they are, and all of them lie below a boundary recorded in
 * shardid.legacy_ids: routing (id_schema(), id_is_legacy()) and the doctor
 * (rows_of_other_shards()) tell them from shardid's ids by it.
 *
 * record_legacy_ids() is the only writer of that table that is not a
 * superuser.  convert_table() is SECURITY INVOKER (it runs the owner's
 * ALTER TABLE as the owner), so the write needs rights the caller does not
 * have: this function checks that the caller owns the table and computes
 * the boundary itself, from a plain scan of the column (no query, no plan,
 * no code of the table's owner) and the sequence's last value, before it
 * writes the row as the owner of shardid.legacy_ids.  Whoever calls it
 * directly can record no more than convert_table() would.  It also widens
 * an integer or smallint column, the one step that runs the owner's code
 * (CHECKs, index expressions): as the owner, security-restricted.
 *
 * src/convert.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "clock.h"
#include "compat.h"
#include "convert.h"
#include "settings.h"
#include "shardid_core.h"

/* the owner of a relation (a superuser for shardid's own tables) */
static Oid
relation_owner(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			owner;

	if (!HeapTupleIsValid(tuple))
		elog(ERROR, "cache lookup failed for relation %u", relid);
	owner = ((Form_pg_class) GETSTRUCT(tuple))->relowner;
	ReleaseSysCache(tuple);
	return owner;
}

/* shardid.legacy_ids, or InvalidOid before 1.3's SQL is installed */
static Oid
legacy_ids_relid(void)
{
	Oid			nsp = get_namespace_oid("shardid", true);

	return OidIsValid(nsp) ? get_relname_relid("legacy_ids", nsp) : InvalidOid;
}

/*
 * The boundary recorded for table relid: every id below it is a legacy id.
 * False when the table was not converted (or 1.3's SQL is not installed).
 * By the table alone (its primary key): a table is converted once, and its
 * column may have been renamed since (the doctor took every legacy id for
 * another shard's then).  Reads shardid.legacy_ids, a table of shardid's
 * own, as the caller (PUBLIC may read it).
 */
bool
shardid_legacy_below(Oid relid, int64 *below)
{
	Oid			argtypes[1] = {OIDOID};
	Datum		args[1];
	bool		found = false;

	if (!OidIsValid(legacy_ids_relid()))
		return false;
	args[0] = ObjectIdGetDatum(relid);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("SELECT l.legacy_below FROM shardid.legacy_ids l "
							  "WHERE l.tab::pg_catalog.oid OPERATOR(pg_catalog.=) $1",
							  1, argtypes, args, NULL, true, 1) != SPI_OK_SELECT)
		elog(ERROR, "reading shardid.legacy_ids failed");
	if (SPI_processed == 1)
	{
		bool		isnull;
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
		{
			*below = DatumGetInt64(d);
			found = true;
		}
	}
	SPI_finish();
	return found;
}

/* legacy ids lie below the first id of the epoch's second day */
#define LEGACY_LIMIT shardid_min_for_millis(INT64CONST(86400000))

/*
 * Whether role may register shards (as check_registry_writer() says):
 * a superuser, a member of the database's owner, or a role granted INSERT
 * on shardid.shard_registry.
 */
static bool
may_register(Oid role)
{
	HeapTuple	tuple;
	Oid			owner = InvalidOid;
	Oid			registry = get_relname_relid("shard_registry",
											 get_namespace_oid("shardid", false));

	if (superuser_arg(role))
		return true;
	tuple = SearchSysCache1(DATABASEOID, ObjectIdGetDatum(MyDatabaseId));
	if (HeapTupleIsValid(tuple))
	{
		owner = ((Form_pg_database) GETSTRUCT(tuple))->datdba;
		ReleaseSysCache(tuple);
	}
	return (OidIsValid(owner) && has_privs_of_role(role, owner)) ||
		(OidIsValid(registry) &&
		 pg_class_aclcheck(registry, role, ACL_INSERT) == ACLCHECK_OK);
}

/* the largest non-NULL value of a bigint column, by a plain table scan */
static bool
column_max(Relation rel, AttrNumber attnum, int64 *max)
{
	TableScanDesc scan;
	TupleTableSlot *slot;
	Snapshot	snapshot;
	bool		any = false;

	/*
	 * The latest snapshot, taken under the ACCESS EXCLUSIVE lock: every
	 * row committed before the lock counts, also under REPEATABLE READ,
	 * whose transaction snapshot may be older than the lock.
	 */
	snapshot = RegisterSnapshot(GetLatestSnapshot());
	scan = table_beginscan(rel, snapshot, 0, NULL);
	slot = table_slot_create(rel, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		isnull;
		Datum		d = slot_getattr(slot, attnum, &isnull);

		if (!isnull && (!any || DatumGetInt64(d) > *max))
		{
			*max = DatumGetInt64(d);
			any = true;
		}
		CHECK_FOR_INTERRUPTS();
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	UnregisterSnapshot(snapshot);
	return any;
}

/*
 * Widen column of table relid (locked ACCESS EXCLUSIVE) to bigint, as the
 * table's owner in a security-restricted operation, as REINDEX and REFRESH
 * MATERIALIZED VIEW run an owner's code.  The rewrite evaluates the owner's
 * CHECK constraints and index expressions: under SET ROLE (or SET SESSION
 * AUTHORIZATION) of a superuser's session, such code could otherwise RESET
 * ROLE and go on as the superuser.  Settings her code changes end with the
 * widening.
 */
static void
widen_as_owner(Oid relid, const char *column)
{
	StringInfoData sql;
	Oid			save_userid;
	int			save_sec_context;
	int			nest_level;

	initStringInfo(&sql);
	appendStringInfo(&sql, "ALTER TABLE %s ALTER COLUMN %s TYPE pg_catalog.int8",
					 quote_qualified_identifier(get_namespace_name(get_rel_namespace(relid)),
												get_rel_name(relid)),
					 quote_identifier(column));
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(relation_owner(relid),
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	nest_level = NewGUCNestLevel();
	(void) set_config_option("search_path", "pg_catalog, pg_temp",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE,
							 true, 0, false);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute(sql.data, false, 0) != SPI_OK_UTILITY)
		elog(ERROR, "widening column \"%s\" failed", column);
	SPI_finish();
	AtEOXact_GUC(false, nest_level);
	SetUserIdAndSecContext(save_userid, save_sec_context);
	pfree(sql.data);
}

/*
 * record_legacy_ids(tab regclass, id_column name, shard integer,
 *					 sequence_last bigint) RETURNS bigint
 *
 * Records that every id of tab's id_column below the returned boundary is
 * a legacy id: one more than the largest of the column's ids, the
 * sequence's last value (sequence_last; the smallest bigint for none) and
 * 0.  The caller must own the table (or be a superuser); the table is
 * locked ACCESS EXCLUSIVE until the end of the transaction, so that no
 * insert comes between the boundary and the new DEFAULT.  Refused when the
 * table was converted already, and when the ids reach the ids shardid makes
 * now (see convert_table() in src/sql/shardid.sql for why).
 */
PG_FUNCTION_INFO_V1(shardid_record_legacy_ids);
Datum
shardid_record_legacy_ids(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *column = NameStr(*PG_GETARG_NAME(1));
	int32		shard = PG_GETARG_INT32(2);
	int64		sequence_last = PG_GETARG_INT64(3);
	Oid			legacy_relid = legacy_ids_relid();
	Relation	rel;
	AttrNumber	attnum;
	Oid			atttypid;
	int64		below;
	int64		largest = 0;
	int64		column_largest;
	int64		now_ms;
	int64		min_now;
	Oid			save_userid;
	int			save_sec_context;
	Oid			argtypes[6] = {OIDOID, TEXTOID, INT4OID, INT8OID, TEXTOID, BOOLOID};
	Datum		args[6];
	char	   *relname;

	if (!OidIsValid(legacy_relid))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shardid.legacy_ids does not exist"),
				 errhint("Run ALTER EXTENSION shardid UPDATE.")));
	shardid_check_shard(shard);

	/* ownership first: no lock is taken on another role's table */
	if (!shardid_table_ownercheck(relid, GetUserId()))
	{
		char	   *name = get_rel_name(relid);

		if (name == NULL)
			ereport(ERROR,
					(errcode(ERRCODE_UNDEFINED_TABLE),
					 errmsg("table with OID %u does not exist", relid)));
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table \"%s\"", name)));
	}
	LockRelationOid(relid, AccessExclusiveLock);
	rel = try_relation_open(relid, NoLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table with OID %u does not exist", relid)));
	relname = RelationGetRelationName(rel);
	if (!shardid_table_ownercheck(relid, GetUserId()))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("must be owner of table \"%s\"", relname)));
	if (rel->rd_rel->relkind != RELKIND_RELATION ||
		rel->rd_rel->relpersistence == RELPERSISTENCE_TEMP)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a permanent table", relname)));
	attnum = get_attnum(relid, column);
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of table \"%s\" does not exist",
						column, relname)));
	atttypid = TupleDescAttr(RelationGetDescr(rel), attnum - 1)->atttypid;
	if ((atttypid == INT2OID || atttypid == INT4OID) &&
		!shardid_legacy_below(relid, &below))
	{
		relation_close(rel, NoLock);
		widen_as_owner(relid, column);
		/* the lock is held throughout */
		rel = relation_open(relid, NoLock);
		relname = RelationGetRelationName(rel);
		attnum = get_attnum(relid, column);
		atttypid = attnum > 0 ?
			TupleDescAttr(RelationGetDescr(rel), attnum - 1)->atttypid : InvalidOid;
	}
	if (atttypid != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of table \"%s\" is not of type bigint, integer or smallint",
						column, relname)));
	if (shardid_legacy_below(relid, &below))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("table \"%s\" is already converted to shardid ids", relname),
				 errdetail("Its ids below %lld are legacy ids.", (long long) below)));

	if (column_max(rel, attnum, &column_largest) && column_largest > largest)
		largest = column_largest;
	if (sequence_last > largest)
		largest = sequence_last;

	/* every id shardid makes from now on is at least min_now */
	now_ms = shardid_timestamptz_to_unix_ms(GetCurrentTransactionStartTimestamp());
	shardid_check_moment(now_ms, shardid_epoch_ms, "timestamp", true);
	min_now = shardid_min_for_millis(now_ms - shardid_epoch_ms);
	/*
	 * Legacy ids lie below the ids of the epoch's first day: a boundary
	 * counts for every id of the database (routing), so one planted row
	 * near the ids of now (an INSERT-only role's, a setval()) must not make
	 * the ids shardid made so far pass for legacy ones.  A serial's ids
	 * (up to 7.2 x 10^14 here) fit.
	 */
	if (largest >= LEGACY_LIMIT && largest < min_now)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("the ids of table \"%s\" reach the ids shardid made", relname),
				 errdetail("Its largest id (or its sequence's last value) is %lld, at or above %lld, the first id of the epoch's second day: legacy ids must lie below it, or they would hide ids shardid made.",
						   (long long) largest, (long long) LEGACY_LIMIT),
				 errhint("Look at the rows above it first (a row any role that may insert could have written); such a table keeps its own ids. If they are ids shardid made for shard %d, the table needs only their DEFAULT: ALTER TABLE %s ALTER COLUMN %s SET DEFAULT shardid.next_id(%d);",
						 shard, quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)), relname),
						 quote_identifier(column), shard)));
	if (largest >= min_now)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("the ids of table \"%s\" reach the shardid ids of now", relname),
				 errdetail("Its largest id (or its sequence's last value) is %lld; the ids made now start at %lld (shardid.min_id(now())): new ids would not all sort after the old ones, and old ids would pass for other shards' ids.",
						   (long long) largest, (long long) min_now),
				 errhint("Such a table keeps its own ids; shardid can only convert tables whose ids lie below the ids of now. If they are ids shardid made for shard %d, the table needs only their DEFAULT: ALTER TABLE %s ALTER COLUMN %s SET DEFAULT shardid.next_id(%d);",
						 shard, quote_qualified_identifier(get_namespace_name(RelationGetNamespace(rel)), relname),
						 quote_identifier(column), shard)));
	below = largest + 1;

	/* the row, written as the owner of shardid.legacy_ids */
	args[0] = ObjectIdGetDatum(relid);
	args[1] = CStringGetTextDatum(column);
	args[2] = Int32GetDatum(shard);
	args[3] = Int64GetDatum(below);
	args[4] = CStringGetTextDatum(GetUserNameFromId(GetUserId(), false));
	/* whether routing counts it: decided now, by who converts */
	args[5] = BoolGetDatum(may_register(GetUserId()));
	GetUserIdAndSecContext(&save_userid, &save_sec_context);
	SetUserIdAndSecContext(relation_owner(legacy_relid),
						   save_sec_context | SECURITY_LOCAL_USERID_CHANGE |
						   SECURITY_RESTRICTED_OPERATION);
	if (SPI_connect() != SPI_OK_CONNECT)
		elog(ERROR, "SPI_connect failed");
	if (SPI_execute_with_args("INSERT INTO shardid.legacy_ids "
							  "(tab, id_column, shard, legacy_below, converted_by, trusted) "
							  "VALUES ($1::pg_catalog.regclass, $2::pg_catalog.name, $3, $4, $5::pg_catalog.name, $6)",
							  6, argtypes, args, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "writing shardid.legacy_ids failed");
	SPI_finish();
	SetUserIdAndSecContext(save_userid, save_sec_context);

	relation_close(rel, NoLock);
	PG_RETURN_INT64(below);
}
