/*-------------------------------------------------------------------------
 *
 * session.c
 *	  The per-session guard ("session mode"): ids of a shard unique within
 *	  one session at any call rate, by the exact rule of shardid_core.h.
 *
 * One window per shard, allocated on first use in a memory context of its
 * own, so that pg_backend_memory_contexts shows its size.  The guard never
 * stamps ahead of the clock: when all 1024 values of the seq field are taken
 * in the current millisecond it waits for the next one.
 *
 * src/session.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "clock.h"
#include "session.h"
#include "settings.h"

static MemoryContext session_context = NULL;
static ShardidWindow **session_windows = NULL;
static ShardidCounters session_counters;

/* stamp seq for shard; returns the id's millisecond, Unix based */
int64
shardid_session_stamp(int32 shard, int64 seq)
{
	ShardidWindow *w;

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
			return ms;
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
