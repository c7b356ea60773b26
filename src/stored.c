/*-------------------------------------------------------------------------
 *
 * stored.c
 *	  The newest ids of a shard stored in the tables of this database, read
 *	  at the explicit moments that raise the shard's floor.
 *
 * Ids arrive without this server making them: a restore (pg_dump of a
 * shard's schema), pg_upgrade (which does not carry the high-water mark), a
 * schema moved here by shardid-move, rows given explicit ids.  The id path
 * never reads them: at the moments where data arrives, a privileged step
 * reads the newest id of the shard over every column that can hold its ids
 * and raises the shard's floor (shard_registry.floor_id, the trigger
 * registry_set_floor below: registering a shard, create_shards() adopting a
 * schema, shardid.raise_floor() after a restore, shardid-move's cutover).
 * Raising the floor starts the shard past it and raises the durable mark H
 * past it (shared.c), so no id this server makes afterwards, after a crash
 * or on a promoted standby, sorts below it.
 *
 * Which columns hold ids: derived from keys.  Every column of bigint (or a
 * domain over bigint) that is a key column, at any position, of a valid
 * btree index without a predicate of a table of the shard's schema, and of
 * every table that inherits from one (partitions attached from anywhere,
 * however deep), is read; an id column needs a primary key or such an
 * index anyway.  Registration refuses a column with a next_id() DEFAULT
 * that cannot be read, and doctor() names it.
 *
 * How, where the column leads the index: one backward descent of the index for the largest entry at or below
 * the bound, under a dirty snapshot (rows of transactions in progress
 * count, rows of aborted transactions and rows deleted for good do not:
 * their dead entries are stepped over).  Entries of other shards are
 * skipped by descending again to the shard's last id of that millisecond
 * (or of the one before), so rows of other shards on top of the index cost
 * one descent per millisecond they hold, never a scan.  Nothing another
 * role chose is evaluated: no query is planned, no cast, operator or
 * function of a table's owner is called; the tables and indexes are found
 * in the catalogs.  Locks are waited for, as any reader of the table does
 * (a privileged step, never the id path: lock_timeout and a cancel end it),
 * and let go as soon as a table is read, so that one transaction may read
 * thousands of shards.  Where it is the second key column (PRIMARY KEY
 * (tenant_id, id)), a skip scan: the same descents within each value of
 * the leading column, found by descents too (newest_by_skipping()), and
 * where there are so many values that a scan of the index's tuples is
 * cheaper, or the column comes later still, that scan (newest_by_scan()).
 *
 * The bound: an id is followed only as far as the clock allows anyway,
 * shardid.max_lead_ms ahead plus the window and margin by which H runs
 * ahead of an id.  Anyone who may insert a row stores an id, so one further
 * ahead is reported (doctor(), a WARNING) and never followed, and it never
 * hides the newest id within the bound.
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
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/dependency.h"
#include "catalog/indexing.h"
#include "catalog/namespace.h"
#include "catalog/pg_am.h"
#include "catalog/pg_class.h"
#include "catalog/pg_depend.h"
#include "catalog/pg_index.h"
#include "catalog/pg_inherits.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_opfamily.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "commands/trigger.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"
#include "utils/rel.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "compat.h"
#include "clock.h"
#include "mark.h"
#include "settings.h"
#include "shared.h"
#include "stored.h"

PG_FUNCTION_INFO_V1(shardid_registry_changed);

/*
 * shardid.registry_changed(): the AFTER row trigger of release 1.2 on
 * shardid.shard_registry, which made every backend read the shards' stored
 * ids again.  The id path reads none from 1.3 on and the trigger is
 * dropped; the function stays for the scripts of 1.2, which create it.
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
 * The largest id of shard that strict mode follows now (shared.c,
 * shardid_follow_limit_ms()), or -1 when that moment is before the epoch.
 */
int64
shardid_stored_bound(int32 shard)
{
	int64		millis = shardid_follow_limit_ms() - shardid_epoch_ms;

	if (millis < 0)
		return -1;
	if (millis >= SHARDID_SIGN_MILLIS)
		millis = SHARDID_SIGN_MILLIS - 1;	/* ids with the sign bit are not read */
	return shardid_pack(millis, shard, SHARDID_SEQ_MASK);
}

/*
 * The key position (0-based) of column attnum in index when the index can
 * be read for it: a valid btree index without a predicate in which the
 * column itself (not an expression of it) is a key column of int8_ops, at
 * any position; -1 otherwise.  Other key columns may be expressions: the
 * column's own value is read from the index tuple.
 */
