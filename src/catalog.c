/*-------------------------------------------------------------------------
 *
 * catalog.c
 *	  Reading the shard catalog structurally: which next_id() call a stored
 *	  column DEFAULT makes, with which constant shard and which sequence.
 *
 * The views and functions that describe the logical shards of a database
 * (shardid.id_defaults, shardid.doctor()) must not be fooled by object
 * names, so they do not parse the deparsed text of a DEFAULT.  They hand
 * the stored expression tree (pg_attrdef.adbin) to default_call(), which
 * tells whether the expression is a plain call of one of the given next_id()
 * functions, its shard argument when that is a constant, and the sequence
 * when its seq argument is nextval() of a constant regclass.  Nothing in the
 * expression is evaluated.
 *
 * rows_of_other_shards() counts the rows of a table whose id carries another
 * shard, for doctor(), leaving out the legacy ids of a table that
 * shardid.convert_table() converted (below its boundary in
 * shardid.legacy_ids, a table of shardid's own: reading it runs no code of
 * the table's owner).  It reads the table with a plain table scan, not
 * through a query: planning a query over a table evaluates expressions its
 * owner chose (index predicates and expressions, extended statistics), and
 * the doctor must run no code of other roles, whoever calls it.
 *
 * default_text() shows a stored DEFAULT as text for the catalog views, but
 * never waits for a lock: deparsing locks the table, and another session
 * may hold it (its temporary table, a long ALTER TABLE).
 *
 * take_extension() gives extension shardid to the superuser who updates it:
 * the owner of an install of the trusted 1.0 or 1.1 could drop it with
 * CASCADE, and with it every object of other roles that uses its functions.
 *
 * src/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/relation.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xlog.h"
#include "catalog/pg_class.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/tuptable.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/rls.h"
#include "utils/snapmgr.h"

#include "catalog.h"
#include "compat.h"
#include "convert.h"
#include "shardid_core.h"

/* the plain next_id() call an expression is, or NULL */
static FuncExpr *
next_id_call(Node *node, Oid next_id_seq, Oid next_id_counter)
{
	FuncExpr   *f;

	if (node == NULL || !IsA(node, FuncExpr))
		return NULL;
	f = (FuncExpr *) node;
	if (f->funcid != next_id_seq && f->funcid != next_id_counter)
		return NULL;
	return f;
}

/* a non-null integer constant's value */
static bool
const_int4(Node *node, int32 *value)
{
	Const	   *c;

	if (node == NULL || !IsA(node, Const))
		return false;
	c = (Const *) node;
	if (c->constisnull || c->consttype != INT4OID)
		return false;
	*value = DatumGetInt32(c->constvalue);
	return true;
}

/* the sequence of nextval('name'::regclass), a constant regclass */
static bool
nextval_sequence(Node *node, Oid *seqid)
{
	FuncExpr   *f;
	Const	   *c;

	if (node == NULL || !IsA(node, FuncExpr))
		return false;
	f = (FuncExpr *) node;
	if (f->funcid != F_NEXTVAL || list_length(f->args) != 1)
		return false;
	c = (Const *) linitial(f->args);
	if (!IsA(c, Const) || c->constisnull || c->consttype != REGCLASSOID)
		return false;
	*seqid = DatumGetObjectId(c->constvalue);
	return true;
}

/*
 * The shard of a stored DEFAULT expr (stringToNode() of pg_attrdef.adbin or
 * pg_type.typdefaultbin) that is a plain call of either next_id() function
 * with a constant shard in range: for the floor module's per-table cache
 * (floor.c), which the refusal of shards a subscription feeds reads.
 */
bool
shardid_default_shard(Node *expr, Oid next_id_seq, Oid next_id_counter, int32 *shard)
{
	FuncExpr   *call = next_id_call(expr, next_id_seq, next_id_counter);

	return call != NULL && list_length(call->args) >= 1 &&
		const_int4(linitial(call->args), shard) && shardid_shard_ok(*shard);
}

/*
 * default_call(expr pg_node_tree, next_id_seq regprocedure,
 *				next_id_counter regprocedure,
 *				OUT calls_next_id boolean, OUT counter boolean,
 *				OUT shard integer, OUT sequence regclass)
 *
 * calls_next_id is true when the whole expression is one call of either
 * next_id() function (a call inside another expression is not: what it
 * makes of the id is not known); counter tells the one-argument form; shard
 * is NULL unless the shard argument is a non-null integer constant;
 * sequence is NULL unless the seq argument is nextval() of a constant
 * regclass.
 */
