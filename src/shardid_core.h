/*-------------------------------------------------------------------------
 *
 * shardid_core.h
 *	  The id layout and the stamping rules of shardid, in plain C.
 *
 * An id is a 64-bit value laid out as
 *
 *	   63                        23            10          0
 *	   | 41 bits: ms since epoch | 13 bits: shard | 10 bits: seq & 1023 |
 *
 * Nothing in this file calls PostgreSQL, so the arithmetic and the
 * uniqueness rules can be unit-tested and fuzzed outside the server.  All
 * clock readings here are milliseconds since the Unix epoch; the custom
 * epoch is applied by the caller, so that stamping state survives a change
 * of the shardid.epoch setting without ever going back.
 *
 * src/shardid_core.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_CORE_H
#define SHARDID_CORE_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define SHARDID_TIME_BITS	41
#define SHARDID_SHARD_BITS	13
#define SHARDID_SEQ_BITS	10

#define SHARDID_SHARD_SHIFT SHARDID_SEQ_BITS
#define SHARDID_TIME_SHIFT	(SHARDID_SHARD_BITS + SHARDID_SEQ_BITS)

#define SHARDID_MAX_SHARD	((1 << SHARDID_SHARD_BITS) - 1) /* 8191 */
#define SHARDID_NSHARDS		(SHARDID_MAX_SHARD + 1)
#define SHARDID_SEQ_MASK	((1 << SHARDID_SEQ_BITS) - 1)	/* 1023 */
#define SHARDID_SEQS_PER_MS (SHARDID_SEQ_MASK + 1)	/* 1024 */

/* make_id() accepts every value of the 41-bit time field */
#define SHARDID_MILLIS_LIMIT (INT64_C(1) << SHARDID_TIME_BITS)
/* next_id(), min_id() and max_id() stop below the sign bit */
#define SHARDID_SIGN_MILLIS (INT64_C(1) << (SHARDID_TIME_BITS - 1))

/* ---------------------------------------------------------------------
 * Packing and unpacking.  Callers check the ranges first (see the
 * shardid_*_ok helpers); the decoders accept any 64-bit value and read it
 * with unsigned shifts, so an id with the top bit set decodes to its 41-bit
 * time field rather than to a negative number.
 * ---------------------------------------------------------------------
 */
static inline bool
shardid_shard_ok(int64_t shard)
{
	return shard >= 0 && shard <= SHARDID_MAX_SHARD;
}

static inline bool
shardid_millis_ok(int64_t millis)
{
	return millis >= 0 && millis < SHARDID_MILLIS_LIMIT;
}

static inline int64_t
shardid_pack(int64_t millis, int32_t shard, int64_t seq)
{
	uint64_t	id;

	id = ((uint64_t) millis << SHARDID_TIME_SHIFT) |
		((uint64_t) shard << SHARDID_SHARD_SHIFT) |
		((uint64_t) seq & SHARDID_SEQ_MASK);
	return (int64_t) id;
}

static inline int64_t
shardid_unpack_millis(int64_t id)
{
	return (int64_t) ((uint64_t) id >> SHARDID_TIME_SHIFT);
}

static inline int32_t
shardid_unpack_shard(int64_t id)
{
	return (int32_t) (((uint64_t) id >> SHARDID_SHARD_SHIFT) & SHARDID_MAX_SHARD);
}

static inline int32_t
shardid_unpack_seq(int64_t id)
{
	return (int32_t) ((uint64_t) id & SHARDID_SEQ_MASK);
}

/* smallest and largest id whose time field is millis (any shard, any seq) */
static inline int64_t
shardid_min_for_millis(int64_t millis)
{
	return (int64_t) ((uint64_t) millis << SHARDID_TIME_SHIFT);
}

static inline int64_t
shardid_max_for_millis(int64_t millis)
{
	return (int64_t) (((uint64_t) millis << SHARDID_TIME_SHIFT) |
					  ((UINT64_C(1) << SHARDID_TIME_SHIFT) - 1));
}

