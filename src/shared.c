/*-------------------------------------------------------------------------
 *
 * shared.c
 *	  Stamping state shared by all sessions of a server ("strict mode").
 *
 * With shardid in shared_preload_libraries (or, from PostgreSQL 17, through
 * the dynamic shared memory registry), every shard has one 64-bit word in
 * shared memory holding the last id it stamped, minus the shard bits.  A
 * new id is derived from it by the strict rule of shardid_core.h (the seq
 * field from the shard's counter) and published with one compare-and-swap:
 * no lock, no allocation.  Before it is handed out, its time must lie at or
 * below the durable high-water mark H (mark.c); one atomic read tells, and
 * H is raised ahead of need about once a second.
 *
 * Borrowing: when a shard needs more than 1024 ids in a millisecond, its
 * ids take the next milliseconds ahead of the wall clock, at most
 * shardid.max_lead_ms ahead; past that, a call that needs a new millisecond
 * waits for the clock to advance by one (never longer, so lowering the
 * setting applies to new borrowing only and never makes callers wait for
 * an existing lead to drain).
 *
 * Clock behind: the state never goes back, so ids keep increasing.  While
 * the clock reads earlier than the latest reading any session has seen (or
 * than H after a start), ids move on from where they were without waiting
 * (waiting would last as long as the step), and the calls are counted for
 * shardid.info().
 *
 * Starts, crashes and promotions: the state is set up anew with shared
 * memory and seeded lazily, by the first stamp once recovery has ended:
 * every shard then starts past max(H, clock), so ids made afterwards sort
 * after every id made before, whatever the clock did.
 *
 * src/shared.c
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
#include "clock.h"
#include "mark.h"
#include "settings.h"
#include "shared.h"
#include "stored.h"

/* one shard's state alone on its cache line, so shards do not contend */
#define SHARDID_SLOT_SIZE 64

typedef union ShardidSlot
{
	pg_atomic_uint64 state;		/* (unix_ms << 10) | seq field, last id */
	char		pad[SHARDID_SLOT_SIZE];
} ShardidSlot;

typedef struct ShardidShared
{
	ShardidMark mark;			/* H and the lock that seeds */
	pg_atomic_uint64 clock_high;	/* latest clock reading seen, unix ms */
	pg_atomic_uint64 clock_waits;
	pg_atomic_uint64 clock_behind_calls;
	pg_atomic_uint64 max_step_back_ms;
	pg_atomic_uint64 stored_checks;	/* looks at a shard's stored ids */
	pg_atomic_uint64 stored_moves;	/* of them, moved the shard forward */
	pg_atomic_uint64 stored_unindexed;	/* tables skipped: no index on id */
	pg_atomic_uint64 stored_too_far;	/* newest ids too far ahead: not followed */
	pg_atomic_uint32 seeded;	/* every shard started past H */
	int64		seeded_ms;		/* ms every shard started after, unix */
	ShardidSlot slots[SHARDID_NSHARDS];
} ShardidShared;

static ShardidShared *shared = NULL;
ShardidSharedKind shardid_shared_kind_now = SHARDID_SHARED_NONE;

/*
 * This backend checked that it may stamp (not in recovery, the epoch is the
 * remembered one) under these generations of the epoch setting and of the
 * shared mark; 0: not yet.
 */
static uint32 ready_settings = 0;
static uint32 ready_shared = 0;

static shmem_startup_hook_type prev_shmem_startup_hook = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;

Size
shardid_shmem_size(void)
{
	return sizeof(ShardidShared);
}

/* set up a new shared state; shards are seeded by the first stamp */
static void
shared_state_init(void *ptr)
{
	ShardidShared *s = (ShardidShared *) ptr;

	shardid_mark_init(&s->mark);
	pg_atomic_init_u64(&s->clock_high, (uint64) shardid_clock_ms());
	pg_atomic_init_u64(&s->clock_waits, 0);
	pg_atomic_init_u64(&s->clock_behind_calls, 0);
	pg_atomic_init_u64(&s->max_step_back_ms, 0);
	pg_atomic_init_u64(&s->stored_checks, 0);
	pg_atomic_init_u64(&s->stored_moves, 0);
	pg_atomic_init_u64(&s->stored_unindexed, 0);
	pg_atomic_init_u64(&s->stored_too_far, 0);
	pg_atomic_init_u32(&s->seeded, 0);
	s->seeded_ms = 0;
	for (int i = 0; i < SHARDID_NSHARDS; i++)
		pg_atomic_init_u64(&s->slots[i].state, 0);
}

static void
shardid_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(shardid_shmem_size());
}

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
	shardid_shared_kind_now = SHARDID_SHARED_PRELOADED;
}

