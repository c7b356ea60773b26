/*-------------------------------------------------------------------------
 *
 * session.h
 *	  The per-session guard ("session mode"), used when no shared state is
 *	  available, and the counters both modes report.
 *
 * src/session.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_SESSION_H
#define SHARDID_SESSION_H

/*
 * Counters of how stamping went, for shardid.info(): this backend's in
 * session mode (session.c), the server's in strict mode (shared.c).
 */
typedef struct ShardidCounters
{
	uint64		clock_waits;	/* calls that waited for the clock */
	uint64		clock_behind_calls; /* ids stamped while the clock was behind */
	uint64		max_step_back_ms;	/* largest step back of the clock seen */
} ShardidCounters;

extern uint64 shardid_session_stamp(int32 shard, int64 seq);
extern void shardid_session_counters(ShardidCounters *counters);

#endif							/* SHARDID_SESSION_H */