static int
id_key_position(Relation index, AttrNumber attnum)
{
	Form_pg_index form = index->rd_index;
	int			k;

	if (!form->indisvalid || index->rd_rel->relam != BTREE_AM_OID ||
		!heap_attisnull(index->rd_indextuple, Anum_pg_index_indpred, NULL))
		return -1;
	for (k = 0; k < IndexRelationGetNumberOfKeyAttributes(index); k++)
		if (form->indkey.values[k] == attnum &&
			index->rd_opfamily[k] == INTEGER_BTREE_FAM_OID &&
			index->rd_opcintype[k] == INT8OID)
			return k;
	return -1;
}

/*
 * The largest id of shard in the index that is at most hi, or -1.  Under a
 * dirty snapshot: the rows of transactions in progress count (they may
 * commit), those of aborted transactions do not, nor rows deleted for good;
 * their entries are stepped over.  An entry of another shard sends the scan
 * down again, to the shard's last id of that millisecond or of the one
 * before: one descent per millisecond of other shards' rows, at most
 * STORED_MAX_DESCENTS (then *complete is cleared: rows of other shards,
 * which any role that may insert can write, keep the shard's newest id
 * from being read, and the caller says so).  Only entries at or above lo
 * are read.
 */
/* descents of one index read before it gives up (each about a microsecond) */
#define STORED_MAX_DESCENTS 100000

/*
 * The descents of newest_in_index() through scan (three keys: the leading
 * column's, then the id column's two), among the entries whose leading
 * column satisfies lead when the id column is the second key column (lead
 * NULL when it is the first), counting them in *descents; past max,
 * *complete is cleared.
 */
static int64
newest_descending(Relation index, IndexScanDesc scan, TupleTableSlot *slot,
				  ScanKey lead, int32 shard, int64 hi, int64 lo,
				  int *descents, int max, bool *complete)
{
	int			keypos = lead == NULL ? 0 : 1;
	ScanKeyData keys[3];
	ScanDirection dir = (index->rd_indoption[keypos] & INDOPTION_DESC) ?
		ForwardScanDirection : BackwardScanDirection;
	int64		found = -1;
	int64		key = hi;

	while (key >= lo)
	{
		int64		next = -1;

		CHECK_FOR_INTERRUPTS();
		if (++*descents > max)
		{
			*complete = false;
			break;
		}
		if (lead != NULL)
			keys[0] = *lead;
		ScanKeyInit(&keys[keypos], keypos + 1, BTLessEqualStrategyNumber,
					F_INT8LE, Int64GetDatum(key));
		ScanKeyInit(&keys[keypos + 1], keypos + 1, BTGreaterEqualStrategyNumber,
					F_INT8GE, Int64GetDatum(lo));
		index_rescan(scan, keys, keypos + 2, NULL, 0);
		while (index_getnext_tid(scan, dir) != NULL)
		{
			bool		isnull;
			int64		v = DatumGetInt64(index_getattr(scan->xs_itup, keypos + 1,
														scan->xs_itupdesc,
														&isnull));
			int64		millis = shardid_unpack_millis(v);
			int32		other = shardid_unpack_shard(v);

			if (isnull || v < 0)
				continue;
			if (other == shard)
			{
				if (index_fetch_heap(scan, slot))
				{
					found = v;
					break;
				}
				CHECK_FOR_INTERRUPTS();
				continue;		/* a dead entry: the next one down */
			}
			/* another shard's id: the shard's last id at or below it */
			if (other > shard)
				next = shardid_pack(millis, shard, SHARDID_SEQ_MASK);
			else if (millis > 0)
				next = shardid_pack(millis - 1, shard, SHARDID_SEQ_MASK);
			break;
		}
		if (found >= 0)
			break;
		key = next;
	}
	return found;
}

static int64
newest_in_index(Relation heap, Relation index, int32 shard, int64 hi, int64 lo,
				bool *complete)
{
	int			descents = 0;
	IndexScanDesc scan;
	SnapshotData dirty;
	TupleTableSlot *slot;
	int64		found;

	*complete = true;
	InitDirtySnapshot(dirty);
	slot = table_slot_create(heap, NULL);
	scan = shardid_index_beginscan(heap, index, &dirty, 2);
	scan->xs_want_itup = true;
	found = newest_descending(index, scan, slot, NULL, shard, hi, lo,
							  &descents, STORED_MAX_DESCENTS, complete);
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return found;
}

