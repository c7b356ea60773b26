/*-------------------------------------------------------------------------
 *
 * session.c
 *	  The per-session guard ("session mode"): ids of a shard unique within
 *	  one session at any call rate, by the exact rule of shardid_core.h.
 *
 * One window per shard, allocated on first use in a memory context of its
 * own, so that pg_backend_memory_contexts shows its size.  The guard never
 * stamps ahead of the clock: when all 1024 values of the seq field are taken
 * in the current millisecond it waits for the next one.  Before its first
 * stamp, and after the epoch setting changed, a backend checks that it may
 * stamp at all: not during recovery, not under another epoch than the one
 * the server's ids were made with (mark.c).
 *
 * src/session.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "clock.h"
#include "mark.h"
#include "session.h"
#include "settings.h"

static MemoryContext session_context = NULL;
static ShardidWindow **session_windows = NULL;
static ShardidCounters session_counters;

/*
 * This backend checked that it may stamp (not in recovery, the epoch is the
 * remembered one) under this generation of the epoch setting; 0: not yet.
 */
static uint32 ready_settings = 0;

/* what a backend checks before its first stamp, and after a change */
static pg_noinline void
prepare(void)
{
	shardid_refuse_in_recovery();
	shardid_check_moment(shardid_clock_ms(), shardid_epoch_ms,
						 "current time", false);
	shardid_check_epoch();
	ready_settings = shardid_epoch_generation;
}

/*
 * Stamp seq for shard.  Returns the stamp, SHARDID_STATE(unix ms, seq
 * field), as shardid_strict_stamp() does.
 */
uint64
shardid_session_stamp(int32 shard, int64 seq)
{
	ShardidWindow *w;

	if (unlikely(ready_settings != shardid_epoch_generation))
		prepare();
	if (unlikely(session_windows == NULL))
	{
		session_context = AllocSetContextCreate(TopMemoryContext,
												"shardid session guard",
												ALLOCSET_SMALL_SIZES);
		session_windows = MemoryContextAllocZero(session_context,
												 sizeof(ShardidWindow *) * SHARDID_NSHARDS);
	}
	w = session_windows[shard];
	if (unlikely(w == NULL))
	{
		w = MemoryContextAlloc(session_context, sizeof(ShardidWindow));
		shardid_window_init(w);
		session_windows[shard] = w;
	}

	for (;;)
	{
		int64		now = shardid_clock_ms();
		int64		ms;

		shardid_check_moment(now, shardid_epoch_ms, "current time", false);
		if (unlikely(now < w->unix_ms))
		{
			uint64		back = (uint64) (w->unix_ms - now);

			session_counters.clock_behind_calls++;
			if (back > session_counters.max_step_back_ms)
				session_counters.max_step_back_ms = back;
		}
		ms = shardid_window_stamp(w, now, seq);
		if (likely(ms != SHARDID_MUST_WAIT))
			return SHARDID_STATE(ms, (uint64) seq & SHARDID_SEQ_MASK);
		/* all 1024 seq values of this millisecond are taken */
		session_counters.clock_waits++;
		shardid_wait_for_clock(now + 1);
	}
}

void
shardid_session_counters(ShardidCounters *counters)
{
	*counters = session_counters;
}