/* called from _PG_init() */
void
shardid_shmem_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = shardid_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = shardid_shmem_startup;
}

/*
 * shardid_shared_attach() (shared.h) without preloading: attach to (or
 * create) the state's segment in the DSM registry, PostgreSQL 17 and later.
 */
void
shardid_shared_attach_dsm(void)
{
#ifdef SHARDID_HAVE_DSM_REGISTRY
	if (shared == NULL && IsUnderPostmaster)
	{
		bool		found;

		shared = GetNamedDSMSegment("shardid", shardid_shmem_size(),
									shared_state_init, &found);
		shardid_shared_kind_now = SHARDID_SHARED_DSM;
	}
#endif
}

ShardidMark *
shardid_shared_mark(void)
{
	return shardid_shared_kind_now == SHARDID_SHARED_NONE ? NULL : &shared->mark;
}

static void
atomic_max(pg_atomic_uint64 *var, uint64 value)
{
	uint64		cur = pg_atomic_read_u64(var);

	while (value > cur && !pg_atomic_compare_exchange_u64(var, &cur, value))
		;
}

/*
 * Seed every shard past max(H, clock), once per shared state, after
 * recovery has ended.  A clock behind H then counts as behind: ids continue
 * from H at once instead of waiting for the clock.
 */
static void
seed(void)
{
	int64		high = shardid_mark_durable();

	LWLockAcquire(&shared->mark.lock, LW_EXCLUSIVE);
	if (pg_atomic_read_u32(&shared->seeded) == 0)
	{
		int64		start = Max(high, shardid_clock_ms());

		for (int i = 0; i < SHARDID_NSHARDS; i++)
			atomic_max(&shared->slots[i].state,
					   SHARDID_STATE(start, SHARDID_SEQ_MASK));
		atomic_max(&shared->clock_high, (uint64) high);
		atomic_max(&shared->mark.high_water, (uint64) high);
		shared->seeded_ms = start;
		pg_write_barrier();
		pg_atomic_write_u32(&shared->seeded, 1);
	}
	LWLockRelease(&shared->mark.lock);
}

/* what a backend checks before its first stamp, and after a change */
static pg_noinline void
prepare(void)
{
	uint32		generation = pg_atomic_read_u32(&shared->mark.generation);

	shardid_refuse_in_recovery();
	shardid_mark_name_tranche(&shared->mark);
	if (pg_atomic_read_u32(&shared->seeded) == 0)
		seed();
	/* a clock outside the epoch's range says more than a changed epoch */
	shardid_check_moment(shardid_clock_ms(), shardid_epoch_ms, "current time", false);
	shardid_check_epoch();
	ready_settings = shardid_epoch_generation;
	ready_shared = generation;
}

/*
 * Start shard past the stored id (stored.c, or a table's newest id that
 * set_id() read), which a restore, pg_upgrade or a move may have put there,
 * or which a mark set back by hand no longer covers.  The stored id itself
 * is the shard's state: the shard's next id may share its millisecond.
 *
 * Anyone who may insert a row (and roll it back) stores an id, so an id is
 * followed only up to what the clock allows anyway: shardid.max_lead_ms
 * ahead of the clock, plus the window and margin by which H runs ahead of
 * an id.  H follows the shard's ids as ever (never further than that
 * ahead of the clock, however often this is tried); the latest clock
 * reading (clock_high) does not, so the lead limit still applies.  An id
 * further ahead was not made by this clock under this epoch, or the clock
 * that made it was far ahead: counted (mark_status()), not followed; a
 * superuser can raise H past it (raise_high_water()).  Returns whether the
 * shard's ids now sort after the stored one.
 */
bool
shardid_strict_start_past(int32 shard, int64 stored_id)
{
	int64		ms = shardid_epoch_ms + shardid_unpack_millis(stored_id);
	uint64		state = SHARDID_STATE(ms, (uint64) shardid_unpack_seq(stored_id));
	int64		bound = shardid_clock_ms() + shardid_max_lead_ms +
		SHARDID_MARK_WINDOW_MS + SHARDID_MARK_MARGIN_MS;

	Assert(shared != NULL);
	if (pg_atomic_read_u32(&shared->seeded) == 0)
		seed();
	if (ms > bound)
	{
		pg_atomic_fetch_add_u64(&shared->stored_too_far, 1);
		return false;
	}
	if (state > pg_atomic_read_u64(&shared->slots[shard].state))
	{
		pg_atomic_fetch_add_u64(&shared->stored_moves, 1);
		atomic_max(&shared->slots[shard].state, state);
	}
	return true;
}