/*
 * The same for a column that is the second key column of the index
 * (PRIMARY KEY (tenant_id, id)), by a skip scan: the distinct values of
 * the leading column are found by descents, from the largest down (the
 * largest value below the one before, in the leading column's order,
 * whether ASC or DESC, NULLS FIRST or LAST), and within each value's
 * entries, and among the entries whose leading column is NULL, the id
 * column is read by the descents of newest_in_index() (only ids above the
 * newest found so far).  O(T log n) for T values of the leading column,
 * under the same dirty snapshot.  The leading column is compared with its
 * operator class's own operators (get_opfamily_member(), as the planner's
 * index quals are; operator classes are made by superusers) under the
 * index's collation.  Past max descents, or where the operator family has
 * no such operators, *complete is cleared and -1 returned: the caller
 * scans instead, or does not read the column.
 */
static int64
newest_by_skipping(Relation heap, Relation index, int32 shard, int64 hi,
				   int64 lo, int max, bool *complete)
{
	Oid			family = index->rd_opfamily[0];
	Oid			type = index->rd_opcintype[0];
	Oid			collation = index->rd_indcollation[0];
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(index), 0);
	ScanDirection dir = (index->rd_indoption[0] & INDOPTION_DESC) ?
		ForwardScanDirection : BackwardScanDirection;
	Oid			eq = get_opfamily_member(family, type, type, BTEqualStrategyNumber);
	Oid			lt = get_opfamily_member(family, type, type, BTLessStrategyNumber);
	RegProcedure eqproc = OidIsValid(eq) ? get_opcode(eq) : InvalidOid;
	RegProcedure ltproc = OidIsValid(lt) ? get_opcode(lt) : InvalidOid;
	int			descents = 0;
	IndexScanDesc values;
	IndexScanDesc ids;
	SnapshotData dirty;
	TupleTableSlot *slot;
	ScanKeyData lead;
	ScanKeyData below;
	int64		found = -1;

	*complete = true;
	if (!RegProcedureIsValid(eqproc) || !RegProcedureIsValid(ltproc))
	{
		*complete = false;
		return -1;
	}
	InitDirtySnapshot(dirty);
	slot = table_slot_create(heap, NULL);
	values = shardid_index_beginscan(heap, index, &dirty, 1);
	values->xs_want_itup = true;
	ids = shardid_index_beginscan(heap, index, &dirty, 3);
	ids->xs_want_itup = true;

	/* the entries whose leading column is NULL */
	ScanKeyEntryInitialize(&lead, SK_ISNULL | SK_SEARCHNULL, 1, InvalidStrategy,
						   InvalidOid, InvalidOid, InvalidOid, (Datum) 0);
	found = newest_descending(index, ids, slot, &lead, shard, hi, lo,
							  &descents, max, complete);

	/* then each value of the leading column, from the largest down */
	ScanKeyEntryInitialize(&below, SK_ISNULL | SK_SEARCHNOTNULL, 1,
						   InvalidStrategy, InvalidOid, InvalidOid, InvalidOid,
						   (Datum) 0);
	while (*complete && Max(lo, found + 1) <= hi)
	{
		bool		isnull;
		Datum		value;
		int64		v;

		CHECK_FOR_INTERRUPTS();
		if (++descents > max)
		{
			*complete = false;
			break;
		}
		index_rescan(values, &below, 1, NULL, 0);
		if (index_getnext_tid(values, dir) == NULL)
			break;				/* no smaller value */
		value = index_getattr(values->xs_itup, 1, values->xs_itupdesc, &isnull);
		if (isnull)
			elog(ERROR, "NULL among the non-NULL entries of index \"%s\"",
				 RelationGetRelationName(index));
		value = datumCopy(value, att->attbyval, att->attlen);
		if (!att->attbyval && !(below.sk_flags & SK_ISNULL))
			pfree(DatumGetPointer(below.sk_argument));
		ScanKeyEntryInitialize(&lead, 0, 1, BTEqualStrategyNumber, type,
							   collation, eqproc, value);
		v = newest_descending(index, ids, slot, &lead, shard, hi,
							  Max(lo, found + 1), &descents, max, complete);
		found = Max(found, v);
		ScanKeyEntryInitialize(&below, 0, 1, BTLessStrategyNumber, type,
							   collation, ltproc, value);
	}
	index_endscan(values);
	index_endscan(ids);
	ExecDropSingleTupleTableSlot(slot);
	return *complete ? found : -1;
}

