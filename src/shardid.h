/*-------------------------------------------------------------------------
 *
 * shardid.h
 *	  Declarations shared by the files of the shardid extension.
 *
 * src/shardid.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_H
#define SHARDID_H

#include "shardid_core.h"

/* settings (shardid.c) */
extern int64 shardid_epoch_ms;	/* shardid.epoch, in ms since the Unix epoch */
extern int	shardid_max_lead_ms;	/* shardid.max_lead_ms */

/* clock and time checks (shardid.c) */
extern int64 shardid_clock_ms(void);
extern void shardid_check_clock(int64 unix_ms);
extern void shardid_wait_for_clock(int64 unix_ms);

/* counters of how stamping went, for shardid.info() */
typedef struct ShardidCounters
{
	uint64		clock_waits;	/* calls that waited for the clock */
	uint64		clock_behind_calls; /* ids stamped while the clock was behind */
	uint64		max_step_back_ms;	/* largest step back of the clock seen */
} ShardidCounters;

/* shared state (strict.c) */
typedef enum ShardidSharedKind
{
	SHARDID_SHARED_NONE,		/* per-session guard only */
	SHARDID_SHARED_PRELOADED,	/* shared_preload_libraries */
	SHARDID_SHARED_DSM			/* dynamic shared memory registry, PG 17+ */
} ShardidSharedKind;

extern void shardid_shmem_init(void);
extern ShardidSharedKind shardid_shared_kind(void);
extern Size shardid_shmem_size(void);
extern uint64 shardid_strict_stamp(int32 shard);
extern void shardid_strict_counters(ShardidCounters *counters,
									int64 *seeded_ms);

#endif							/* SHARDID_H */
