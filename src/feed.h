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

/* the set is stale, or refuses a shard; set in feed.c only */
extern bool shardid_feed_look;

extern void shardid_feed_init(void);
extern void shardid_feed_look_at(int32 shard);

/*
 * Refuse an id of shard while an enabled subscription of this database
 * (or a disabled one with disable_on_error) applies rows into a table
 * whose next_id() DEFAULT makes ids of it.  At
 * every id one test of this backend's memory, while the set of refused
 * shards is known and empty; it is made again only after a change of the
 * subscription catalogs or of a subscribed table (and at the first id).
 */
static inline void
shardid_feed_check(int32 shard)
{
	if (unlikely(shardid_feed_look))
		shardid_feed_look_at(shard);
}

#endif							/* SHARDID_FEED_H */