/*
 * The same for a column that is a later key column of the index (PRIMARY
 * KEY (tenant_id, id)): its entries are not in the column's order, so the
 * whole index is read, its tuples only, and the heap is visited for an
 * entry only when it would be the newest so far (dead entries are stepped
 * over as above).  A scan, at the rare privileged moments that raise a
 * floor (a registration, an index built by a restore, raise_floor()),
 * never on the id path.
 */
static int64
newest_by_scan(Relation heap, Relation index, int keypos, int32 shard,
			   int64 hi, int64 lo)
{
	IndexScanDesc scan;
	SnapshotData dirty;
	TupleTableSlot *slot;
	int64		found = -1;
	uint32		n = 0;

	InitDirtySnapshot(dirty);
	slot = table_slot_create(heap, NULL);
	scan = shardid_index_beginscan(heap, index, &dirty, 0);
	scan->xs_want_itup = true;
	index_rescan(scan, NULL, 0, NULL, 0);
	while (index_getnext_tid(scan, ForwardScanDirection) != NULL)
	{
		bool		isnull;
		int64		v = DatumGetInt64(index_getattr(scan->xs_itup, keypos + 1,
													scan->xs_itupdesc, &isnull));

		if ((++n & 1023) == 0)
			CHECK_FOR_INTERRUPTS();
		if (isnull || v < lo || v > hi || v <= found ||
			shardid_unpack_shard(v) != shard)
			continue;
		if (index_fetch_heap(scan, slot))
			found = v;
	}
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	return found;
}

/*
 * The descents a skip scan may make before it gives up for the scan of the
 * whole index: a descent reads a page per level of the tree, the scan
 * every leaf page (hundreds of entries each); measured (doc/design.md,
 * "Any key position"), a value of the leading column costs about as much
 * as 1.3 blocks of the scan, so the skip scan is cheaper up to about 0.8
 * values per block.  The budget, one descent per two blocks (a value
 * takes two or more), keeps it to where it costs at most about a third of
 * the scan, and what a skip scan that gives up adds to the scan to about a
 * third of it.  A write's read where only a BEFORE ROW trigger may have
 * set ids makes at most STORED_SKIP_SMALL descents (about 15 values).
 */
#define STORED_SKIP_MIN 64
#define STORED_SKIP_SMALL 32

/*
 * The newest id of shard in [lo, hi] of the column at keypos of index.
 * With full, a column at a later key position is read whatever it costs
 * (a skip scan, or a scan of the whole index where that is cheaper);
 * without, only by a skip scan of at most STORED_SKIP_SMALL descents, and
 * where that does not do, not at all: -1 and *read false.
 */
static int64
newest_at(Relation heap, Relation index, int keypos, int32 shard, int64 hi,
		  int64 lo, bool full, bool *complete, bool *read)
{
	int64		found;

	*complete = true;
	*read = true;
	if (hi < lo)
		return -1;
	if (keypos == 0)
		return newest_in_index(heap, index, shard, hi, lo, complete);
	if (keypos == 1 && !full)
	{
		found = newest_by_skipping(heap, index, shard, hi, lo,
								   STORED_SKIP_SMALL, complete);
		*read = *complete;
		*complete = true;
		return found;
	}
	if (!full)
	{
		*read = false;
		return -1;
	}
	if (keypos == 1)
	{
		BlockNumber blocks = RelationGetNumberOfBlocks(index);
		int			max = (int) Min(Max(blocks / 2, STORED_SKIP_MIN),
									STORED_MAX_DESCENTS);

		found = newest_by_skipping(heap, index, shard, hi, lo, max, complete);
		if (*complete)
			return found;
		/* past the budget: the scan reads it all */
		elog(DEBUG1, "shardid: reading index %s by a scan, its skip scan past %d descents",
			 RelationGetRelationName(index), max);
		*complete = true;
	}
	return newest_by_scan(heap, index, keypos, shard, hi, lo);
}

/*
 * The newest id of shard at or below bound in the bigint column attnum of
 * rel (opened and locked by the caller), through the first index that
 * leads with it (one descent: set_id()'s first id of a backend); -1: none.
 * *read: whether there was such an index.
 */
