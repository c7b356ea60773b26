/*-------------------------------------------------------------------------
 *
 * shardid.c
 *	  SQL-callable functions of shardid: 64-bit, time-sortable ids for
 *	  schema-per-shard databases, the layout (max_shard()) and its decoders,
 *	  the range helpers and info(); and _PG_init().
 *
 * next_id() stamps the wall clock into an id.  With shared state (shared.c)
 * ids of a shard are unique across all sessions of the server and stay
 * below a durable high-water mark (mark.c); without it, a per-session guard
 * (session.c) keeps them unique within the session at any call rate.
 * Either way no id is made during recovery, nor under another epoch than
 * the one the server's ids were made with.
 *
 * src/shardid.c
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "citus.h"
#include "clock.h"
#include "feed.h"
#include "floor.h"
#include "mark.h"
#include "session.h"
#include "settings.h"
#include "shared.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

/* ---------------------------------------------------------------------
 * Argument checks shared by every entry point
 * ---------------------------------------------------------------------
 */
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
						   SHARDID_MILLIS_LIMIT - 1),
				 errhint("Pass milliseconds since shardid.epoch; those of a time t are shardid.id_millis(shardid.min_id(t)).")));
}

/*
 * Without a sequence (next_id(shard), next_ids()) the seq field comes from
 * the shard's counter in the shared state, which the caller has attached.
 */
static inline void
check_shard_counters(void)
{
	if (unlikely(shardid_shared_kind() == SHARDID_SHARED_NONE))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("shardid.next_id(shard) needs shardid in shared_preload_libraries"),
				 errdetail("Without a sequence, the seq field comes from a counter in shared memory, which this server has not set up."),
				 errhint("Add shardid to shared_preload_libraries and restart the server, or call shardid.next_id(shard, nextval(sequence)).")));
}

/* ---------------------------------------------------------------------
 * Stamping
 * ---------------------------------------------------------------------
 */

/*
 * The id for shard and seq (strict mode: seq is not used), checked.  The
 * caller has attached the shared state.  Each mode checks, beside its
 * state, that this backend may stamp (session.c, shared.c).
 */
static int64
stamp_id(int32 shard, int64 seq)
{
	uint64		stamp;
	int64		ms;

	shardid_feed_check(shard);
	if (shardid_shared_kind() != SHARDID_SHARED_NONE)
		stamp = shardid_strict_stamp(shard);
	else
		stamp = shardid_session_stamp(shard, seq);

	/* a clock that stepped back can leave the id's time ahead of the clock */
	ms = SHARDID_STATE_MS(stamp);
	shardid_check_moment(ms, shardid_epoch_ms, "id time", false);
	return shardid_pack(ms - shardid_epoch_ms, shard,
						(int64) (stamp & SHARDID_SEQ_MASK));
}

PG_FUNCTION_INFO_V1(shardid_next_id);
Datum
shardid_next_id(PG_FUNCTION_ARGS)
{
	int32		shard = PG_GETARG_INT32(0);
	int64		seq = PG_GETARG_INT64(1);

	shardid_citus_next_id_check();
	shardid_check_shard(shard);
	check_seq(seq);
	shardid_shared_attach();
	PG_RETURN_INT64(stamp_id(shard, seq));
}

PG_FUNCTION_INFO_V1(shardid_next_id_counter);
Datum
shardid_next_id_counter(PG_FUNCTION_ARGS)
{
	int32		shard = PG_GETARG_INT32(0);

	shardid_citus_next_id_check();
	shardid_check_shard(shard);
	shardid_shared_attach();
	check_shard_counters();
	PG_RETURN_INT64(stamp_id(shard, -1));
}

/* the most ids one call of shardid.next_ids() makes */
#define SHARDID_NEXT_IDS_MAX 1000000

typedef struct NextIdsState
{
	int32		shard;
	int64		remaining;		/* ids not reserved yet */
	uint64		next;			/* the next reserved stamp to return */
	uint64		end;			/* the last reserved stamp */
	bool		have;			/* next..end holds stamps */
} NextIdsState;

