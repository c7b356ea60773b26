/*-------------------------------------------------------------------------
 *
 * shardid.c
 *	  SQL-callable functions of shardid: 64-bit, time-sortable ids for
 *	  schema-per-shard databases, their decoders, and the settings.
 *
 * next_id() stamps the wall clock into an id.  With shared state (strict.c)
 * ids of a shard are unique across all sessions of the server; without it,
 * a per-session guard (shardid_core.h) keeps them unique within the session
 * at any call rate.
 *
 * src/shardid.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "shardid.h"

PG_MODULE_MAGIC;

/* PostgreSQL timestamps count microseconds from 2000-01-01 */
#define UNIX_TO_PG_EPOCH_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/* latest epoch accepted: 9999-12-31 23:59:59.999 UTC */
#define SHARDID_EPOCH_MAX_MS INT64CONST(253402300799999)

#define SHARDID_DEFAULT_EPOCH "2026-01-01 00:00:00+00"

int64		shardid_epoch_ms;
int			shardid_max_lead_ms = 1000;
static char *shardid_epoch_string = NULL;

/*
 * Per-session guard: one window per shard, allocated on first use in a
 * memory context of its own, so pg_backend_memory_contexts shows its size.
 */
static MemoryContext session_context = NULL;
static ShardidWindow **session_windows = NULL;
static ShardidCounters session_counters;

void		_PG_init(void);

/* ---------------------------------------------------------------------
 * Time conversions and messages
 * ---------------------------------------------------------------------
 */

/* floor division, for times before 1970 or 2000 */
static inline int64
floor_div(int64 a, int64 b)
{
	int64		q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

static inline TimestampTz
unix_ms_to_timestamptz(int64 unix_ms)
{
	return (unix_ms - UNIX_TO_PG_EPOCH_MS) * 1000;
}

static inline int64
timestamptz_to_unix_ms(TimestampTz ts)
{
	return floor_div(ts, 1000) + UNIX_TO_PG_EPOCH_MS;
}

/*
 * A moment as "YYYY-MM-DD HH:MM:SS.mmm+00", independent of the session's
 * DateStyle and TimeZone, so that messages read the same in every log.
 */
static const char *
format_unix_ms(int64 unix_ms)
{
	struct pg_tm tm;
	fsec_t		fsec;
	char	   *buf = palloc(64);

	if (timestamp2tm(unix_ms_to_timestamptz(unix_ms), NULL, &tm, &fsec,
					 NULL, NULL) != 0)
		return "(out of range)";
	snprintf(buf, 64, "%04d-%02d-%02d %02d:%02d:%02d.%03d+00",
			 tm.tm_year, tm.tm_mon, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec, (int) (fsec / 1000));
	return buf;
}

/* ---------------------------------------------------------------------
 * Argument checks shared by every entry point
 * ---------------------------------------------------------------------
 */
static inline void
check_shard(int32 shard)
{
	if (unlikely(!shardid_shard_ok(shard)))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("shard %d is out of range", shard),
				 errdetail("A shard must be between 0 and %d (13 bits).",
						   SHARDID_MAX_SHARD)));
}

static inline void
check_seq(int64 seq)
{
	if (unlikely(seq < 0))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("sequence value " INT64_FORMAT " is negative", seq),
				 errdetail("The seq field takes the low 10 bits of a non-negative sequence value."),
				 errhint("Use a sequence with a non-negative MINVALUE and a positive INCREMENT.")));
}

static inline void
check_millis(int64 millis)
{
	if (unlikely(!shardid_millis_ok(millis)))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("millisecond value " INT64_FORMAT " is out of range", millis),
				 errdetail("The time field holds 0 to " INT64_FORMAT " milliseconds after shardid.epoch (41 bits).",
						   SHARDID_MILLIS_LIMIT - 1)));
}

/*
 * A moment (ms since the Unix epoch) must lie in the part of the time field
 * that sorts: from the epoch up to, not including, the sign bit.  what names
 * the moment in the message; the moment itself is shown when the user gave
 * it (show_value), not when it is the ever-changing clock.
 */
