/*-------------------------------------------------------------------------
 *
 * session.h
 *	  The per-session guard, used when no shared state is available.
 *
 * src/session.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_SESSION_H
#define SHARDID_SESSION_H

#include "clock.h"

extern int64 shardid_session_stamp(int32 shard, int64 seq);
extern void shardid_session_counters(ShardidCounters *counters);

#endif							/* SHARDID_SESSION_H */