/*
 * shardid.next_ids(shard integer, n integer) RETURNS SETOF bigint: n ids of
 * shard, as n calls of next_id(shard) would make them (unique, increasing,
 * never past the durable mark, borrowing limited by shardid.max_lead_ms),
 * reserved in the shard's shared state with one compare-and-swap, or in a
 * few when the lead does not allow all of them at once.
 */
PG_FUNCTION_INFO_V1(shardid_next_ids);
Datum
shardid_next_ids(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	NextIdsState *st;
	uint64		stamp;
	int64		ms;

	if (SRF_IS_FIRSTCALL())
	{
		int32		shard = PG_GETARG_INT32(0);
		int32		n = PG_GETARG_INT32(1);
		MemoryContext old;

		shardid_citus_next_id_check();
		shardid_check_shard(shard);
		if (n < 1 || n > SHARDID_NEXT_IDS_MAX)
			ereport(ERROR,
					(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
					 errmsg("number of ids %d is out of range", n),
					 errdetail("shardid.next_ids() makes 1 to %d ids in one call.",
							   SHARDID_NEXT_IDS_MAX),
					 errhint("Ask for 1 to %d ids per call; for more, call it several times.",
							 SHARDID_NEXT_IDS_MAX)));
		shardid_shared_attach();
		check_shard_counters();
		shardid_feed_check(shard);
		funcctx = SRF_FIRSTCALL_INIT();
		old = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		st = palloc0(sizeof(NextIdsState));
		st->shard = shard;
		st->remaining = n;
		funcctx->user_fctx = st;
		MemoryContextSwitchTo(old);
	}
	funcctx = SRF_PERCALL_SETUP();
	st = funcctx->user_fctx;
	if (!st->have)
	{
		uint64		first;

		if (st->remaining == 0)
			SRF_RETURN_DONE(funcctx);
		st->end = shardid_strict_reserve(st->shard, st->remaining, &first);
		st->next = first;
		st->remaining -= (int64) (st->end - first + 1);
		st->have = true;
		/* a clock that stepped back can leave the ids' time ahead of it */
		shardid_check_moment(SHARDID_STATE_MS(st->end), shardid_epoch_ms,
							 "id time", false);
	}
	stamp = st->next;
	if (st->next == st->end)
		st->have = false;
	else
		st->next++;
	ms = SHARDID_STATE_MS(stamp);
	SRF_RETURN_NEXT(funcctx, Int64GetDatum(shardid_pack(ms - shardid_epoch_ms, st->shard,
														(int64) (stamp & SHARDID_SEQ_MASK))));
}

PG_FUNCTION_INFO_V1(shardid_make_id);
Datum
shardid_make_id(PG_FUNCTION_ARGS)
{
	int64		millis = PG_GETARG_INT64(0);
	int32		shard = PG_GETARG_INT32(1);
	int64		seq = PG_GETARG_INT64(2);

	check_millis(millis);
	shardid_check_shard(shard);
	check_seq(seq);
	PG_RETURN_INT64(shardid_pack(millis, shard, seq));
}

/* ---------------------------------------------------------------------
 * The layout and its decoders
 * ---------------------------------------------------------------------
 */

/*
 * max_shard(): the largest shard number of the layout, so that SQL code
 * takes the limit from the same constant as the C code.
 */
PG_FUNCTION_INFO_V1(shardid_max_shard);
Datum
shardid_max_shard(PG_FUNCTION_ARGS)
{
	PG_RETURN_INT32(SHARDID_MAX_SHARD);
}

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
	return shardid_unix_ms_to_timestamptz(shardid_epoch_ms + shardid_unpack_millis(id));
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
				 errmsg("timestamp must be finite"),
				 errhint("Pass a time between shardid.epoch and the sign bit of the ids (shardid.info().sign_bit_at).")));
	unix_ms = shardid_timestamptz_to_unix_ms(ts);
	shardid_check_moment(unix_ms, shardid_epoch_ms, "timestamp", true);
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

