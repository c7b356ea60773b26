/*-------------------------------------------------------------------------
 *
 * core_test.c
 *	  Unit test of shardid's pure core (src/shardid_core.h), outside the
 *	  server: fixed cases at every limit, then long random runs checked
 *	  against the model in core_model.h (bursts far over 1024 ids per ms,
 *	  repeated seqs, clock steps back of 1 ms to an hour).
 *
 *	  cc -O2 -Wall -Wextra -o core_test test/unit/core_test.c && ./core_test
 *
 * test/unit/core_test.c
 *
 *-------------------------------------------------------------------------
 */
#include "core_model.h"

static int	passed = 0;
static int	failed = 0;

static void
report(const char *name, const char *failure)
{
	if (failure == NULL)
	{
		passed++;
		printf("ok - %s\n", name);
	}
	else
	{
		failed++;
		printf("not ok - %s: %s\n", name, failure);
	}
}

/* xorshift64*: a reproducible random source */
static uint64_t rng_state = UINT64_C(0x2545F4914F6CDD1D);

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545F4914F6CDD1D);
}

static void
test_limits(void)
{
	static const int64_t millis[] = {0, 1, (INT64_C(1) << 40) - 1, INT64_C(1) << 40,
	(INT64_C(1) << 41) - 1, INT64_C(1) << 41, -1, INT64_MIN, INT64_MAX};
	static const int64_t shards[] = {0, 1, 8191, 8192, -1, INT32_MIN, INT32_MAX};
	static const int64_t seqs[] = {0, 1, 1023, 1024, 1025, INT64_MAX};
	const char *failure = NULL;

	for (size_t i = 0; i < sizeof(millis) / sizeof(millis[0]); i++)
		for (size_t j = 0; j < sizeof(shards) / sizeof(shards[0]); j++)
			for (size_t k = 0; k < sizeof(seqs) / sizeof(seqs[0]) && !failure; k++)
				failure = check_limits(millis[i], shards[j], seqs[k]);
	report("limits of every field", failure);

	/* the worked example of the 2011 write-up */
	report("worked example", shardid_pack(1387263000, 1341, 5001) ==
		   ((INT64_C(1387263000) << 23) | (1341 << 10) | (5001 % 1024)) ? NULL : "wrong id");
	report("decoders read unsigned",
		   shardid_unpack_millis(INT64_MIN) == (INT64_C(1) << 40) &&
		   shardid_unpack_shard(-1) == 8191 && shardid_unpack_seq(-1) == 1023 ? NULL : "wrong field");
}

static void
test_session_window(void)
{
	ShardidWindow w;
	const char *failure = NULL;
	int64_t		t = 1000;

	/* any 1024 distinct seqs fit one millisecond, whatever their alignment */
	shardid_window_init(&w);
	for (int64_t s = 700; s < 700 + 1024 && !failure; s++)
		if (shardid_window_stamp(&w, t, s) != t)
			failure = "a seq of a 1024-wide window did not fit";
	if (!failure && shardid_window_stamp(&w, t, 700 + 1024) != SHARDID_MUST_WAIT)
		failure = "the 1025th seq did not wait";
	if (!failure && shardid_window_stamp(&w, t + 1, 700 + 1024) != t + 1)
		failure = "the next millisecond did not open";
	report("session window: 1024 ids per ms, then wait", failure);

	/* clock behind the session's time: move on, never back, never wait */
	failure = NULL;
	shardid_window_init(&w);
	shardid_window_stamp(&w, 5000, 1);
	if (shardid_window_stamp(&w, 4990, 2) != 5000)
		failure = "a free seq did not keep the session's millisecond";
	else if (shardid_window_stamp(&w, 4990, 1) != 5001)
		failure = "a taken seq did not move to the next millisecond";
	report("session window: clock steps back", failure);
}

static void
test_strict_rule(void)
{
	const char *failure = NULL;

	if (shardid_strict_next(SHARDID_STATE(1000, 1023), 1000) != SHARDID_STATE(1001, 0))
		failure = "the counter did not carry into the next millisecond";
	else if (shardid_strict_next(SHARDID_STATE(1000, 7), 1000) != SHARDID_STATE(1000, 8))
		failure = "the counter did not count up within a millisecond";
	else if (shardid_strict_next(SHARDID_STATE(1000, 7), 1500) != SHARDID_STATE(1500, 0))
		failure = "the counter did not restart at 0 in a new millisecond";
	else if (shardid_strict_next(SHARDID_STATE(1500, 3), 1000) != SHARDID_STATE(1500, 4))
		failure = "a clock behind the state moved the state back";
	else
	{
		/* 1024 calls in one millisecond fill it, the 1025th borrows */
		uint64_t	st = SHARDID_STATE(999, 1023);

		for (int i = 0; i < 1024; i++)
			st = shardid_strict_next(st, 1000);
		if (st != SHARDID_STATE(1000, 1023))
			failure = "1024 ids did not fit one millisecond";
		else if (shardid_strict_next(st, 1000) != SHARDID_STATE(1001, 0))
			failure = "the 1025th id did not borrow the next millisecond";
	}
	report("strict rule: count, carry and restart", failure);
}

/* long random runs of mixed traffic */
static void
test_random_runs(void)
{
	const size_t steps = 2000000;
	Model		m;
	int64_t		seqs[MODEL_SHARDS] = {0};

	model_init(&m, MODEL_EPOCH + INT64_C(28000000000), steps);
	for (size_t i = 0; i < steps && m.failure == NULL; i++)
	{
		uint64_t	r = rng();
		int			shard = (int) (r % MODEL_SHARDS);
		int64_t		delta = 0;
		int64_t		seq;

		switch ((r >> 8) % 1000)
		{
			case 0:				/* a step back: 1 ms to an hour */
				delta = -(int64_t) (1 + (rng() % (3600 * 1000)));
				break;
			case 1:
			case 2:				/* a small step back, as NTP makes */
				delta = -(int64_t) (1 + rng() % 10);
				break;
			case 3:
			case 4:
			case 5:				/* an idle gap */
				delta = (int64_t) (rng() % 5000);
				break;
			default:			/* a burst: mostly the same millisecond */
				delta = ((r >> 20) % 2000) == 0 ? 1 : 0;
		}
		if (((r >> 40) % 50) == 0)
			seq = (int64_t) (rng() >> 1);	/* any seq, even repeated */
		else
			seq = ++seqs[shard];	/* a sequence of the shard */
		model_step(&m, shard, seq, delta);
	}
	report("random runs: 2M steps, bursts, repeats, clock steps", m.failure);
	model_free(&m);
}

int
main(void)
{
	test_limits();
	test_session_window();
	test_strict_rule();
	test_random_runs();
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
