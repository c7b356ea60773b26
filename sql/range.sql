-- min_id() and max_id(): a time range becomes a primary-key range.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- the epoch's first millisecond spans ids 0 .. 2^23 - 1
SELECT shardid.min_id('2026-01-01 00:00:00+00'), shardid.max_id('2026-01-01 00:00:00+00');
-- sub-millisecond parts fall to their millisecond
SELECT shardid.min_id('2026-01-01 00:00:00.0019+00'), shardid.max_id('2026-01-01 00:00:00.0019+00');
SELECT shardid.min_id(ts) = shardid.make_id(shardid.id_millis(shardid.min_id(ts)), 0, 0) AS min_ok,
       shardid.max_id(ts) = shardid.make_id(shardid.id_millis(shardid.min_id(ts)), 8191, 1023) AS max_ok,
       shardid.id_time(shardid.min_id(ts)) AS ms
FROM (VALUES ('2026-11-21 12:34:56.789+00'::timestamptz)) v(ts);
-- the last millisecond before the sign bit
SELECT shardid.max_id('2060-11-03 19:53:47.775+00');

-- with the 2011 epoch
SET shardid.epoch = '1314220021721';
SELECT shardid.min_id('2011-08-24 21:07:01.721+00'),
       shardid.max_id('2011-08-24 21:07:01.721+00') - shardid.min_id('2011-08-24 21:07:01.721+00') + 1 AS ids_per_ms;
SELECT sign_bit_at FROM shardid.info();
RESET shardid.epoch;

-- out of range
SELECT shardid.min_id('2025-12-31 23:59:59.999+00');
SELECT shardid.max_id('2060-11-03 19:53:47.776+00');
SELECT shardid.min_id('infinity');
SELECT shardid.max_id('-infinity');
SELECT shardid.min_id(NULL) IS NULL AS a, shardid.max_id(NULL) IS NULL AS b;

-- a time-range query is a primary-key index range scan
CREATE TABLE events (id bigint PRIMARY KEY, note text);
INSERT INTO events
SELECT shardid.make_id(i * 60000, (i % 8192)::int, i), 'minute ' || i
FROM generate_series(0::bigint, 99999) i;
ANALYZE events;
EXPLAIN (COSTS OFF)
SELECT count(*) FROM events
WHERE id BETWEEN shardid.min_id('2026-01-02 00:00+00') AND shardid.max_id('2026-01-02 01:00+00');
-- both ends' milliseconds are included: minutes 1440 .. 1500
SELECT count(*), min(shardid.id_time(id)), max(shardid.id_time(id)) FROM events
WHERE id BETWEEN shardid.min_id('2026-01-02 00:00+00') AND shardid.max_id('2026-01-02 01:00+00');
-- the same answer as filtering on the decoded time, which must read every row
SELECT count(*) FROM events
WHERE shardid.id_time(id) BETWEEN '2026-01-02 00:00+00' AND '2026-01-02 01:00:00.000999+00';
DROP TABLE events;