/* info()'s columns of the durable mark's keepers (mark_columns()) */
#define MARK_COLUMNS 9
static void mark_columns(Datum *values, bool *nulls, int *i, ShardidSharedKind kind,
						 int64 high_water, bool high_water_known, bool shape_1_2);

PG_FUNCTION_INFO_V1(shardid_info);
Datum
shardid_info(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	ShardidSharedKind kind;
	ShardidCounters counters;
	int64		seeded_ms = -1;
	int64		writes = 0;
	int64		high_water = 0;
	int64		ids_epoch = 0;
	bool		high_water_known;
	bool		ids_epoch_known;
	Datum		values[18 + 1 + MARK_COLUMNS];
	bool		nulls[18 + 1 + MARK_COLUMNS];
	int			i = 0;

	Assert(tupdesc->natts <= (int) lengthof(values));
	shardid_shared_attach();
	kind = shardid_shared_kind();
	memset(nulls, 0, sizeof(nulls));
	if (kind == SHARDID_SHARED_NONE)
		shardid_session_counters(&counters);
	else
		shardid_strict_counters(&counters, &seeded_ms, &writes);
	shardid_mark_report(&high_water, &high_water_known, &ids_epoch, &ids_epoch_known);

	values[i++] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(shardid_epoch_ms));
	values[i++] = Int64GetDatum(shardid_epoch_ms);
	values[i++] = CStringGetTextDatum("41 bits ms since epoch | 13 bits shard | 10 bits seq");
	values[i++] = Int32GetDatum(SHARDID_MAX_SHARD);
	values[i++] = Int32GetDatum(SHARDID_SEQS_PER_MS);
	values[i++] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(shardid_epoch_ms + SHARDID_SIGN_MILLIS));
	values[i++] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(shardid_epoch_ms + SHARDID_MILLIS_LIMIT));
	values[i++] = CStringGetTextDatum(kind == SHARDID_SHARED_NONE ? "session" : "strict");
	values[i++] = CStringGetTextDatum(kind == SHARDID_SHARED_PRELOADED ? "shared_preload_libraries" :
									  kind == SHARDID_SHARED_DSM ? "dynamic shared memory" : "none");
	values[i++] = Int32GetDatum(shardid_max_lead_ms);
	values[i++] = Int64GetDatum((int64) counters.clock_waits);
	values[i++] = Int64GetDatum((int64) counters.clock_behind_calls);
	values[i++] = Int64GetDatum((int64) counters.max_step_back_ms);
	/* seeded_at: strict mode, once the first stamp seeded the shards */
	if (seeded_ms < 0)
		nulls[i] = true;
	else
		values[i] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(seeded_ms));
	i++;
	/* high_water_mark: what the durable state holds */
	if (!high_water_known)
		nulls[i] = true;
	else
		values[i] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(high_water));
	i++;
	/* high_water_writes: strict mode, since the server started */
	if (kind == SHARDID_SHARED_NONE)
		nulls[i] = true;
	else
		values[i] = Int64GetDatum(writes);
	i++;
	/* ids_epoch: the epoch the durable state remembers */
	if (!ids_epoch_known)
		nulls[i] = true;
	else
		values[i] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(ids_epoch));
	i++;
	/* runway (1.3): the time left before ids reach the sign bit */
	if (tupdesc->natts > i)
	{
		Interval   *runway = palloc0(sizeof(Interval));

		runway->time = (shardid_epoch_ms + SHARDID_SIGN_MILLIS - shardid_clock_ms()) * INT64CONST(1000);
		values[i++] = IntervalPGetDatum(runway);
	}
	/* the durable mark's keepers (1.3; mark_status() before) */
	if (tupdesc->natts > i)
		mark_columns(values, nulls, &i, kind, high_water, high_water_known, false);
	Assert(i == tupdesc->natts);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * shardid.adopt_epoch(): remember the epoch in force as the epoch of the
 * server's ids, a deliberate new start (superusers only).
 */