/*
 * The first stamp of a shard in this backend (and the first after a
 * relation cache invalidation): start the shard past the newest id stored
 * in its tables.  A clock behind that id does not wait for it: the shard
 * borrows ahead as when a millisecond is full.
 */
static pg_noinline void
start_past_stored(int32 shard)
{
	ShardidStored stored;

	shardid_stored_newest(shard, &stored);
	pg_atomic_fetch_add_u64(&shared->stored_checks, 1);
	if (stored.unindexed > 0)
		pg_atomic_fetch_add_u64(&shared->stored_unindexed, stored.unindexed);
	if (stored.newest_id >= 0)
		(void) shardid_strict_start_past(shard, stored.newest_id);
	shardid_stored_set_checked(shard);
}

/*
 * Raise H to at least unix_ms and start every shard past it, for
 * shardid.raise_high_water().  Returns H.
 */
int64
shardid_strict_raise_high_water(int64 unix_ms)
{
	int64		high;

	if (pg_atomic_read_u32(&shared->seeded) == 0)
		seed();
	high = shardid_mark_set(&shared->mark, unix_ms);
	for (int i = 0; i < SHARDID_NSHARDS; i++)
		atomic_max(&shared->slots[i].state, SHARDID_STATE(unix_ms, SHARDID_SEQ_MASK));
	atomic_max(&shared->clock_high, (uint64) unix_ms);
	return high;
}

/* what a backend checks before it stamps shard: settings, the mark, stored ids */
static inline void
before_stamping(int32 shard)
{
	if (unlikely(ready_settings != shardid_epoch_generation ||
				 ready_shared != pg_atomic_read_u32(&shared->mark.generation)))
		prepare();
	if (unlikely(!shardid_stored_is_checked(shard)))
		start_past_stored(shard);
}

/*
 * The clock, in Unix ms; *behind: it reads earlier than the latest reading
 * any session has seen (counted for shardid.info()).  The latest reading
 * is read before the clock: every value in it was read from the clock
 * earlier, so a clock reading below it means the clock stepped back, not
 * that this backend was slow.
 */
static inline int64
read_clock(bool *behind)
{
	uint64		high = pg_atomic_read_u64(&shared->clock_high);
	int64		now;

	pg_read_barrier();
	now = shardid_clock_ms();
	shardid_check_moment(now, shardid_epoch_ms, "current time", false);

	*behind = (uint64) now < high;
	if (unlikely(*behind))
	{
		pg_atomic_fetch_add_u64(&shared->clock_behind_calls, 1);
		atomic_max(&shared->max_step_back_ms, high - (uint64) now);
	}
	else if ((uint64) now > high)
		atomic_max(&shared->clock_high, (uint64) now);
	return now;
}

/*
 * Stamp one id of shard, its seq field from the shard's counter.  Returns
 * the stamp, SHARDID_STATE(unix ms, seq field).
 */
uint64
shardid_strict_stamp(int32 shard)
{
	pg_atomic_uint64 *slot = &shared->slots[shard].state;

	before_stamping(shard);

	for (bool waited = false;; waited = true)
	{
		int64		now;
		uint64		last;
		uint64		next;
		bool		behind;

		now = read_clock(&behind);

		last = pg_atomic_read_u64(slot);
		for (;;)
		{
			int64		ms;

			next = shardid_strict_next(last, now);
			ms = SHARDID_STATE_MS(next);
			/*
			 * Past the lead allowed: wait for the clock (below).  But when
			 * the shard was already further ahead than that (the setting
			 * was lowered), the lead is not drained by waiting: an id in
			 * the shard's current millisecond is taken at once, a new
			 * millisecond after one wait of at most 1 ms.
			 */
			if (unlikely(ms - now > shardid_max_lead_ms) && !behind)
			{
				int64		last_ms = SHARDID_STATE_MS(last);

				if (last_ms - now <= shardid_max_lead_ms ||
					(ms > last_ms && !waited))
					break;
			}
			/* no id past the durable H; raise it ahead of need */
			if (unlikely(ms + SHARDID_MARK_MARGIN_MS >
						 (int64) pg_atomic_read_u64(&shared->mark.high_water)))
			{
				bool		past = ms > (int64) pg_atomic_read_u64(&shared->mark.high_water);

				shardid_mark_raise(&shared->mark, ms);
				if (past)
				{
					/* raising took time: derive again */
					last = pg_atomic_read_u64(slot);
					continue;
				}
			}
			if (pg_atomic_compare_exchange_u64(slot, &last, next))
				return next;
			/* another session stamped this shard meanwhile: derive again */
		}

		/*
		 * This shard is as far ahead of the clock as it may go: wait until
		 * the clock allows the next millisecond, but never longer than one
		 * millisecond of the clock.  A lead past shardid.max_lead_ms (the
		 * setting was lowered) is not drained by waiting: it shrinks as the
		 * clock catches up when fewer than 1024 ids a millisecond are asked
		 * for, and grows by at most one millisecond per waiting session
		 * per millisecond of the clock otherwise.
		 */
		pg_atomic_fetch_add_u64(&shared->clock_waits, 1);
		shardid_wait_for_clock(Min(SHARDID_STATE_MS(next) - shardid_max_lead_ms,
								   now + 1));
	}
}

