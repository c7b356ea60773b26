/*-------------------------------------------------------------------------
 *
 * fuzz_core.c
 *	  libFuzzer target for shardid's pure core: the input is read as
 *	  steps (shard, seq, clock move) and limit triples, checked against the
 *	  model in core_model.h.  Built and run by test/unit/run.sh.
 *
 * test/unit/fuzz_core.c
 *
 *-------------------------------------------------------------------------
 */
#include "core_model.h"

static int64_t
take(const uint8_t **data, size_t *size, int bytes)
{
	uint64_t	v = 0;

	for (int i = 0; i < bytes && *size > 0; i++, (*data)++, (*size)--)
		v |= (uint64_t) **data << (8 * i);
	return (int64_t) v;
}

int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	Model		m;
	const char *failure;

	model_init(&m, MODEL_EPOCH + INT64_C(28000000000), size);
	while (size >= 4 && m.failure == NULL)
	{
		int			op = (int) take(&data, &size, 1);

		if (op < 16)
		{
			/* a limit triple: raw 64-bit values */
			int64_t		millis = take(&data, &size, 8);
			int64_t		shard = (int32_t) take(&data, &size, 4);
			int64_t		seq = take(&data, &size, 8);

			failure = check_limits(millis, shard, seq);
			if (failure)
			{
				fprintf(stderr, "limits: %s\n", failure);
				abort();
			}
			continue;
		}
		else
		{
			int			shard = op % MODEL_SHARDS;
			int64_t		seq = take(&data, &size, 2) & 0x7fff;
			int64_t		delta = (int8_t) take(&data, &size, 1);

			/* mostly bursts in one millisecond, sometimes big moves */
			if (delta < -120)
				delta *= 100000;
			else if (delta > -4 && delta < 100)
				delta = 0;
			model_step(&m, shard, seq, delta);
		}
	}
	if (m.failure)
	{
		fprintf(stderr, "model: %s\n", m.failure);
		abort();
	}
	model_free(&m);
	return 0;
}