PG_FUNCTION_INFO_V1(shardid_adopt_epoch_sql);
Datum
shardid_adopt_epoch_sql(PG_FUNCTION_ARGS)
{
	shardid_shared_attach();
	PG_RETURN_TIMESTAMPTZ(shardid_unix_ms_to_timestamptz(shardid_adopt_epoch(shardid_shared_mark())));
}

/*
 * shardid.raise_high_water(at timestamptz): raise the durable high-water
 * mark H to at least at, durably and confirmed by the synchronous
 * standbys, and (strict mode) start every shard past it, so that every id
 * made from now on by this server is later than at.  For tools, and after
 * pg_upgrade (which does not carry replication origins).  Superusers only.
 * Returns H.
 */
/*
 * How far ahead of the clock, and how close to the sign bit, raise_high_water()
 * goes only when told to (force => true): every id of the server, in every
 * database and after every restart, carries a time at or past the mark.
 */
#define RAISE_AHEAD_LIMIT_MS	(INT64_C(3600) * 1000)
#define RAISE_SIGN_MARGIN_MS	(INT64_C(366) * 24 * 3600 * 1000)

PG_FUNCTION_INFO_V1(shardid_raise_high_water_sql);
Datum
shardid_raise_high_water_sql(PG_FUNCTION_ARGS)
{
	int64		unix_ms;
	int64		high;
	bool		force = PG_NARGS() > 1 && PG_GETARG_BOOL(1);
	int64		ahead;

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to raise the high-water mark"),
				 errdetail("Only superusers may raise the durable high-water mark of the server's ids.")));
	unix_ms = range_millis(PG_GETARG_TIMESTAMPTZ(0)) + shardid_epoch_ms;
	ahead = unix_ms - shardid_clock_ms();
	if (!force && unix_ms - shardid_epoch_ms > SHARDID_SIGN_MILLIS - RAISE_SIGN_MARGIN_MS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the moment is less than a year before the sign bit of the ids"),
				 errdetail("Ids carry at most " INT64_FORMAT " ms since the epoch before they would turn negative, and next_id() refuses past that; a mark this close leaves the server less than a year of ids."
						   , SHARDID_SIGN_MILLIS - 1),
				 errhint("To raise the mark that far on purpose, call shardid.raise_high_water(at, force => true).")));
	if (!force && ahead > RAISE_AHEAD_LIMIT_MS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("the moment is " INT64_FORMAT " s ahead of this server's clock", ahead / 1000),
				 errdetail("Every id this server makes afterwards, in every database and after every restart, would carry a time at least that far ahead; more than an hour is refused unless forced."),
				 errhint("Check where the moment comes from (a stored id may have been written by any role that may insert into its table); to raise the mark that far on purpose, call shardid.raise_high_water(at, force => true).")));
	shardid_refuse_in_recovery();
	shardid_shared_attach();
	if (shardid_shared_kind() != SHARDID_SHARED_NONE)
		high = shardid_strict_raise_high_water(unix_ms);
	else
		high = shardid_mark_set(NULL, unix_ms);
	PG_RETURN_TIMESTAMPTZ(shardid_unix_ms_to_timestamptz(high));
}

/*
 * shardid.stored_newest(shard): release 1.2's view of the ids the id path
 * read.  From 1.3 on the id path reads none and the function is dropped
 * (shardid.stored_ids() shows what the floor step reads); the symbol stays
 * for the scripts of 1.2, which create it.
 */
PG_FUNCTION_INFO_V1(shardid_stored_newest_sql);
Datum
shardid_stored_newest_sql(PG_FUNCTION_ARGS)
{
	ereport(ERROR,
			(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
			 errmsg("shardid.stored_newest() is gone: the library is of a later release than the extension"),
			 errhint("Run ALTER EXTENSION shardid UPDATE, then use shardid.stored_ids(shard).")));
	PG_RETURN_NULL();
}

/*
 * shardid_internal.shard_stamps(OUT shard integer, OUT last_id bigint, OUT lead_ms
 * bigint, OUT ids bigint, OUT waits bigint): the strict-mode state of
 * every shard of the server (shared by its databases): the last id it
 * stamped (or was seeded or floored to), how far that lies ahead of the
 * clock, and the ids and clock waits since the server started.  No rows
 * in session mode or before the first stamp after a start.  For the view
 * shardid.shard_state; reads shared memory only (8,192 rows).
 */
