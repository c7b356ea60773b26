/*-------------------------------------------------------------------------
 *
 * stored.h
 *	  The newest id already stored for a shard in this database's tables.
 *
 * src/stored.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_STORED_H
#define SHARDID_STORED_H

#include "shardid_core.h"
#include "access/attnum.h"
#include "utils/relcache.h"

typedef struct ShardidStored
{
	int64		newest_id;		/* the largest id of the shard, -1: none */
	int			tables;			/* tables with a DEFAULT of the shard read */
	int			unindexed;		/* of them, skipped: no usable index, locked */
} ShardidStored;

/* bit shard % 8 of byte shard / 8: this backend started the shard past them */
extern PGDLLIMPORT uint8 shardid_stored_checked[SHARDID_NSHARDS / 8];

static inline bool
shardid_stored_is_checked(int32 shard)
{
	return (shardid_stored_checked[shard >> 3] & (1 << (shard & 7))) != 0;
}

static inline void
shardid_stored_set_checked(int32 shard)
{
	shardid_stored_checked[shard >> 3] |= (uint8) (1 << (shard & 7));
}

extern Oid	shardid_registry_relid(void);
extern void shardid_stored_newest(int32 shard, ShardidStored *out);
extern bool shardid_stored_newest_in(Relation rel, AttrNumber attnum, int32 shard,
									 int64 *newest, bool *locked);

#endif							/* SHARDID_STORED_H */