int64
shardid_stored_newest_in(Relation rel, AttrNumber attnum, int32 shard,
						 int64 bound, bool *read)
{
	List	   *indexes = RelationGetIndexList(rel);
	ListCell   *ic;
	int64		newest = -1;

	*read = false;
	foreach(ic, indexes)
	{
		Relation	index = index_open(lfirst_oid(ic), AccessShareLock);

		if (id_key_position(index, attnum) == 0)
		{
			bool		complete;

			newest = newest_in_index(rel, index, shard, bound, 0, &complete);
			*read = complete;
		}
		index_close(index, AccessShareLock);
		if (*read)
			break;
	}
	list_free(indexes);
	return newest;
}

/*
 * Read every id column of the leaf table rel into *out: every bigint key
 * column of a readable index (id_key_position()), each column once,
 * through an index that leads with it where there is one (descents), else
 * through the index where it comes earliest (newest_at(): without full,
 * a column that comes later than second is not read, nor one that the
 * small skip scan does not read).
 */
static void
read_table(Relation rel, int32 shard, int64 bound, bool beyond, bool full,
		   int64 lo, List **out)
{
	List	   *indexes = RelationGetIndexList(rel);
	TupleDesc	desc = RelationGetDescr(rel);
	int64		top = shardid_pack(SHARDID_SIGN_MILLIS - 1, shard, SHARDID_SEQ_MASK);
	AttrNumber	attnum;

	/*
	 * A table without a block holds no row: its columns are read without
	 * a descent (a table provisioning has just made, say, whose indexes'
	 * pages are in no buffer yet)
	 */
	bool		empty = RELKIND_HAS_STORAGE(rel->rd_rel->relkind) &&
		RelationGetNumberOfBlocks(rel) == 0;

	for (attnum = 1; attnum <= desc->natts; attnum++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, attnum - 1);
		Oid			best = InvalidOid;
		int			best_pos = INT_MAX;
		ListCell   *ic;

		if (att->attisdropped || getBaseType(att->atttypid) != INT8OID)
			continue;
		foreach(ic, indexes)
		{
			Relation	index = index_open(lfirst_oid(ic), AccessShareLock);
			int			k = id_key_position(index, attnum);

			if (k >= 0 && k < best_pos)
			{
				best = RelationGetRelid(index);
				best_pos = k;
			}
			index_close(index, AccessShareLock);
		}
		if (OidIsValid(best) && (full || best_pos <= 1))
		{
			ShardidStoredColumn *col = palloc0(sizeof(ShardidStoredColumn));
			Relation	index = index_open(best, AccessShareLock);
			bool		beyond_complete;
			bool		read = true;
			bool		beyond_read;

			col->relid = RelationGetRelid(rel);
			col->attnum = attnum;
			col->indexid = best;
			if (empty)
			{
				col->newest = -1;
				col->complete = true;
				col->beyond = -1;
			}
			else
			{
				col->newest = newest_at(rel, index, best_pos, shard, bound, lo,
										full, &col->complete, &read);
				/* above the bound: only to report (never followed) */
				col->beyond = beyond ?
					newest_at(rel, index, best_pos, shard, top,
							  Max(bound, -1) + 1, full, &beyond_complete,
							  &beyond_read) : -1;
			}
			index_close(index, AccessShareLock);
			if (read)
				*out = lappend(*out, col);
			else
				pfree(col);
		}
	}
	list_free(indexes);
}

/*
 * The tables a registration read, locked until the next registration, or
 * the end of the statement that wrote its row (shardid_stored_let_go());
 * see floor.c's registration_lock().  Their extra lock is the top
 * transaction's (its resource owner), so that a subtransaction that ends
 * meanwhile (a register_shard() in a PL/pgSQL block with an EXCEPTION
 * clause) neither takes it along nor leaves it owned by nobody who lets go
 * of it.
 */
static bool keep_locks = false;
static List *kept_locks = NIL;	/* in TopTransactionContext */
static bool kept_callback = false;

static void
kept_reset(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT || event == XACT_EVENT_PREPARE)
	{
		keep_locks = false;
		kept_locks = NIL;		/* freed with TopTransactionContext */
	}
}

/* an error in a subtransaction ends the keeping (the list stays) */
static void
kept_reset_sub(SubXactEvent event, SubTransactionId mySubid,
			   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB)
		keep_locks = false;
}

/*
 * keep: the tables the next reads lock stay locked (ACCESS SHARE) until
 * shardid_stored_let_go(); false: reads let go of them at once again
 */
void
shardid_stored_keep_locks(bool keep)
{
	if (!kept_callback)
	{
		RegisterXactCallback(kept_reset, NULL);
		RegisterSubXactCallback(kept_reset_sub, NULL);
		kept_callback = true;
	}
	keep_locks = keep;
}

