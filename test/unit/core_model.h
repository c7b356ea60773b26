/*-------------------------------------------------------------------------
 *
 * core_model.h
 *	  Property checks of shardid_core.h against a model, shared by the unit
 *	  test (core_test.c) and the libFuzzer target (fuzz_core.c).
 *
 * A run is a sequence of steps; each step stamps one id for a shard with a
 * seq at a clock reading, through the session guard (waiting by moving the
 * model clock to the next millisecond, as the server does) and through the
 * strict rule (borrowing freely).  The checks:
 *	- no id is ever returned twice (exact set of every id returned);
 *	- session guard: per shard, the time field never decreases and a
 *	  millisecond never holds more than 1024 ids;
 *	- strict rule: per shard, ids strictly increase, a millisecond is
 *	  filled with 1024 ids before the next one is taken, whatever seqs
 *	  the callers pass (they are ignored);
 *	- packing then unpacking gives back millis, shard and seq & 1023;
 *	- the range checks accept exactly the valid shards and millis.
 *
 * test/unit/core_model.h
 *
 *-------------------------------------------------------------------------
 */
#ifndef SHARDID_CORE_MODEL_H
#define SHARDID_CORE_MODEL_H

#include <stdio.h>
#include <stdlib.h>

#include "../../src/shardid_core.h"

#define MODEL_SHARDS 4			/* a few shards, so that they collide often */
#define MODEL_EPOCH INT64_C(1767225600000)

typedef struct IdSet
{
	uint64_t   *slots;			/* open addressing; 0 means empty */
	size_t		mask;
	size_t		count;
} IdSet;

typedef struct Model
{
	ShardidWindow windows[MODEL_SHARDS];
	uint64_t	strict[MODEL_SHARDS];
	int64_t		last_session_ms[MODEL_SHARDS];
	IdSet		session_ids;
	IdSet		strict_ids;
	int64_t		clock;			/* the model's wall clock, Unix ms */
	const char *failure;		/* first property that failed, or NULL */
} Model;

static void
idset_init(IdSet *s, size_t capacity)
{
	size_t		n = 1024;

	while (n < capacity * 2)
		n <<= 1;
	s->slots = calloc(n, sizeof(uint64_t));
	s->mask = n - 1;
	s->count = 0;
}

/* adds id; returns false if it was there already */
static bool
idset_add(IdSet *s, int64_t id)
{
	uint64_t	key = (uint64_t) id + 1;	/* never 0 for ids we make */
	size_t		i = (size_t) ((key * UINT64_C(0x9E3779B97F4A7C15)) >> 20) & s->mask;

	while (s->slots[i] != 0)
	{
		if (s->slots[i] == key)
			return false;
		i = (i + 1) & s->mask;
	}
	s->slots[i] = key;
	s->count++;
	return true;
}

static void
model_init(Model *m, int64_t clock, size_t steps)
{
	for (int i = 0; i < MODEL_SHARDS; i++)
	{
		shardid_window_init(&m->windows[i]);
		m->strict[i] = 0;
		m->last_session_ms[i] = -1;
	}
	idset_init(&m->session_ids, steps);
	idset_init(&m->strict_ids, steps);
	m->clock = clock;
	m->failure = NULL;
}

static void
model_free(Model *m)
{
	free(m->session_ids.slots);
	free(m->strict_ids.slots);
}

#define MODEL_CHECK(m, cond, what) \
	do { if (!(cond) && (m)->failure == NULL) (m)->failure = (what); } while (0)

/* one step: the clock moves by delta ms (negative: steps back), then one id */
static void
model_step(Model *m, int shard, int64_t seq, int64_t delta)
{
	int64_t		ms;
	int64_t		id;
	uint64_t	next;
	bool		behind;

	m->clock += delta;
	behind = m->clock < m->last_session_ms[shard];

	/* session guard: wait by moving the clock on, as the server does */
	for (;;)
	{
		ms = shardid_window_stamp(&m->windows[shard], m->clock, seq);
		if (ms != SHARDID_MUST_WAIT)
			break;
		m->clock++;
	}
	MODEL_CHECK(m, ms >= m->last_session_ms[shard], "session: time went back");
	MODEL_CHECK(m, behind || ms == m->clock,
				"session: stamped another time than the clock's while the clock was not behind");
	m->last_session_ms[shard] = ms;
	id = shardid_pack(ms - MODEL_EPOCH, shard, seq);
	MODEL_CHECK(m, idset_add(&m->session_ids, id), "session: repeated id");
	MODEL_CHECK(m, shardid_unpack_millis(id) == ms - MODEL_EPOCH, "session: millis does not round-trip");
	MODEL_CHECK(m, shardid_unpack_shard(id) == shard, "session: shard does not round-trip");
	MODEL_CHECK(m, shardid_unpack_seq(id) == (seq & SHARDID_SEQ_MASK), "session: seq does not round-trip");

	/* strict rule: the seq field comes from the shard's counter */
	next = shardid_strict_next(m->strict[shard], m->clock);
	MODEL_CHECK(m, next > m->strict[shard], "strict: id did not increase");
	MODEL_CHECK(m, SHARDID_STATE_MS(next) >= m->clock, "strict: time behind the clock");
	MODEL_CHECK(m, SHARDID_STATE_MS(next) <= (m->clock > SHARDID_STATE_MS(m->strict[shard]) ?
											  m->clock : SHARDID_STATE_MS(m->strict[shard])) + 1,
				"strict: moved more than one millisecond past the clock and the last id");
	MODEL_CHECK(m, SHARDID_STATE_MS(next) == SHARDID_STATE_MS(m->strict[shard]) + 1 ?
				(m->strict[shard] & SHARDID_SEQ_MASK) == SHARDID_SEQ_MASK ||
				SHARDID_STATE_MS(next) == m->clock : true,
				"strict: took the next millisecond before this one was full");
	m->strict[shard] = next;
	id = shardid_pack(SHARDID_STATE_MS(next) - MODEL_EPOCH, shard,
					  (int64_t) (next & SHARDID_SEQ_MASK));
	MODEL_CHECK(m, idset_add(&m->strict_ids, id), "strict: repeated id");
}

/* the range checks and packing at and around every limit */
static const char *
check_limits(int64_t millis, int64_t shard, int64_t seq)
{
	bool		shard_valid = shard >= 0 && shard <= 8191;
	bool		millis_valid = millis >= 0 && millis < (INT64_C(1) << 41);
	int64_t		id;

	if (shardid_shard_ok(shard) != shard_valid)
		return "shard range check";
	if (shardid_millis_ok(millis) != millis_valid)
		return "millis range check";
	if (!shard_valid || !millis_valid || seq < 0)
		return NULL;
	id = shardid_pack(millis, (int32_t) shard, seq);
	if (shardid_unpack_millis(id) != millis || shardid_unpack_shard(id) != shard ||
		shardid_unpack_seq(id) != (seq & 1023))
		return "pack/unpack round trip";
	if ((millis < (INT64_C(1) << 40)) != (id >= 0))
		return "sign of id";
	if (shardid_min_for_millis(millis) > id || shardid_max_for_millis(millis) < id)
		return "id outside [min_for_millis, max_for_millis]";
	return NULL;
}

#endif							/* SHARDID_CORE_MODEL_H */