static void
check_sortable_moment(int64 unix_ms, const char *what, bool show_value)
{
	int64		millis = unix_ms - shardid_epoch_ms;

	if (likely(millis >= 0 && millis < SHARDID_SIGN_MILLIS))
		return;
	if (millis < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("%s is before shardid.epoch", what),
				 show_value ?
				 errdetail("The %s is %s; shardid.epoch is %s.", what,
						   format_unix_ms(unix_ms),
						   format_unix_ms(shardid_epoch_ms)) :
				 errdetail("shardid.epoch is %s.",
						   format_unix_ms(shardid_epoch_ms)),
				 errhint("Check the system clock and the shardid.epoch setting.")));
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("%s is past the range of shardid ids", what),
			 errdetail("Ids made at or after %s (2^40 ms after shardid.epoch %s) would have the sign bit set and sort before all earlier ids.",
					   format_unix_ms(shardid_epoch_ms + SHARDID_SIGN_MILLIS),
					   format_unix_ms(shardid_epoch_ms)),
			 errhint("Check the system clock and the shardid.epoch setting.")));
}

/* ---------------------------------------------------------------------
 * The clock
 * ---------------------------------------------------------------------
 */

/* wall clock (not transaction time), in ms since the Unix epoch */
int64
shardid_clock_ms(void)
{
	return timestamptz_to_unix_ms(GetCurrentTimestamp());
}

void
shardid_check_clock(int64 unix_ms)
{
	check_sortable_moment(unix_ms, "current time", false);
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
		if (unix_ms - now > 1)
			pg_usleep((unix_ms - now - 1) * 1000L);
		now = shardid_clock_ms();
	}
}

/* ---------------------------------------------------------------------
 * Stamping
 * ---------------------------------------------------------------------
 */

/* per-session guard; returns the id's millisecond, Unix based */
static int64
session_stamp(int32 shard, int64 seq)
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

		shardid_check_clock(now);
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

/* the id for shard and seq (seq < 0: the shard's counter), checked */
static int64
stamp_id(int32 shard, int64 seq)
{
	uint64		stamp;
	int64		ms;

	if (shardid_shared_kind() != SHARDID_SHARED_NONE)
		stamp = shardid_strict_stamp(shard);	/* seq is not used */
	else
		stamp = SHARDID_STATE(session_stamp(shard, seq),
							  (uint64) seq & SHARDID_SEQ_MASK);

	/* a clock that stepped back can leave the id's time ahead of the clock */
	ms = SHARDID_STATE_MS(stamp);
	check_sortable_moment(ms, "id time", false);
	return shardid_pack(ms - shardid_epoch_ms, shard,
						(int64) (stamp & SHARDID_SEQ_MASK));
}

PG_FUNCTION_INFO_V1(shardid_next_id);
Datum
shardid_next_id(PG_FUNCTION_ARGS)
{
	int32		shard = PG_GETARG_INT32(0);
	int64		seq = PG_GETARG_INT64(1);

	check_shard(shard);
	check_seq(seq);
	PG_RETURN_INT64(stamp_id(shard, seq));
}

PG_FUNCTION_INFO_V1(shardid_next_id_counter);
Datum
shardid_next_id_counter(PG_FUNCTION_ARGS)
{
	int32		shard = PG_GETARG_INT32(0);

	check_shard(shard);
	if (shardid_shared_kind() == SHARDID_SHARED_NONE)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shardid.next_id(shard) needs shardid in shared_preload_libraries"),
				 errdetail("Without a sequence, the seq field comes from a counter in shared memory, which this server has not set up."),
				 errhint("Add shardid to shared_preload_libraries and restart the server, or call shardid.next_id(shard, nextval(sequence)).")));
	PG_RETURN_INT64(stamp_id(shard, -1));
}

PG_FUNCTION_INFO_V1(shardid_make_id);
Datum
shardid_make_id(PG_FUNCTION_ARGS)
{
	int64		millis = PG_GETARG_INT64(0);
	int32		shard = PG_GETARG_INT32(1);
	int64		seq = PG_GETARG_INT64(2);

	check_millis(millis);
	check_shard(shard);
	check_seq(seq);
	PG_RETURN_INT64(shardid_pack(millis, shard, seq));
}

/* ---------------------------------------------------------------------
 * Decoders
 * ---------------------------------------------------------------------
 */
PG_FUNCTION_INFO_V1(shardid_id_millis);
Datum
shardid_id_millis(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(shardid_unpack_millis(PG_GETARG_INT64(0)));
}

PG_FUNCTION_INFO_V1(shardid_id_shard);
Datum
shardid_id_shard(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(shardid_unpack_shard(PG_GETARG_INT64(0)));
}

PG_FUNCTION_INFO_V1(shardid_id_seq);
Datum
shardid_id_seq(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(shardid_unpack_seq(PG_GETARG_INT64(0)));
}

static inline TimestampTz
id_timestamptz(int64 id)
{
	return unix_ms_to_timestamptz(shardid_epoch_ms + shardid_unpack_millis(id));
}