/*
 * Reserve up to want consecutive ids of shard (shardid.next_ids()) with one
 * compare-and-swap: the stamps *first to the return value, inclusive, all
 * of them in the shard's state in one step, under the same rules as
 * shardid_strict_stamp() (H raised past the last first, the lead limited
 * by shardid.max_lead_ms).  When the lead does not allow all of them, as
 * many as it allows are reserved (at least one), and the caller asks again
 * for the rest; when it allows none, this waits for the clock as a stamp
 * does.
 */
uint64
shardid_strict_reserve(int32 shard, int64 want, uint64 *first)
{
	pg_atomic_uint64 *slot = &shared->slots[shard].state;

	Assert(want >= 1);
	before_stamping(shard);

	for (bool waited = false;; waited = true)
	{
		int64		now;
		uint64		last;
		uint64		next;
		uint64		end;
		bool		behind;

		now = read_clock(&behind);

		last = pg_atomic_read_u64(slot);
		for (;;)
		{
			next = shardid_strict_next(last, now);
			end = next + (uint64) (want - 1);

			/*
			 * Past the lead allowed: as many as it allows.  A shard already
			 * further ahead (the setting was lowered) takes the rest of its
			 * current millisecond at once, one more millisecond after one
			 * wait, as a stamp does.
			 */
			if (unlikely(SHARDID_STATE_MS(end) - now > shardid_max_lead_ms) && !behind)
			{
				int64		last_ms = SHARDID_STATE_MS(last);
				int64		limit_ms = now + shardid_max_lead_ms;

				if (last_ms > limit_ms)
					limit_ms = waited ? last_ms + 1 : last_ms;
				if (SHARDID_STATE(limit_ms, SHARDID_SEQ_MASK) < next)
					break;
				end = Min(end, SHARDID_STATE(limit_ms, SHARDID_SEQ_MASK));
			}
			/* no id past the durable H; raise it for the last ahead of need */
			if (unlikely(SHARDID_STATE_MS(end) + SHARDID_MARK_MARGIN_MS >
						 (int64) pg_atomic_read_u64(&shared->mark.high_water)))
			{
				bool		past = SHARDID_STATE_MS(end) >
					(int64) pg_atomic_read_u64(&shared->mark.high_water);

				shardid_mark_raise(&shared->mark, SHARDID_STATE_MS(end));
				if (past)
				{
					last = pg_atomic_read_u64(slot);
					continue;
				}
			}
			if (pg_atomic_compare_exchange_u64(slot, &last, end))
			{
				*first = next;
				return end;
			}
		}

		/* none allowed: wait for the clock, at most one millisecond */
		pg_atomic_fetch_add_u64(&shared->clock_waits, 1);
		shardid_wait_for_clock(Min(SHARDID_STATE_MS(next) - shardid_max_lead_ms,
								   now + 1));
	}
}

void
shardid_strict_counters(ShardidCounters *counters, int64 *seeded_ms,
						int64 *high_water_writes)
{
	Assert(shared != NULL);
	counters->clock_waits = pg_atomic_read_u64(&shared->clock_waits);
	counters->clock_behind_calls = pg_atomic_read_u64(&shared->clock_behind_calls);
	counters->max_step_back_ms = pg_atomic_read_u64(&shared->max_step_back_ms);
	*seeded_ms = pg_atomic_read_u32(&shared->seeded) ? shared->seeded_ms : -1;
	*high_water_writes = (int64) pg_atomic_read_u64(&shared->mark.writes);
}

/* how the mark and the stored-id checks went, for shardid.mark_status() */
void
shardid_strict_mark_counters(int64 *unconfirmed, int64 *stored_checks,
							 int64 *stored_moves, int64 *stored_unindexed,
							 int64 *stored_too_far)
{
	*stored_too_far = (int64) pg_atomic_read_u64(&shared->stored_too_far);
	*unconfirmed = (int64) pg_atomic_read_u64(&shared->mark.unconfirmed);
	*stored_checks = (int64) pg_atomic_read_u64(&shared->stored_checks);
	*stored_moves = (int64) pg_atomic_read_u64(&shared->stored_moves);
	*stored_unindexed = (int64) pg_atomic_read_u64(&shared->stored_unindexed);
}
