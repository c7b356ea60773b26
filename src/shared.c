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
 * waits for the clock to advance by one (never longer).
 *
 * Past the limit already (the setting was lowered, the clock stepped back,
 * H was raised ahead of the clock, a floor was followed): ids of the
 * shard's current millisecond are taken at once, and the shard opens one
 * new millisecond per millisecond of the clock, whoever asks: the lead
 * never grows, and nobody waits for it to drain (that would last as long
 * as a step back of the clock).  The calls made while the clock reads
 * earlier than the latest reading any session has seen are counted for
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

/* one shard's state alone on its cache line, so shards do not contend */
#define SHARDID_SLOT_SIZE 64

typedef struct ShardidSlotData
{
	pg_atomic_uint64 state;		/* (unix_ms << 10) | seq field, last id */
	pg_atomic_uint64 past_lead;	/* clock ms of the last millisecond opened
								 * past the lead limit */
	pg_atomic_uint64 ids;		/* ids stamped since the server started */
	pg_atomic_uint64 waits;		/* waits for the clock since then */
} ShardidSlotData;

typedef union ShardidSlot
{
	ShardidSlotData d;
	char		pad[SHARDID_SLOT_SIZE];
} ShardidSlot;

typedef struct ShardidShared
{
	ShardidMark mark;			/* H and the lock that seeds */
	pg_atomic_uint64 clock_high;	/* latest clock reading seen, unix ms */
	pg_atomic_uint64 clock_waits;
	pg_atomic_uint64 clock_behind_calls;
	pg_atomic_uint64 max_step_back_ms;
	pg_atomic_uint64 stored_checks;	/* floors raised (stored.c, floor.c) */
	pg_atomic_uint64 stored_moves;	/* of them, moved the shard forward */
	pg_atomic_uint64 stored_unindexed;	/* (1.2: tables skipped; now 0) */
	pg_atomic_uint64 stored_too_far;	/* floors beyond the bound: not followed */
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
	{
		pg_atomic_init_u64(&s->slots[i].d.state, 0);
		pg_atomic_init_u64(&s->slots[i].d.past_lead, 0);
		pg_atomic_init_u64(&s->slots[i].d.ids, 0);
		pg_atomic_init_u64(&s->slots[i].d.waits, 0);
	}
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
			atomic_max(&shared->slots[i].d.state,
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
	shardid_check_database_floors();
	ready_settings = shardid_epoch_generation;
	ready_shared = generation;
}

/*
 * The latest id time (Unix ms) strict mode follows from a stored id or a
 * floor: shardid.max_lead_ms ahead of the clock, plus the window and
 * margin by which H runs ahead of an id.  Anyone who may insert a row
 * stores an id, so nothing further ahead is followed.
 */
int64
shardid_follow_limit_ms(void)
{
	return shardid_clock_ms() + shardid_max_lead_ms +
		SHARDID_MARK_WINDOW_MS + SHARDID_MARK_MARGIN_MS;
}

/*
 * Start shard past the stored id (a floor raised by floor.c, or a table's
 * newest id that set_id() read), which a restore, pg_upgrade or a move may
 * have put there.  The stored id itself is the shard's state: the shard's
 * next id may share its millisecond.
 *
 * Anyone who may insert a row (and roll it back) stores an id, so an id is
 * followed only up to what the clock allows anyway: shardid.max_lead_ms
 * ahead of the clock, plus the window and margin by which H runs ahead of
 * an id (stored.c, shardid_stored_bound()).  An id further ahead was not
 * made by this clock under this epoch, or the clock that made it was far
 * ahead: counted (mark_status()), not followed; a superuser can raise H
 * past it (raise_high_water()).  Returns whether the shard's ids now sort
 * after the stored one.
 */
bool
shardid_strict_start_past(int32 shard, int64 stored_id)
{
	int64		ms = shardid_epoch_ms + shardid_unpack_millis(stored_id);
	uint64		state = SHARDID_STATE(ms, (uint64) shardid_unpack_seq(stored_id));
	int64		bound = shardid_follow_limit_ms();

	Assert(shared != NULL);
	if (pg_atomic_read_u32(&shared->seeded) == 0)
		seed();
	if (ms > bound)
	{
		pg_atomic_fetch_add_u64(&shared->stored_too_far, 1);
		return false;
	}
	if (state > pg_atomic_read_u64(&shared->slots[shard].d.state))
	{
		pg_atomic_fetch_add_u64(&shared->stored_moves, 1);
		atomic_max(&shared->slots[shard].d.state, state);
	}
	return true;
}

/*
 * Raise the floor of shard to floor_id (floor.c: read from the shard's
 * tables at an explicit moment, or carried by the registry): H durably
 * past its time first, so that after a crash or on a promoted standby
 * every shard starts past it, then the shard's state.  Returns false, and
 * changes nothing, when the id lies beyond the bound (see above).
 */
bool
shardid_strict_raise_floor(int32 shard, int64 floor_id)
{
	int64		ms = shardid_epoch_ms + shardid_unpack_millis(floor_id);
	int64		bound = shardid_follow_limit_ms();

	Assert(shared != NULL);
	if (pg_atomic_read_u32(&shared->seeded) == 0)
		seed();
	pg_atomic_fetch_add_u64(&shared->stored_checks, 1);
	if (ms > bound)
	{
		pg_atomic_fetch_add_u64(&shared->stored_too_far, 1);
		return false;
	}
	shardid_mark_raise(&shared->mark, ms);
	return shardid_strict_start_past(shard, floor_id);
}

/*
 * Whether every id shard makes from now on sorts after stored_id: the
 * shard's state is at or past it, or the clock is past its millisecond.
 * Read without seeding (doctor() may run on a standby): unseeded, the
 * shard starts past max(H, clock).
 */
bool
shardid_strict_covers(int32 shard, int64 stored_id)
{
	int64		ms = shardid_epoch_ms + shardid_unpack_millis(stored_id);
	uint64		state = SHARDID_STATE(ms, (uint64) shardid_unpack_seq(stored_id));
	int64		now = shardid_clock_ms();
	uint64		last;

	Assert(shared != NULL);
	if (pg_atomic_read_u32(&shared->seeded) == 0)
		last = SHARDID_STATE(Max(shardid_mark_durable(), now), SHARDID_SEQ_MASK);
	else
		last = pg_atomic_read_u64(&shared->slots[shard].d.state);
	return state <= last || ms < now;
}

/*
 * The smallest id of shard that shardid_strict_covers() may not cover: of
 * the later of the clock's millisecond and that of the shard's state (seq
 * 0).  A write of explicit ids (floor.c) reads only ids at or above it, so
 * that one after ids this server made reads no more than a descent.
 */
int64
shardid_strict_uncovered_from(int32 shard)
{
	int64		now = shardid_clock_ms();
	int64		last_ms;

	Assert(shared != NULL);
	if (pg_atomic_read_u32(&shared->seeded) == 0)
		last_ms = Max(shardid_mark_durable(), now);
	else
		last_ms = SHARDID_STATE_MS(pg_atomic_read_u64(&shared->slots[shard].d.state));
	last_ms = Max(last_ms, now) - shardid_epoch_ms;
	if (last_ms < 0)
		return 0;
	if (last_ms >= SHARDID_SIGN_MILLIS)
		return PG_INT64_MAX;
	return shardid_pack(last_ms, shard, 0);
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
		atomic_max(&shared->slots[i].d.state, SHARDID_STATE(unix_ms, SHARDID_SEQ_MASK));
	atomic_max(&shared->clock_high, (uint64) unix_ms);
	return high;
}

/*
 * What a backend checks before it stamps: the settings and the mark.  No
 * table is read: floors are raised at the moments data arrives (floor.c).
 */
static inline void
before_stamping(void)
{
	if (unlikely(ready_settings != shardid_epoch_generation ||
				 ready_shared != pg_atomic_read_u32(&shared->mark.generation)))
		prepare();
}

/*
 * Past the lead limit (the setting was lowered, the clock stepped back, H
 * was raised ahead of the clock, a floor was followed): whether this call
 * may open the shard's next millisecond now.  One millisecond of id time
 * per millisecond of the clock and shard, however many sessions ask, so
 * that a lead past shardid.max_lead_ms never grows; the others take ids
 * of the current millisecond or wait for the clock (at most 1 ms).
 */
static bool
claim_past_lead(ShardidSlot *slot, int64 now)
{
	uint64		opened = pg_atomic_read_u64(&slot->d.past_lead);

	/*
	 * Any other reading than the last claim's: a clock that stepped back
	 * below it claims at once (waiting for it to catch up would stall the
	 * shard as long as the step).
	 */
	return (int64) opened != now &&
		pg_atomic_compare_exchange_u64(&slot->d.past_lead, &opened, (uint64) now);
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
	pg_atomic_uint64 *slot = &shared->slots[shard].d.state;

	before_stamping();

	for (;;)
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
			 * the shard was already further ahead than that, the lead is
			 * not drained by waiting (a clock stepped back would make that
			 * as long as the step): an id in the shard's current
			 * millisecond is taken at once, a new millisecond once per
			 * millisecond of the clock (claim_past_lead()).
			 */
			if (unlikely(ms - now > shardid_max_lead_ms))
			{
				int64		last_ms = SHARDID_STATE_MS(last);

				if (last_ms - now <= shardid_max_lead_ms ||
					(ms > last_ms && !claim_past_lead(&shared->slots[shard], now)))
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
			{
				pg_atomic_fetch_add_u64(&shared->slots[shard].d.ids, 1);
				return next;
			}
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
		pg_atomic_fetch_add_u64(&shared->slots[shard].d.waits, 1);
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
	pg_atomic_uint64 *slot = &shared->slots[shard].d.state;

	Assert(want >= 1);
	before_stamping();

	for (;;)
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
			 * further ahead takes the rest of its current millisecond at
			 * once, one more millisecond once per millisecond of the clock,
			 * as a stamp does.
			 */
			if (unlikely(SHARDID_STATE_MS(end) - now > shardid_max_lead_ms))
			{
				int64		last_ms = SHARDID_STATE_MS(last);
				int64		limit_ms = now + shardid_max_lead_ms;

				if (last_ms > limit_ms)
					limit_ms = SHARDID_STATE(last_ms, SHARDID_SEQ_MASK) < end &&
						claim_past_lead(&shared->slots[shard], now) ?
						last_ms + 1 : last_ms;
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
				pg_atomic_fetch_add_u64(&shared->slots[shard].d.ids, end - next + 1);
				*first = next;
				return end;
			}
		}

		/* none allowed: wait for the clock, at most one millisecond */
		pg_atomic_fetch_add_u64(&shared->clock_waits, 1);
		pg_atomic_fetch_add_u64(&shared->slots[shard].d.waits, 1);
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

/*
 * One shard's state for shardid.shard_state: its last stamp (the seed once
 * seeded, 0 before), ids and waits since the server started.  Returns
 * false before the first stamp after a start seeded the shards.
 */
bool
shardid_strict_shard(int32 shard, uint64 *state, uint64 *ids, uint64 *waits)
{
	Assert(shared != NULL);
	if (pg_atomic_read_u32(&shared->seeded) == 0)
		return false;
	*state = pg_atomic_read_u64(&shared->slots[shard].d.state);
	*ids = pg_atomic_read_u64(&shared->slots[shard].d.ids);
	*waits = pg_atomic_read_u64(&shared->slots[shard].d.waits);
	return true;
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
