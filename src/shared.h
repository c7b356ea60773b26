/*-------------------------------------------------------------------------
 *
 * shared.h
 *	  Stamping state shared by all sessions of a server ("strict mode").
 *
 * src/shared.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_SHARED_H
#define SHARDID_SHARED_H

#include "compat.h"
#include "mark.h"
#include "session.h"

typedef enum ShardidSharedKind
{
	SHARDID_SHARED_NONE,		/* per-session guard only */
	SHARDID_SHARED_PRELOADED,	/* shared_preload_libraries */
	SHARDID_SHARED_DSM			/* dynamic shared memory registry, PG 17+ */
} ShardidSharedKind;

/* which shared state this backend stamps with; set in shared.c only */
extern ShardidSharedKind shardid_shared_kind_now;

extern void shardid_shmem_init(void);
extern void shardid_shared_attach_dsm(void);
extern ShardidMark *shardid_shared_mark(void);
extern Size shardid_shmem_size(void);
extern uint64 shardid_strict_stamp(int32 shard);
extern uint64 shardid_strict_reserve(int32 shard, int64 want, uint64 *first);
extern int64 shardid_strict_raise_high_water(int64 unix_ms);
extern int64 shardid_follow_limit_ms(void);
extern bool shardid_strict_start_past(int32 shard, int64 stored_id);
extern bool shardid_strict_raise_floor(int32 shard, int64 floor_id);
extern bool shardid_strict_covers(int32 shard, int64 stored_id);
extern int64 shardid_strict_uncovered_from(int32 shard);
extern bool shardid_strict_shard(int32 shard, uint64 *state, uint64 *ids, uint64 *waits);
extern void shardid_strict_mark_counters(int64 *unconfirmed, int64 *stored_checks,
										 int64 *stored_moves, int64 *stored_unindexed,
										 int64 *stored_too_far);
extern void shardid_strict_counters(ShardidCounters *counters, int64 *seeded_ms,
									int64 *high_water_writes);

/*
 * Attach this backend to the shared state, if it has not yet: without
 * preloading, PostgreSQL 17 and later attach to (or create) a segment in
 * the DSM registry; preloaded, the state was attached at server start.
 * Every SQL function that stamps or reports on stamping calls this first;
 * inline, as it runs at every id: once attached, it costs one test.
 */
static inline void
shardid_shared_attach(void)
{
#ifdef SHARDID_HAVE_DSM_REGISTRY
	if (unlikely(shardid_shared_kind_now == SHARDID_SHARED_NONE))
		shardid_shared_attach_dsm();
#endif
}

/* SHARDID_SHARED_NONE until shardid_shared_attach() attached a state */
static inline ShardidSharedKind
shardid_shared_kind(void)
{
	return shardid_shared_kind_now;
}

#endif							/* SHARDID_SHARED_H */
