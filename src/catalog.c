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
 * walks it and reports the first call of one of the given next_id()
 * functions: its shard argument when that is a constant, and the sequence
 * when its seq argument is nextval() of a constant regclass.  Nothing in the
 * expression is evaluated.
 *
 * Also max_shard(), the shard limit for SQL code.
 *
 * src/catalog.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "nodes/nodeFuncs.h"
#include "nodes/primnodes.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"

#include "shardid_core.h"

typedef struct DefaultCallSearch
{
	Oid			next_id_seq;	/* next_id(integer, bigint) */
	Oid			next_id_counter;	/* next_id(integer) */
	FuncExpr   *call;			/* first call found, or NULL */
} DefaultCallSearch;

static bool
find_next_id_call(Node *node, DefaultCallSearch *search)
{
	if (node == NULL)
		return false;
	if (IsA(node, FuncExpr))
	{
		FuncExpr   *f = (FuncExpr *) node;

		if (f->funcid == search->next_id_seq ||
			f->funcid == search->next_id_counter)
		{
			search->call = f;
			return true;
		}
	}
	return expression_tree_walker(node, find_next_id_call, (void *) search);
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
 * default_call(expr pg_node_tree, next_id_seq regprocedure,
 *				next_id_counter regprocedure,
 *				OUT calls_next_id boolean, OUT counter boolean,
 *				OUT shard integer, OUT sequence regclass)
 *
 * counter tells the one-argument form; shard is NULL unless the shard
 * argument is a non-null integer constant; sequence is NULL unless the seq
 * argument is nextval() of a constant regclass.
 */
PG_FUNCTION_INFO_V1(shardid_default_call);
Datum
shardid_default_call(PG_FUNCTION_ARGS)
{
	char	   *tree = text_to_cstring(PG_GETARG_TEXT_PP(0));
	DefaultCallSearch search;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, true, true};
	int32		shard;
	Oid			seqid;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	tupdesc = BlessTupleDesc(tupdesc);

	search.next_id_seq = PG_GETARG_OID(1);
	search.next_id_counter = PG_GETARG_OID(2);
	search.call = NULL;
	(void) find_next_id_call(stringToNode(tree), &search);

	values[0] = BoolGetDatum(search.call != NULL);
	values[1] = BoolGetDatum(search.call != NULL &&
							 search.call->funcid == search.next_id_counter);
	if (search.call != NULL)
	{
		List	   *args = search.call->args;

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
 * max_shard(): the largest shard number of the layout, so that SQL code
 * takes the limit from the same constant as the C code.
 */
PG_FUNCTION_INFO_V1(shardid_max_shard);
Datum
shardid_max_shard(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SHARDID_MAX_SHARD);
}