/* whether tables are kept (shardid_stored_keep_locks()) */
bool
shardid_stored_kept(void)
{
	return kept_locks != NIL;
}

/* let go of the tables kept (shardid_stored_keep_locks()) */
void
shardid_stored_let_go(void)
{
	ResourceOwner save = CurrentResourceOwner;
	ListCell   *lc;

	CurrentResourceOwner = TopTransactionResourceOwner;
	foreach(lc, kept_locks)
		UnlockRelationOid(lfirst_oid(lc), AccessShareLock);
	CurrentResourceOwner = save;
	list_free(kept_locks);
	kept_locks = NIL;
}

/* keep relid locked in the top transaction's name (the caller holds it) */
static void
keep_lock(Oid relid)
{
	ResourceOwner save = CurrentResourceOwner;
	MemoryContext old;

	CurrentResourceOwner = TopTransactionResourceOwner;
	LockRelationOid(relid, AccessShareLock);	/* held already: no wait */
	CurrentResourceOwner = save;
	old = MemoryContextSwitchTo(TopTransactionContext);
	kept_locks = lappend_oid(kept_locks, relid);
	MemoryContextSwitchTo(old);
}

/*
 * Wait for relid's ACCESS SHARE lock, which another session holds in a
 * conflicting mode, holding none of the tables this read has locked so far
 * (family, the first `locked` of them, and those kept): a transaction that
 * holds relid may go on to alter one of the tables read (a migration of the
 * schema's tables in one transaction), and would wait for them.  The caller
 * reads the schema again from the start.
 */
static void
wait_unlocked(Oid relid, List *family, int locked)
{
	ListCell   *fc;

	foreach(fc, family)
	{
		if (foreach_current_index(fc) >= locked)
			break;
		UnlockRelationOid(lfirst_oid(fc), AccessShareLock);
	}
	shardid_stored_let_go();
	LockRelationOid(relid, AccessShareLock);
	UnlockRelationOid(relid, AccessShareLock);
}

/*
 * Read table relid and every table that inherits from it (not those in
 * *seen) into *out, and let go of their locks (but keep them, as the top
 * transaction's, while shardid_stored_keep_locks() says so).  Returns false
 * where, keeping locks, it had to wait for one (wait_unlocked()): it read
 * nothing then, and let go of the tables kept.
 */
static bool
read_family(Oid relid, int32 shard, int64 bound, List **seen, List **out)
{
	List	   *family;
	ListCell   *fc;

	if (!keep_locks)
		LockRelationOid(relid, AccessShareLock);
	else if (!ConditionalLockRelationOid(relid, AccessShareLock))
	{
		wait_unlocked(relid, NIL, 0);
		return false;
	}
	if (!SearchSysCacheExists1(RELOID, ObjectIdGetDatum(relid)))
	{
		UnlockRelationOid(relid, AccessShareLock);
		return true;			/* dropped meanwhile */
	}
	if (!keep_locks)
		family = find_all_inheritors(relid, AccessShareLock, NULL);
	else
	{
		/* the same, without waiting (a child dropped meanwhile: see below) */
		family = find_all_inheritors(relid, NoLock, NULL);
		for_each_from(fc, family, 1)
		{
			if (!ConditionalLockRelationOid(lfirst_oid(fc), AccessShareLock))
			{
				wait_unlocked(lfirst_oid(fc), family, foreach_current_index(fc));
				list_free(family);
				return false;
			}
		}
	}
	foreach(fc, family)
	{
		Oid			member = lfirst_oid(fc);
		Relation	rel;

		if (list_member_oid(*seen, member))
			continue;
		*seen = lappend_oid(*seen, member);
		rel = try_relation_open(member, NoLock);
		if (rel == NULL)
			continue;

		/*
		 * Not the shard's: temporary tables (another session's cannot be
		 * read); not readable: unlogged tables during recovery (doctor() on
		 * a standby), empty there.
		 */
		if ((rel->rd_rel->relkind == RELKIND_RELATION ||
			 rel->rd_rel->relkind == RELKIND_MATVIEW) &&
			rel->rd_rel->relpersistence != RELPERSISTENCE_TEMP &&
			!(rel->rd_rel->relpersistence == RELPERSISTENCE_UNLOGGED &&
			  RecoveryInProgress()))
			read_table(rel, shard, bound, true, true, 0, out);
		relation_close(rel, NoLock);
	}

	/*
	 * Read: let go at once.  A registration of thousands of shards in one
	 * transaction (the update from 1.2, raise_floor() of every shard after
	 * pg_upgrade) would otherwise hold a lock on every table of the
	 * database, more than max_locks_per_transaction allows; the floor needs
	 * no table to stay as it was.  (Locks the caller held before, such as
	 * those of the DDL that fired the event trigger, stay.)
	 */
	foreach(fc, family)
	{
		if (keep_locks)
			keep_lock(lfirst_oid(fc));
		UnlockRelationOid(lfirst_oid(fc), AccessShareLock);
	}
	list_free(family);
	return true;
}

