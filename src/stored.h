/*-------------------------------------------------------------------------
 *
 * stored.h
 *	  The newest ids of a shard stored in this database's tables, read at
 *	  the explicit moments that raise the shard's floor.
 *
 * src/stored.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_STORED_H
#define SHARDID_STORED_H

#include "shardid_core.h"
#include "access/attnum.h"
#include "nodes/pg_list.h"
#include "utils/relcache.h"

/* one id column read: a bigint key column of a btree index without predicate */
typedef struct ShardidStoredColumn
{
	Oid			relid;			/* the table (a leaf: partitions one by one) */
	AttrNumber	attnum;			/* its bigint (or domain over bigint) column */
	Oid			indexid;		/* the index it was read through */
	int64		newest;			/* newest id of the shard at or below the bound, -1 */
	int64		beyond;			/* newest id of the shard above the bound, -1 */
	bool		complete;		/* read through: not stopped by the descent cap */
} ShardidStoredColumn;

extern Oid	shardid_registry_relid(void);
extern int64 shardid_stored_bound(int32 shard);
extern List *shardid_stored_schema_tables(Oid nspid);
extern void shardid_stored_keep_locks(bool keep);
extern bool shardid_stored_kept(void);
extern void shardid_stored_let_go(void);
extern List *shardid_stored_read(int32 shard, Oid nspid, int64 bound,
								 Oid reader);
extern List *shardid_stored_read_table(Oid relid, int32 shard, int64 bound);
extern List *shardid_stored_read_written(Oid relid, int32 shard, int64 bound, int64 lo,
										 bool full);
extern int64 shardid_stored_newest_in(Relation rel, AttrNumber attnum,
									  int32 shard, int64 bound, bool *read);

#endif							/* SHARDID_STORED_H */