PG_FUNCTION_INFO_V1(shardid_default_call);
Datum
shardid_default_call(PG_FUNCTION_ARGS)
{
	char	   *tree = text_to_cstring(PG_GETARG_TEXT_PP(0));
	Oid			next_id_seq = PG_GETARG_OID(1);
	Oid			next_id_counter = PG_GETARG_OID(2);
	FuncExpr   *call;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, true, true};
	int32		shard;
	Oid			seqid;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	call = next_id_call(stringToNode(tree), next_id_seq, next_id_counter);
	values[0] = BoolGetDatum(call != NULL);
	values[1] = BoolGetDatum(call != NULL && call->funcid == next_id_counter);
	if (call != NULL)
	{
		List	   *args = call->args;

		if (list_length(args) >= 1 && const_int4(linitial(args), &shard))
		{
			values[2] = Int32GetDatum(shard);
			nulls[2] = false;
		}
		if (list_length(args) == 2 && nextval_sequence(lsecond(args), &seqid))
		{
			values[3] = ObjectIdGetDatum(seqid);
			nulls[3] = false;
		}
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * default_text(expr pg_node_tree, tab oid) RETURNS text
 *
 * pg_get_expr(expr, tab), or NULL at once when tab is locked by another
 * session so that reading its column names would wait.  tab 0: an
 * expression of no table (a domain's DEFAULT).
 */
PG_FUNCTION_INFO_V1(shardid_default_text);
Datum
shardid_default_text(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(1);
	LOCAL_FCINFO(expr_fcinfo, 2);
	Datum		result;

	if (OidIsValid(relid) && !ConditionalLockRelationOid(relid, AccessShareLock))
		PG_RETURN_NULL();
	/* pg_get_expr() answers NULL for a table that is gone */
	InitFunctionCallInfoData(*expr_fcinfo, NULL, 2, InvalidOid, NULL, NULL);
	expr_fcinfo->args[0].value = PG_GETARG_DATUM(0);
	expr_fcinfo->args[0].isnull = false;
	expr_fcinfo->args[1].value = ObjectIdGetDatum(relid);
	expr_fcinfo->args[1].isnull = false;
	result = pg_get_expr(expr_fcinfo);
	if (OidIsValid(relid))
		UnlockRelationOid(relid, AccessShareLock);
	if (expr_fcinfo->isnull)
		PG_RETURN_NULL();
	PG_RETURN_DATUM(result);
}

/*
 * take_extension() RETURNS void
 *
 * Make the current user, a superuser, the owner of extension shardid.  Only
 * shardid's own install or update script may call it (they create, call and
 * drop it), so that it is no tool for anything else.
 */
PG_FUNCTION_INFO_V1(shardid_take_extension);
Datum
shardid_take_extension(PG_FUNCTION_ARGS)
{
	Oid			extoid = get_extension_oid("shardid", false);

	if (!creating_extension || CurrentExtensionObject != extoid || !superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("only the install and update scripts of shardid may take it over")));
	shardid_alter_object_owner(ExtensionRelationId, extoid, GetUserId());
	PG_RETURN_VOID();
}

/*
 * rows_of_other_shards(tab regclass, id_column name, shard integer)
 *		RETURNS bigint
 *
 * The rows of a plain table whose id column (bigint, or a domain over
 * bigint) holds an id of another shard than the given one, NULL ids not
 * counted, nor the legacy ids of a converted table (below its boundary in
 * shardid.legacy_ids).  The caller needs SELECT on the table or the column, and row-level security must not apply
 * to it: the table is read as it is, with no policy, no query and no plan.
 * A table locked by another session is not waited for.
 */
PG_FUNCTION_INFO_V1(shardid_rows_of_other_shards);
Datum
shardid_rows_of_other_shards(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	char	   *column = NameStr(*PG_GETARG_NAME(1));
	int32		shard = PG_GETARG_INT32(2);
	Relation	rel;
	AttrNumber	attnum;
	AclResult	aclresult;
	TableScanDesc scan;
	TupleTableSlot *slot;
	int64		count = 0;
	int64		legacy_below = PG_INT64_MIN;

	if (!ConditionalLockRelationOid(relid, AccessShareLock))
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("table with OID %u is locked by another session", relid)));
	rel = try_relation_open(relid, NoLock);
	if (rel == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_TABLE),
				 errmsg("table with OID %u does not exist", relid)));
	if (rel->rd_rel->relkind != RELKIND_RELATION)
		ereport(ERROR,
				(errcode(ERRCODE_WRONG_OBJECT_TYPE),
				 errmsg("\"%s\" is not a table", RelationGetRelationName(rel))));
	if (RELATION_IS_OTHER_TEMP(rel))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("cannot read temporary tables of other sessions")));
	if (RecoveryInProgress() &&
		rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("cannot read unlogged table \"%s\" during recovery",
						RelationGetRelationName(rel))));

	attnum = get_attnum(relid, column);
	if (attnum <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_COLUMN),
				 errmsg("column \"%s\" of table \"%s\" does not exist",
						column, RelationGetRelationName(rel))));
	if (getBaseType(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->atttypid) != INT8OID)
		ereport(ERROR,
				(errcode(ERRCODE_DATATYPE_MISMATCH),
				 errmsg("column \"%s\" of table \"%s\" is not of type bigint",
						column, RelationGetRelationName(rel))));

	aclresult = pg_class_aclcheck(relid, GetUserId(), ACL_SELECT);
	if (aclresult != ACLCHECK_OK)
		aclresult = pg_attribute_aclcheck(relid, attnum, GetUserId(), ACL_SELECT);
	if (aclresult != ACLCHECK_OK)
		aclcheck_error(aclresult, get_relkind_objtype(rel->rd_rel->relkind),
					   RelationGetRelationName(rel));
	if (check_enable_rls(relid, InvalidOid, true) == RLS_ENABLED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("row-level security applies to table \"%s\" for role \"%s\"",
						RelationGetRelationName(rel), GetUserNameFromId(GetUserId(), false))));

	if (!shardid_legacy_below(relid, &legacy_below))
		legacy_below = PG_INT64_MIN;

	scan = table_beginscan(rel, GetActiveSnapshot(), 0, NULL);
	slot = table_slot_create(rel, NULL);
	while (table_scan_getnextslot(scan, ForwardScanDirection, slot))
	{
		bool		isnull;
		Datum		id = slot_getattr(slot, attnum, &isnull);

		if (!isnull && DatumGetInt64(id) >= legacy_below &&
			shardid_unpack_shard(DatumGetInt64(id)) != shard)
			count++;
		CHECK_FOR_INTERRUPTS();
	}
	ExecDropSingleTupleTableSlot(slot);
	table_endscan(scan);
	/* the lock is kept until the end of the (sub)transaction */
	relation_close(rel, NoLock);
	PG_RETURN_INT64(count);
}