/*
 * The id columns of the tables of schema nspid, and of every table that
 * inherits from one of them (partitions attached from any schema), with
 * the newest id of shard each holds at or below bound and any above it:
 * a List of ShardidStoredColumn.  The schema's relations are found through
 * their dependency on it (pg_depend's index: the cost follows the schema,
 * not the database).  Temporary tables (another session's, which cannot
 * be read, or a role's own) are not the shard's.
 */
/* whether a parent of relid (inheritance or partitioning) is in tables */
static bool
parent_among(Oid relid, List *tables)
{
	Relation	inherits = table_open(InheritsRelationId, AccessShareLock);
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	bool		found = false;

	ScanKeyInit(&key, Anum_pg_inherits_inhrelid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(relid));
	scan = systable_beginscan(inherits, InheritsRelidSeqnoIndexId, true,
							  NULL, 1, &key);
	while (!found && HeapTupleIsValid(tuple = systable_getnext(scan)))
		found = list_member_oid(tables,
								((Form_pg_inherits) GETSTRUCT(tuple))->inhparent);
	systable_endscan(scan);
	table_close(inherits, AccessShareLock);
	return found;
}

/*
 * The tables of schema nspid (tables, partitioned tables, materialized
 * views), from pg_depend
 */
List *
shardid_stored_schema_tables(Oid nspid)
{
	Relation	depend_rel;
	ScanKeyData keys[2];
	SysScanDesc scan;
	HeapTuple	tuple;
	List	   *tables = NIL;

	depend_rel = table_open(DependRelationId, AccessShareLock);
	ScanKeyInit(&keys[0], Anum_pg_depend_refclassid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(NamespaceRelationId));
	ScanKeyInit(&keys[1], Anum_pg_depend_refobjid, BTEqualStrategyNumber,
				F_OIDEQ, ObjectIdGetDatum(nspid));
	scan = systable_beginscan(depend_rel, DependReferenceIndexId, true,
							  NULL, 2, keys);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		Form_pg_depend dep = (Form_pg_depend) GETSTRUCT(tuple);

		if (dep->classid == RelationRelationId && dep->objsubid == 0)
		{
			char		kind = get_rel_relkind(dep->objid);

			if (kind == RELKIND_RELATION || kind == RELKIND_PARTITIONED_TABLE ||
				kind == RELKIND_MATVIEW)
				tables = list_append_unique_oid(tables, dep->objid);
		}
	}
	systable_endscan(scan);
	table_close(depend_rel, AccessShareLock);
	return tables;
}

List *
shardid_stored_read(int32 shard, Oid nspid, int64 bound, Oid reader)
{
	List	   *tables;
	List	   *seen;
	List	   *out;
	ListCell   *lc;

again:
	tables = shardid_stored_schema_tables(nspid);
	seen = NIL;
	out = NIL;

	/*
	 * Reading ids is reading rows: a reader who is no superuser (a role
	 * the database owner lets register shards) must be allowed to read
	 * every table of the schema (partitions are read through their
	 * parent's privilege, as a query would).
	 */
	if (OidIsValid(reader) && !superuser_arg(reader))
		foreach(lc, tables)
		{
			Oid			relid = lfirst_oid(lc);

			if (pg_class_aclcheck(relid, reader, ACL_SELECT) != ACLCHECK_OK)
				ereport(ERROR,
						(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
						 errmsg("permission denied to read the ids of table %s",
								quote_qualified_identifier(get_namespace_name(nspid),
														   get_rel_name(relid))),
						 errdetail("Registering a schema, or raising its shard's floor, reads the newest id of every table in it."),
						 errhint("A superuser can register the schema, or grant SELECT on the table.")));
		}

	foreach(lc, tables)
	{
		Oid			relid = lfirst_oid(lc);

		/* a child of a table of the schema is read with its parent */
		if (parent_among(relid, tables))
			continue;
		if (!read_family(relid, shard, bound, &seen, &out))
		{
			/* it waited (keeping locks): all again, as they are now */
			list_free(tables);
			list_free(seen);
			list_free(out);
			goto again;
		}
	}
	list_free(tables);
	list_free(seen);
	return out;
}

