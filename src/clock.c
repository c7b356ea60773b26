/*-------------------------------------------------------------------------
 *
 * clock.c
 *	  The wall clock, waiting for it, and the messages about moments that
 *	  fall outside the sortable part of the time field.
 *
 * src/clock.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "pgtime.h"
#include "utils/datetime.h"
#include "utils/timestamp.h"

#include "clock.h"

/*
 * Room for a moment as text: "YYYY-MM-DD HH:MM:SS.mmm+00" is 26 characters,
 * and a timestamp's year can have up to 6 digits and a sign.
 */
#define MOMENT_TEXT_SIZE	64

/*
 * A wait for the clock sleeps, but for its last millisecond, which it spins
 * on: a sleep may overrun, and a stamp waiting for the next millisecond
 * should lose no part of it.
 */
#define WAIT_SPIN_MS		1

/*
 * A moment as "YYYY-MM-DD HH:MM:SS.mmm+00", independent of the session's
 * DateStyle and TimeZone, so that messages read the same in every log.
 */
const char *
shardid_format_unix_ms(int64 unix_ms)
{
	struct pg_tm tm;
	fsec_t		fsec;
	char	   *buf = palloc(MOMENT_TEXT_SIZE);

	if (timestamp2tm(shardid_unix_ms_to_timestamptz(unix_ms), NULL, &tm, &fsec,
					 NULL, NULL) != 0)
		return "(out of range)";
	snprintf(buf, MOMENT_TEXT_SIZE, "%04d-%02d-%02d %02d:%02d:%02d.%03d+00",
			 tm.tm_year, tm.tm_mon, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (int) (fsec / SHARDID_USECS_PER_MS));
	return buf;
}

/* wall clock (not transaction time), in ms since the Unix epoch */
int64
shardid_clock_ms(void)
{
	return shardid_timestamptz_to_unix_ms(GetCurrentTimestamp());
}

/*
 * Wait until the wall clock reads unix_ms or later.  Long waits sleep,
 * the last millisecond spins so that no part of it is lost.  Returns early
 * if the clock steps back, so that the caller can reconsider.
 */
void
shardid_wait_for_clock(int64 unix_ms)
{
	int64		start = shardid_clock_ms();
	int64		now = start;

	while (now < unix_ms && now >= start)
	{
		CHECK_FOR_INTERRUPTS();
		if (unix_ms - now > WAIT_SPIN_MS)
			pg_usleep((unix_ms - now - WAIT_SPIN_MS) * SHARDID_USECS_PER_MS);
		now = shardid_clock_ms();
	}
}

/* the error of shardid_check_moment() */
void
shardid_moment_error(int64 unix_ms, int64 epoch_ms, const char *what,
					 bool show_value)
{
	if (unix_ms < epoch_ms)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("%s is before shardid.epoch", what),
				 show_value ?
				 errdetail("The %s is %s; shardid.epoch is %s.", what,
						   shardid_format_unix_ms(unix_ms),
						   shardid_format_unix_ms(epoch_ms)) :
				 errdetail("shardid.epoch is %s.",
						   shardid_format_unix_ms(epoch_ms)),
				 errhint("Check the system clock and the shardid.epoch setting.")));
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("%s is past the range of shardid ids", what),
			 errdetail("Ids made at or after %s (2^40 ms after shardid.epoch %s) would have the sign bit set and sort before all earlier ids.",
					   shardid_format_unix_ms(epoch_ms + SHARDID_SIGN_MILLIS),
					   shardid_format_unix_ms(epoch_ms)),
			 errhint("Check the system clock and the shardid.epoch setting.")));
}
