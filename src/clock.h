/*-------------------------------------------------------------------------
 *
 * clock.h
 *	  The wall clock, time conversions and the checks that keep an id's
 *	  time inside the part of the time field that sorts, and its shard
 *	  inside the shard field.
 *
 * Depends on nothing of shardid but the pure core: the epoch is passed in
 * by the caller.
 *
 * src/clock.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_CLOCK_H
#define SHARDID_CLOCK_H

#include "datatype/timestamp.h"

#include "shardid_core.h"

/* ids count milliseconds; PostgreSQL's timestamps and sleeps, microseconds */
#define SHARDID_MS_PER_SEC		1000
#define SHARDID_USECS_PER_MS	1000

/* PostgreSQL timestamps count microseconds from 2000-01-01 */
#define SHARDID_UNIX_TO_PG_EPOCH_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * SHARDID_MS_PER_SEC)

/* floor division, for times before 1970 or 2000 */
static inline int64
shardid_floor_div(int64 a, int64 b)
{
	int64		q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static inline TimestampTz
shardid_unix_ms_to_timestamptz(int64 unix_ms)
{
	return (unix_ms - SHARDID_UNIX_TO_PG_EPOCH_MS) * SHARDID_USECS_PER_MS;
}

static inline int64
shardid_timestamptz_to_unix_ms(TimestampTz ts)
{
	return shardid_floor_div(ts, SHARDID_USECS_PER_MS) + SHARDID_UNIX_TO_PG_EPOCH_MS;
}

extern const char *shardid_format_unix_ms(int64 unix_ms);
extern int64 shardid_clock_ms(void);
extern void shardid_wait_for_clock(int64 unix_ms);
extern pg_noinline void shardid_moment_error(int64 unix_ms, int64 epoch_ms,
											 const char *what, bool show_value);

/*
 * A moment (ms since the Unix epoch) must lie in the part of the time field
 * that sorts: from the epoch up to, not including, the sign bit.  what names
 * the moment in the message; the moment itself is shown when the user gave
 * it (show_value), not when it is the ever-changing clock.
 */
static inline void
shardid_check_moment(int64 unix_ms, int64 epoch_ms, const char *what,
					 bool show_value)
{
	int64		millis = unix_ms - epoch_ms;

	if (likely(millis >= 0 && millis < SHARDID_SIGN_MILLIS))
		return;
	shardid_moment_error(unix_ms, epoch_ms, what, show_value);
}

/* the check of a shard argument, the same in every entry point */
static inline void
shardid_check_shard(int32 shard)
{
	if (unlikely(!shardid_shard_ok(shard)))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("shard %d is out of range", shard),
				 errdetail("A shard must be between 0 and %d (13 bits).",
						   SHARDID_MAX_SHARD),
				 errhint("Pass a logical shard between 0 and %d: with N logical shards (at most %d), a key's shard is key %% N.",
						 SHARDID_MAX_SHARD, SHARDID_MAX_SHARD + 1)));
}

#endif							/* SHARDID_CLOCK_H */