/* ---------------------------------------------------------------------
 * Session guard: used when no shared state is available.
 *
 * Per shard, a session remembers the millisecond it stamped last and which
 * of the 1024 values of the seq field it has used in it (a bitmap).  Two ids
 * of one shard collide exactly when they carry the same millisecond and the
 * same seq & 1023, so the bitmap is an exact test: any 1024 distinct values
 * fit in one millisecond, whatever their alignment, and no value is ever
 * handed out twice, even when several sequences feed one shard.
 *
 * When the value is taken and the wall clock still reads that millisecond,
 * the caller must wait for the next one: a session never stamps a time ahead
 * of the clock, because without shared state another session could later
 * stamp that same millisecond.  When the wall clock reads *earlier* than the
 * remembered millisecond (it stepped back), the session keeps its own time
 * and moves on to the next millisecond instead, so its ids never go back.
 * ---------------------------------------------------------------------
 */
typedef struct ShardidWindow
{
	int64_t		unix_ms;		/* millisecond stamped last, -1 if none */
	uint64_t	used[SHARDID_SEQS_PER_MS / 64];
} ShardidWindow;

#define SHARDID_MUST_WAIT	(-1)

static inline void
shardid_window_init(ShardidWindow *w)
{
	w->unix_ms = -1;
	memset(w->used, 0, sizeof(w->used));
}

static inline void
shardid_window_open(ShardidWindow *w, int64_t unix_ms)
{
	w->unix_ms = unix_ms;
	memset(w->used, 0, sizeof(w->used));
}

/*
 * Stamp seq for a shard whose state is w, the wall clock reading now_ms.
 * Returns the millisecond (Unix) the id must carry, or SHARDID_MUST_WAIT if
 * the caller has to wait until the clock passes w->unix_ms and try again.
 */
static inline int64_t
shardid_window_stamp(ShardidWindow *w, int64_t now_ms, int64_t seq)
{
	unsigned	bit = (unsigned) ((uint64_t) seq & SHARDID_SEQ_MASK);
	uint64_t	mask = UINT64_C(1) << (bit & 63);
	uint64_t   *word = &w->used[bit >> 6];

	if (now_ms > w->unix_ms)
		shardid_window_open(w, now_ms);
	else if (*word & mask)
	{
		if (now_ms == w->unix_ms)
			return SHARDID_MUST_WAIT;
		/* clock is behind this session's time: keep going forward */
		shardid_window_open(w, w->unix_ms + 1);
	}
	*word |= mask;
	return w->unix_ms;
}

/* ---------------------------------------------------------------------
 * Strict rule: used with state shared by all sessions of a server.
 *
 * The state of a shard is one 64-bit word, (unix_ms << 10) | seq_field, of
 * the last id stamped for that shard.  Every new id of the shard is strictly
 * greater than it, so ids of one shard are unique and increase in the order
 * they are stamped.  The seq field comes from the shard's own counter, never
 * from the caller: the first id of a new millisecond gets 0, later ones
 * count up, and the 1025th in a millisecond carries into the next
 * millisecond ("borrows" it; the caller bounds how far ahead of the clock
 * that may go).  So a millisecond holds 1024 ids whatever the order in which
 * concurrent callers arrive.  The word fits one compare-and-swap, so no lock
 * is needed.
 * ---------------------------------------------------------------------
 */
#define SHARDID_STATE_MS(state)		((int64_t) ((state) >> SHARDID_SEQ_BITS))
#define SHARDID_STATE(ms, field)	(((uint64_t) (ms) << SHARDID_SEQ_BITS) | (uint64_t) (field))

/* next state after last at clock reading now_ms */
static inline uint64_t
shardid_strict_next(uint64_t last, int64_t now_ms)
{
	uint64_t	candidate = SHARDID_STATE(now_ms, 0);

	return candidate > last ? candidate : last + 1;
}

#endif							/* SHARDID_CORE_H */