PG_FUNCTION_INFO_V1(shardid_shard_stamps);
Datum
shardid_shard_stamps(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	TupleDesc	tupdesc;
	Tuplestorestate *store;
	int64		now = shardid_clock_ms();

	shardid_materialize(fcinfo);
	store = rsinfo->setResult;
	tupdesc = rsinfo->setDesc;

	shardid_shared_attach();
	if (shardid_shared_kind() == SHARDID_SHARED_NONE)
		return (Datum) 0;
	for (int32 shard = 0; shard < SHARDID_NSHARDS; shard++)
	{
		uint64		state;
		uint64		ids;
		uint64		waits;
		Datum		values[5];
		bool		nulls[5] = {false, false, false, false, false};
		int64		ms;

		if (!shardid_strict_shard(shard, &state, &ids, &waits))
			break;
		ms = SHARDID_STATE_MS(state);
		values[0] = Int32GetDatum(shard);
		if (shardid_millis_ok(ms - shardid_epoch_ms))
			values[1] = Int64GetDatum(shardid_pack(ms - shardid_epoch_ms, shard,
												   (int64) (state & SHARDID_SEQ_MASK)));
		else
			nulls[1] = true;
		values[2] = Int64GetDatum(ms - now);
		values[3] = Int64GetDatum((int64) ids);
		values[4] = Int64GetDatum((int64) waits);
		tuplestore_putvalues(store, tupdesc, values, nulls);
	}
	return (Datum) 0;
}

/*
 * The columns of the durable mark's keepers, at values[*i] on: whether
 * the origins of H and of the epoch exist, H minus the clock, the origin
 * slots setting, raises whose confirmation was cut short, and the floors
 * raised since the server started (strict mode).  info() from 1.3 on;
 * with shape_1_2, the columns of release 1.2's mark_status(), which
 * repeat high_water_mark and keep stored_unindexed (0 from 1.3 on).
 */
static void
mark_columns(Datum *values, bool *nulls, int *i, ShardidSharedKind kind,
			 int64 high_water, bool high_water_known, bool shape_1_2)
{
	bool		high_water_origin;
	bool		epoch_origin;
	int64		counters[5] = {0, 0, 0, 0, 0};

	shardid_mark_origins(&high_water_origin, &epoch_origin);
	if (kind != SHARDID_SHARED_NONE)
		shardid_strict_mark_counters(&counters[0], &counters[1], &counters[2],
									 &counters[3], &counters[4]);
	values[(*i)++] = BoolGetDatum(high_water_origin);
	values[(*i)++] = BoolGetDatum(epoch_origin);
	if (shape_1_2)
	{
		nulls[*i] = !high_water_known;
		values[(*i)++] = TimestampTzGetDatum(shardid_unix_ms_to_timestamptz(high_water));
	}
	nulls[*i] = !high_water_known;
	values[(*i)++] = Int64GetDatum(high_water - shardid_clock_ms());
	values[(*i)++] = CStringGetTextDatum(SHARDID_ORIGIN_SLOTS_NAME);
	values[(*i)++] = Int32GetDatum(shardid_origin_slots);
	for (int c = 0; c < (int) lengthof(counters); c++)
	{
		if (c == 3 && !shape_1_2)
			continue;
		nulls[*i] = kind == SHARDID_SHARED_NONE;
		values[(*i)++] = Int64GetDatum(counters[c]);
	}
}

/*
 * shardid_internal.can_commit(): whether the procedure that calls it may commit,
 * as PL/pgSQL's COMMIT judges it: called by CALL outside a transaction
 * block (nor from a function, nor inside an EXCEPTION block).  add_shards()
 * asks before it makes anything, so that a CALL inside a transaction block
 * (what migration tools run) is refused with what to do rather than failing
 * at its first COMMIT with "invalid transaction termination".
 */