/*
 * The id columns of table relid and of every table that inherits from it,
 * as shardid_stored_read() reads them for a schema: for the event trigger
 * that raises a floor when an index or key of one table is made (a
 * restore's post-data section), which must lock nothing but that table's
 * family (pg_restore -j builds the indexes of a schema's tables at once).
 */
List *
shardid_stored_read_table(Oid relid, int32 shard, int64 bound)
{
	List	   *seen = NIL;
	List	   *out = NIL;

	(void) read_family(relid, shard, bound, &seen, &out);
	list_free(seen);
	return out;
}

/*
 * The id columns of table relid alone, which the caller has locked, as
 * read_table() reads them (without full, only the columns that lead an
 * index or come second in it and a small skip scan reads), only their ids
 * at or above lo, and without the ids above the bound (reported elsewhere,
 * never followed): for a write of explicit ids into it (floor.c), which
 * must neither wait for the locks of the tables it did not write nor pay
 * for what only a report needs.
 */
List *
shardid_stored_read_written(Oid relid, int32 shard, int64 bound, int64 lo,
							bool full)
{
	List	   *out = NIL;
	Relation	rel = try_relation_open(relid, NoLock);

	if (rel == NULL)
		return NIL;
	if (rel->rd_rel->relkind == RELKIND_RELATION &&
		rel->rd_rel->relpersistence != RELPERSISTENCE_TEMP)
		read_table(rel, shard, bound, false, full, lo, &out);
	relation_close(rel, NoLock);
	return out;
}

PG_FUNCTION_INFO_V1(shardid_id_column_readable);

/*
 * shardid_internal.id_column_readable(tab oid, col smallint, nowait boolean):
 * whether the floor step reads column col of table tab (a bigint or a
 * domain over it, a key column of a readable index: id_key_position());
 * NULL when there is no such column, or with nowait when another session
 * holds a lock that conflicts with ACCESS SHARE (doctor() waits for no
 * lock).  From the relation cache: registration asks it of every id column
 * of a schema, doctor() of every id column of the database, and only what
 * it refuses gets its reason (shardid_internal.id_column_unreadable()).
 */
Datum
shardid_id_column_readable(PG_FUNCTION_ARGS)
{
	Oid			relid = PG_GETARG_OID(0);
	AttrNumber	attnum = PG_GETARG_INT16(1);
	bool		nowait = PG_GETARG_BOOL(2);
	Relation	rel;
	bool		readable = false;
	List	   *indexes;
	ListCell   *ic;

	if (nowait)
	{
		if (!ConditionalLockRelationOid(relid, AccessShareLock))
			PG_RETURN_NULL();
		rel = try_relation_open(relid, NoLock);
		if (rel == NULL)
		{
			UnlockRelationOid(relid, AccessShareLock);
			PG_RETURN_NULL();
		}
	}
	else
		rel = try_relation_open(relid, AccessShareLock);
	if (rel == NULL)
		PG_RETURN_NULL();
	if (attnum <= 0 || attnum > RelationGetDescr(rel)->natts ||
		TupleDescAttr(RelationGetDescr(rel), attnum - 1)->attisdropped)
	{
		relation_close(rel, AccessShareLock);
		PG_RETURN_NULL();
	}
	if (getBaseType(TupleDescAttr(RelationGetDescr(rel), attnum - 1)->atttypid) == INT8OID)
	{
		indexes = RelationGetIndexList(rel);
		foreach(ic, indexes)
		{
			Relation	index;

			if (nowait && !ConditionalLockRelationOid(lfirst_oid(ic), AccessShareLock))
			{
				list_free(indexes);
				relation_close(rel, AccessShareLock);
				PG_RETURN_NULL();
			}
			index = index_open(lfirst_oid(ic), nowait ? NoLock : AccessShareLock);
			readable = id_key_position(index, attnum) >= 0;
			index_close(index, AccessShareLock);
			if (readable)
				break;
		}
		list_free(indexes);
	}
	relation_close(rel, AccessShareLock);
	PG_RETURN_BOOL(readable);
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
