/*-------------------------------------------------------------------------
 *
 * floor.h
 *	  The hooks that raise a shard's floor after writes of explicit ids.
 *
 * src/floor.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_FLOOR_H
#define SHARDID_FLOOR_H

#include "nodes/bitmapset.h"
#include "utils/relcache.h"

extern void shardid_floor_hooks_init(void);
extern bool shardid_next_id_present(void);
extern bool shardid_is_next_id(Oid funcid);
extern Bitmapset *shardid_id_columns(Relation rel);
extern Bitmapset *shardid_id_shards(Relation rel);

/*
 * Called when the cache forgets a table's entry (its oid) or every entry
 * (InvalidOid): feed.c's set of refused shards follows the cache without
 * invalidation callbacks of its own (a backend has 10 relcache callbacks,
 * which Citus and pgoutput in a walsender nearly fill)
 */
typedef void (*ShardidIdColumnsForgotten) (Oid relid);
extern void shardid_id_columns_forgotten(ShardidIdColumnsForgotten fn);

#endif							/* SHARDID_FLOOR_H */