PG_FUNCTION_INFO_V1(shardid_can_commit);
Datum
shardid_can_commit(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(SPI_inside_nonatomic_context());
}

/*
 * The deprecated routines, each with what replaces it.  Each warns the first
 * time a session calls it (the state is this backend's, whether the library
 * was preloaded or loaded by the call: a custom setting under the prefix
 * shardid. would be refused once the library reserves the prefix).
 */
static const struct
{
	const char *key;			/* what the routine passes */
	const char *routine;		/* its name, as the warning says it */
	const char *replacement;	/* the hint */
}			deprecated_routines[] =
{
	{"mark_status", "shardid.mark_status()",
	"Use SELECT ... FROM shardid.info(): it has these columns, stored_checks, stored_moves and stored_too_far as floors_applied, floors_moved and floors_beyond_bound."},
	{"create_shards", "shardid.create_shards()",
	"Use CALL shardid.add_shards(template, shards, in_batches => false)."},
	{"create_local_shards", "shardid.create_local_shards()",
	"Use CALL shardid.add_shards(template, shards, distribute => false, in_batches => false)."},
	{"provision_shards(shards)", "shardid.provision_shards(template, shards)",
	"Use CALL shardid.add_shards(template, shards)."},
	{"provision_shards(first_shard, last_shard)", "shardid.provision_shards(template, first_shard, last_shard)",
	"Use CALL shardid.add_shards(template, first_shard => f, last_shard => l)."},
};

static bool deprecated_warned[lengthof(deprecated_routines)];

/* the warning of a deprecated routine, once per session */
static void
warn_deprecated(const char *key)
{
	int			i;

	for (i = 0; i < (int) lengthof(deprecated_routines); i++)
	{
		if (strcmp(deprecated_routines[i].key, key) != 0)
			continue;
		if (!deprecated_warned[i])
		{
			deprecated_warned[i] = true;
			ereport(WARNING,
					(errcode(ERRCODE_WARNING_DEPRECATED_FEATURE),
					 errmsg("%s is deprecated and will be removed in shardid 2.0",
							deprecated_routines[i].routine),
					 errhint("%s", deprecated_routines[i].replacement)));
		}
		return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("\"%s\" is not a deprecated routine of shardid", key)));
}

/*
 * shardid_internal.warn_deprecated(routine text): the deprecated routines
 * of SQL call it first
 */
PG_FUNCTION_INFO_V1(shardid_warn_deprecated);
Datum
shardid_warn_deprecated(PG_FUNCTION_ARGS)
{
	warn_deprecated(text_to_cstring(PG_GETARG_TEXT_PP(0)));
	PG_RETURN_VOID();
}

/*
 * shardid.mark_status(): release 1.2's report of the durable mark,
 * deprecated in 1.3 for the same columns of info().
 */
PG_FUNCTION_INFO_V1(shardid_mark_status);
Datum
shardid_mark_status(PG_FUNCTION_ARGS)
{
	TupleDesc	tupdesc = result_tupdesc(fcinfo);
	ShardidSharedKind kind;
	int64		high_water = 0;
	int64		ids_epoch = 0;
	bool		high_water_known;
	bool		ids_epoch_known;
	Datum		values[MARK_COLUMNS + 2];
	bool		nulls[MARK_COLUMNS + 2];
	int			i = 0;

	warn_deprecated("mark_status");
	shardid_shared_attach();
	kind = shardid_shared_kind();
	memset(nulls, 0, sizeof(nulls));
	shardid_mark_report(&high_water, &high_water_known, &ids_epoch, &ids_epoch_known);
	mark_columns(values, nulls, &i, kind, high_water, high_water_known, true);
	Assert(i == (int) lengthof(values) && i == tupdesc->natts);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

void
_PG_init(void)
{
	shardid_define_settings();
	if (process_shared_preload_libraries_in_progress)
		shardid_mark_check_slots();
	shardid_shmem_init();
	shardid_floor_hooks_init();
	shardid_feed_init();
	shardid_citus_hooks_init();
}
