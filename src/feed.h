/*-------------------------------------------------------------------------
 *
 * feed.h
 *	  The shards an enabled subscription of this database feeds, whose ids
 *	  the id path refuses until the subscription is disabled or dropped.
 *
 * src/feed.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_FEED_H
#define SHARDID_FEED_H

#include "compat.h"
#include "shardid_core.h"

/* set in feed.c only */
extern bool shardid_feed_valid;
extern bool shardid_feed_any;
extern uint64 shardid_feed_shards[SHARDID_NSHARDS / 64];

extern void shardid_feed_init(void);
extern void shardid_feed_recompute(void);
extern void shardid_feed_refuse(int32 shard);

/*
 * Refuse an id of shard while an enabled subscription of this database
 * applies rows into a table whose next_id() DEFAULT makes ids of it.  At
 * every id: two tests of this backend's memory, the set recomputed only
 * after a change of the subscription catalogs (and at the first id).
 */
static inline void
shardid_feed_check(int32 shard)
{
	if (unlikely(!shardid_feed_valid))
		shardid_feed_recompute();
	if (unlikely(shardid_feed_any) &&
		(shardid_feed_shards[shard >> 6] >> (shard & 63)) & 1)
		shardid_feed_refuse(shard);
}

#endif							/* SHARDID_FEED_H */