PG_FUNCTION_INFO_V1(shardid_id_time);
Datum
shardid_id_time(PG_FUNCTION_ARGS)
{
	PG_RETURN_TIMESTAMPTZ(id_timestamptz(PG_GETARG_INT64(0)));
}

static TupleDesc
result_tupdesc(FunctionCallInfo fcinfo)
{
	TupleDesc	tupdesc;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	return BlessTupleDesc(tupdesc);
}

PG_FUNCTION_INFO_V1(shardid_decode);
Datum
shardid_decode(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	values[0] = TimestampTzGetDatum(id_timestamptz(id));
	values[1] = Int32GetDatum(shardid_unpack_shard(id));
	values[2] = Int32GetDatum(shardid_unpack_seq(id));
	values[3] = Int64GetDatum(shardid_unpack_millis(id));
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* ---------------------------------------------------------------------
 * Time-range helpers
 * ---------------------------------------------------------------------
 */
static int64
range_millis(TimestampTz ts)
{
	int64		unix_ms;

	if (TIMESTAMP_NOT_FINITE(ts))
		ereport(ERROR,
				(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp must be finite")));
	unix_ms = timestamptz_to_unix_ms(ts);
	check_sortable_moment(unix_ms, "timestamp", true);
	return unix_ms - shardid_epoch_ms;
}

PG_FUNCTION_INFO_V1(shardid_min_id);
Datum
shardid_min_id(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(shardid_min_for_millis(range_millis(PG_GETARG_TIMESTAMPTZ(0))));
}

PG_FUNCTION_INFO_V1(shardid_max_id);
Datum
shardid_max_id(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT64(shardid_max_for_millis(range_millis(PG_GETARG_TIMESTAMPTZ(0))));
}

/* ---------------------------------------------------------------------
 * shardid.info(): the settings, the layout and how stamping goes
 * ---------------------------------------------------------------------
 */
PG_FUNCTION_INFO_V1(shardid_info);
Datum
shardid_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	ShardidSharedKind kind = shardid_shared_kind();
	ShardidCounters counters;
	int64		seeded_ms = 0;
	Datum		values[14];
	bool		nulls[14];
	int			i = 0;

	memset(nulls, 0, sizeof(nulls));
	if (kind == SHARDID_SHARED_NONE)
		counters = session_counters;
	else
		shardid_strict_counters(&counters, &seeded_ms);

	values[i++] = TimestampTzGetDatum(unix_ms_to_timestamptz(shardid_epoch_ms));
	values[i++] = Int64GetDatum(shardid_epoch_ms);
	values[i++] = CStringGetTextDatum("41 bits ms since epoch | 13 bits shard | 10 bits seq");
	values[i++] = Int32GetDatum(SHARDID_MAX_SHARD);
	values[i++] = Int32GetDatum(SHARDID_SEQS_PER_MS);
	values[i++] = TimestampTzGetDatum(unix_ms_to_timestamptz(shardid_epoch_ms + SHARDID_SIGN_MILLIS));
	values[i++] = TimestampTzGetDatum(unix_ms_to_timestamptz(shardid_epoch_ms + SHARDID_MILLIS_LIMIT));
	values[i++] = CStringGetTextDatum(kind == SHARDID_SHARED_NONE ? "session" : "strict");
	values[i++] = CStringGetTextDatum(kind == SHARDID_SHARED_PRELOADED ? "shared_preload_libraries" :
									  kind == SHARDID_SHARED_DSM ? "dynamic shared memory" : "none");
	values[i++] = Int32GetDatum(shardid_max_lead_ms);
	values[i++] = Int64GetDatum((int64) counters.clock_waits);
	values[i++] = Int64GetDatum((int64) counters.clock_behind_calls);
	values[i++] = Int64GetDatum((int64) counters.max_step_back_ms);
	if (kind == SHARDID_SHARED_NONE)
		nulls[i] = true;
	else
		values[i] = TimestampTzGetDatum(unix_ms_to_timestamptz(seeded_ms));
	i++;
	Assert(i == lengthof(values));

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/* ---------------------------------------------------------------------
 * The shardid.epoch setting
 * ---------------------------------------------------------------------
 */

/*
 * Words that the date/time parser turns into "the current moment" or an
 * infinite value: an epoch must be a fixed moment.
 */
static bool
has_relative_word(const char *value)
{
	static const char *const words[] = {
		"now", "today", "tomorrow", "yesterday", "allballs", "epoch",
		"infinity", NULL
	};
	const char *p = value;

	while (*p)
	{
		const char *start;
		size_t		len;

		if (!isalpha((unsigned char) *p))
		{
			p++;
			continue;
		}
		start = p;
		while (isalpha((unsigned char) *p))
			p++;
		len = p - start;
		for (int i = 0; words[i] != NULL; i++)
			if (strlen(words[i]) == len && pg_strncasecmp(start, words[i], len) == 0)
				return true;
	}
	return false;
}

/*
 * Parse a timestamp for the epoch.  A time zone missing from the text means
 * UTC, not the session's TimeZone: the epoch must not depend on where it is
 * read.  Never throws: this runs while the configuration file is read.
 */
static bool
parse_epoch_timestamp(const char *value, int64 *unix_ms)
{
	char		workbuf[MAXDATELEN + MAXDATEFIELDS];
	char	   *field[MAXDATEFIELDS];
	int			ftype[MAXDATEFIELDS];
	int			nf;
	int			dtype;
	int			tz = 0;
	struct pg_tm tm;
	fsec_t		fsec;
	Timestamp	result;
	pg_tz	   *saved_timezone = session_timezone;
	pg_tz	   *utc = pg_tzset_offset(0);
	int			dterr;

	if (utc == NULL)
		return false;
	dterr = ParseDateTime(value, workbuf, sizeof(workbuf), field, ftype,
						  MAXDATEFIELDS, &nf);
	if (dterr != 0)
		return false;
	session_timezone = utc;
	dterr = shardid_decode_datetime(field, ftype, nf, &dtype, &tm, &fsec, &tz);
	session_timezone = saved_timezone;
	if (dterr != 0 || dtype != DTK_DATE)
		return false;
	if (tm2timestamp(&tm, fsec, &tz, &result) != 0)
		return false;
	if (result % 1000 != 0)
	{
		GUC_check_errdetail("shardid.epoch must be a whole number of milliseconds.");
		return false;
	}
	*unix_ms = timestamptz_to_unix_ms(result);
	return true;
}

static bool
check_epoch(char **newval, void **extra, GucSource source)
{
	const char *value = *newval;
	int64		unix_ms = 0;
	int64	   *result;
	bool		ok = false;

	while (isspace((unsigned char) *value))
		value++;

	if (*value == '\0' || !isdigit((unsigned char) *value))
		ok = false;
	else if (strspn(value, "0123456789") == strlen(value))
	{
		char	   *end;

		errno = 0;
		unix_ms = strtoi64(value, &end, 10);
		ok = (errno == 0 && *end == '\0');
	}
	else if (!has_relative_word(value))
		ok = parse_epoch_timestamp(value, &unix_ms);

	if (ok && (unix_ms < 0 || unix_ms > SHARDID_EPOCH_MAX_MS))
	{
		GUC_check_errdetail("shardid.epoch must lie between 1970-01-01 and 9999-12-31.");
		ok = false;
	}
	if (!ok)
	{
		GUC_check_errhint("Give milliseconds since 1970-01-01 00:00:00 UTC, such as 1314220021721, or a timestamp with time zone, such as '2011-08-24 21:07:01.721+00'.");
		return false;
	}

	result = guc_malloc(LOG, sizeof(int64));
	if (result == NULL)
		return false;
	*result = unix_ms;
	*extra = result;
	return true;
}

static void
assign_epoch(const char *newval, void *extra)
{
	shardid_epoch_ms = *((int64 *) extra);
}

void
_PG_init(void)
{
	DefineCustomStringVariable("shardid.epoch",
							   "Moment from which the time field of shardid ids counts milliseconds.",
							   "Milliseconds since 1970-01-01 00:00:00 UTC, or a timestamp with time zone "
							   "(UTC when none is given). It must be the same on every server of a sharded "
							   "database for as long as its ids exist; only superusers can change it.",
							   &shardid_epoch_string,
							   SHARDID_DEFAULT_EPOCH,
							   PGC_SUSET,
							   0,
							   check_epoch,
							   assign_epoch,
							   NULL);

	DefineCustomIntVariable("shardid.max_lead_ms",
							"How far ahead of the clock shared stamping may move an id's time.",
							"When a shard needs more than 1024 ids in a millisecond, ids take the next "
							"milliseconds ahead of the clock up to this lead; past it, callers wait for "
							"the clock. Used only when shardid is in shared_preload_libraries.",
							&shardid_max_lead_ms,
							1000,
							0,
							60000,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL,
							NULL,
							NULL);

	MarkGUCPrefixReserved("shardid");

	shardid_shmem_init();
}
