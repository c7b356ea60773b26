/*-------------------------------------------------------------------------
 *
 * settings.c
 *	  The settings of shardid: shardid.epoch (parsed here, in UTC unless
 *	  the value names a zone) and shardid.max_lead_ms.
 *
 * src/settings.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/datetime.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "clock.h"
#include "settings.h"

/* latest epoch accepted: 9999-12-31 23:59:59.999 UTC */
#define SHARDID_EPOCH_MAX_MS INT64CONST(253402300799999)

#define SHARDID_DEFAULT_EPOCH "2026-01-01 00:00:00+00"

/*
 * shardid.max_lead_ms, the range the README documents: by default a shard
 * may borrow one second of id time ahead of the clock, at most a minute (an
 * id's time is at most that later than the moment it was made, and a stored
 * id is followed at most that far ahead, shared.c); 0: no borrowing, a full
 * millisecond waits for the clock.
 */
#define SHARDID_MAX_LEAD_MS_DEFAULT	1000
#define SHARDID_MAX_LEAD_MS_MIN		0
#define SHARDID_MAX_LEAD_MS_MAX		60000

int64		shardid_epoch_ms;
int			shardid_max_lead_ms = SHARDID_MAX_LEAD_MS_DEFAULT;
uint32		shardid_epoch_generation = 0;
static char *shardid_epoch_string = NULL;

/* ---------------------------------------------------------------------
 * The shardid.epoch setting
 * ---------------------------------------------------------------------
 */

/*
 * Whether value holds one of the special words of the date/time parser,
 * which the epoch refuses, relative or not: "now", "today", "tomorrow" and
 * "yesterday" mean a moment relative to the current time, "infinity" none
 * at all, and "epoch" (1970-01-01) and "allballs" (00:00:00) are fixed
 * moments that are easily confused with the setting's own meaning; an
 * epoch is written as a timestamp or as milliseconds.
 */
static bool
has_special_word(const char *value)
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
	if (result % SHARDID_USECS_PER_MS != 0)
	{
		GUC_check_errdetail("shardid.epoch must be a whole number of milliseconds.");
		return false;
	}
	*unix_ms = shardid_timestamptz_to_unix_ms(result);
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
	else if (!has_special_word(value))
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
	if (++shardid_epoch_generation == 0)
		shardid_epoch_generation = 1;
}

void
shardid_define_settings(void)
{
	DefineCustomStringVariable("shardid.epoch",
							   "Moment from which the time field of shardid ids counts milliseconds.",
							   "Milliseconds since 1970-01-01 00:00:00 UTC, or a timestamp with time zone "
							   "(UTC when none is given). It must be the same on every server of a sharded "
							   "database for as long as its ids exist; only superusers can change it. The server "
							   "remembers the epoch its ids were made with and refuses to make ids under another.",
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
							"the clock. Used only in strict mode.",
							&shardid_max_lead_ms,
							SHARDID_MAX_LEAD_MS_DEFAULT,
							SHARDID_MAX_LEAD_MS_MIN,
							SHARDID_MAX_LEAD_MS_MAX,
							PGC_SIGHUP,
							GUC_UNIT_MS,
							NULL,
							NULL,
							NULL);

	MarkGUCPrefixReserved("shardid");
}
