/*-------------------------------------------------------------------------
 *
 * strict.c
 *	  Stamping state shared by all sessions of a server ("strict mode").
 *
 * With shardid in shared_preload_libraries (or, from PostgreSQL 17, through
 * the dynamic shared memory registry), every shard has one 64-bit word in
 * shared memory holding the last id it stamped, minus the shard bits.  A
 * new id is derived from it by the strict rule of shardid_core.h and
 * published with one compare-and-swap: no lock, no WAL, no allocation.
 *
 * Borrowing: when a shard needs more than 1024 ids in a millisecond, its
 * ids take the next milliseconds ahead of the wall clock, at most
 * shardid.max_lead_ms ahead; past that, callers wait for the clock.
 *
 * Clock steps back: the state never goes back, so ids keep increasing.
 * While the clock reads earlier than the latest reading any session has
 * seen, ids move on from where they were without waiting (waiting would last
 * as long as the step), and the step is counted for shardid.info().
 *
 * Restarts: shared memory is set up anew at server start.  Every shard's
 * state then starts shardid.max_lead_ms ahead of the clock, past any id that
 * could have been stamped before a crash.
 *
 * src/strict.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"

#include "compat.h"
#include "shardid.h"

/* one shard's state alone on its cache line, so shards do not contend */
#define SHARDID_SLOT_SIZE 64

typedef union ShardidSlot
{
	pg_atomic_uint64 state;		/* (unix_ms << 10) | seq field, last id */
	char		pad[SHARDID_SLOT_SIZE];
} ShardidSlot;

typedef struct ShardidShared
{
	pg_atomic_uint64 clock_high;	/* latest clock reading seen, unix ms */
	pg_atomic_uint64 clock_waits;
	pg_atomic_uint64 clock_behind_calls;
	pg_atomic_uint64 max_step_back_ms;
	int64		seeded_ms;		/* ms every shard started after, unix */
	ShardidSlot slots[SHARDID_NSHARDS];
} ShardidShared;

static ShardidShared *shared = NULL;
static ShardidSharedKind shared_kind = SHARDID_SHARED_NONE;

static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
#ifdef SHARDID_HAVE_SHMEM_REQUEST_HOOK
static shmem_request_hook_type prev_shmem_request_hook = NULL;
#endif

Size
shardid_shmem_size(void)
{
	return sizeof(ShardidShared);
}

/* set up a new shared state: every shard starts past the largest lead */
static void
shared_state_init(void *ptr)
{
	ShardidShared *s = (ShardidShared *) ptr;
	int64		now = shardid_clock_ms();

	pg_atomic_init_u64(&s->clock_high, (uint64) now);
	pg_atomic_init_u64(&s->clock_waits, 0);
	pg_atomic_init_u64(&s->clock_behind_calls, 0);
	pg_atomic_init_u64(&s->max_step_back_ms, 0);
	s->seeded_ms = now + shardid_max_lead_ms;
	for (int i = 0; i < SHARDID_NSHARDS; i++)
		pg_atomic_init_u64(&s->slots[i].state,
						   SHARDID_STATE(s->seeded_ms, SHARDID_SEQ_MASK));
}

#ifdef SHARDID_HAVE_SHMEM_REQUEST_HOOK
static void
shardid_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shardid_shmem_size());
}
#endif

static void
shardid_shmem_startup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	shared = ShmemInitStruct("shardid", shardid_shmem_size(), &found);
	if (!found)
		shared_state_init(shared);
	LWLockRelease(AddinShmemInitLock);
	shared_kind = SHARDID_SHARED_PRELOADED;
}

/* called from _PG_init() */
void
shardid_shmem_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

#ifdef SHARDID_HAVE_SHMEM_REQUEST_HOOK
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shardid_shmem_request;
#else
	RequestAddinShmemSpace(shardid_shmem_size());
#endif
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shardid_shmem_startup;
}

/*
 * Which shared state this backend stamps with.  Without preloading, PG 17
 * and later attach to (or create) a segment in the DSM registry.
 */
ShardidSharedKind
shardid_shared_kind(void)
{
#ifdef SHARDID_HAVE_DSM_REGISTRY
	if (unlikely(shared == NULL) && IsUnderPostmaster)
	{
		bool		found;

		shared = GetNamedDSMSegment("shardid", shardid_shmem_size(),
									shared_state_init, &found);
		shared_kind = SHARDID_SHARED_DSM;
	}
#endif
	return shared_kind;
}

static void
atomic_max(pg_atomic_uint64 *var, uint64 value)
{
	uint64		cur = pg_atomic_read_u64(var);

	while (value > cur && !pg_atomic_compare_exchange_u64(var, &cur, value))
		;
}

/*
 * Stamp one id of shard, its seq field from the shard's counter.  Returns
 * the stamp, SHARDID_STATE(unix ms, seq field).
 */
uint64
shardid_strict_stamp(int32 shard)
{
	pg_atomic_uint64 *slot = &shared->slots[shard].state;

	for (;;)
	{
		uint64		high;
		int64		now;
		uint64		last;
		uint64		next;
		bool		behind;

		/*
		 * Read the high-water mark before the clock: every value in it was
		 * read from the clock earlier, so a clock reading below it means
		 * the clock stepped back, not that this backend was slow.
		 */
		high = pg_atomic_read_u64(&shared->clock_high);
		pg_read_barrier();
		now = shardid_clock_ms();
		shardid_check_clock(now);

		behind = (uint64) now < high;
		if (unlikely(behind))
		{
			pg_atomic_fetch_add_u64(&shared->clock_behind_calls, 1);
			atomic_max(&shared->max_step_back_ms, high - (uint64) now);
		}
		else if ((uint64) now > high)
			atomic_max(&shared->clock_high, (uint64) now);

		last = pg_atomic_read_u64(slot);
		for (;;)
		{
			next = shardid_strict_next(last, now);
			if (unlikely(SHARDID_STATE_MS(next) - now > shardid_max_lead_ms) &&
				!behind)
				break;
			if (pg_atomic_compare_exchange_u64(slot, &last, next))
				return next;
			/* another session stamped this shard meanwhile: derive again */
		}

		/* this shard is as far ahead of the clock as it may go */
		pg_atomic_fetch_add_u64(&shared->clock_waits, 1);
		shardid_wait_for_clock(SHARDID_STATE_MS(next) - shardid_max_lead_ms);
	}
}

void
shardid_strict_counters(ShardidCounters *counters, int64 *seeded_ms)
{
	Assert(shared != NULL);
	counters->clock_waits = pg_atomic_read_u64(&shared->clock_waits);
	counters->clock_behind_calls = pg_atomic_read_u64(&shared->clock_behind_calls);
	counters->max_step_back_ms = pg_atomic_read_u64(&shared->max_step_back_ms);
	*seeded_ms = shared->seeded_ms;
}
