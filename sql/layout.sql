-- Packing with make_id() and unpacking with the decoders: both limits of
-- every field, and every bad input.
SET timezone = 'UTC';
SET datestyle = 'ISO, YMD';

-- the worked example of the 2011 write-up: 1387263000 ms, shard 1341, seq 5001
SELECT shardid.make_id(1387263000, 1341, 5001) AS id;
SELECT shardid.make_id(1387263000, 1341, 5001)
     = (1387263000::bigint << 23) | (1341 << 10) | (5001 % 1024) AS matches_formula;
SELECT shardid.id_millis(11637205501278089),
       shardid.id_shard(11637205501278089),
       shardid.id_seq(11637205501278089);

-- lower and upper limits of each field
SELECT shardid.make_id(0, 0, 0) AS all_zero,
       shardid.make_id(0, 0, 1023) AS max_seq,
       shardid.make_id(0, 0, 1024) AS seq_wraps,
       shardid.make_id(0, 8191, 0) AS max_shard,
       shardid.make_id(1, 0, 0) AS one_ms;
SELECT shardid.make_id(1099511627775, 8191, 1023) AS largest_positive;
SELECT shardid.make_id(1099511627776, 0, 0) AS sign_bit;
SELECT shardid.make_id(2199023255551, 8191, 1023) AS all_ones;
SELECT shardid.make_id(0, 0, 9223372036854775807) AS max_bigint_seq;

-- decoding inverts packing at the limits
SELECT m, s, q,
       shardid.id_millis(shardid.make_id(m, s, q)) = m AS millis_ok,
       shardid.id_shard(shardid.make_id(m, s, q)) = s AS shard_ok,
       shardid.id_seq(shardid.make_id(m, s, q)) = q % 1024 AS seq_ok
FROM (VALUES (0::bigint, 0, 0::bigint), (2199023255551, 8191, 1023),
             (1099511627775, 1, 1024), (1099511627776, 4096, 512)) v(m, s, q);

-- decoders read any 64-bit value unsigned
SELECT shardid.id_millis(-9223372036854775808) AS min_bigint_millis,
       shardid.id_shard(-9223372036854775808) AS min_bigint_shard,
       shardid.id_seq(-9223372036854775808) AS min_bigint_seq;
SELECT shardid.id_millis(-1), shardid.id_shard(-1), shardid.id_seq(-1);
SELECT shardid.id_millis(9223372036854775807), shardid.id_shard(9223372036854775807),
       shardid.id_seq(9223372036854775807);
SELECT shardid.id_millis(0), shardid.id_shard(0), shardid.id_seq(0);

-- id_time() and decode() count from the epoch in force (the server's, or
-- the default 2026-01-01): times print as intervals since it
SELECT epoch AS epoch_at FROM shardid.info() \gset
SELECT shardid.id_time(0) - :'epoch_at' AS epoch_itself;
SELECT shardid.id_time(shardid.make_id(1000::bigint * 86400 * 365, 3, 9)) - :'epoch_at' AS id_time;
SELECT created_at - :'epoch_at' AS created_after, shard, seq, millis
FROM shardid.decode(shardid.make_id(1387263000, 1341, 5001));
SELECT created_at - :'epoch_at' AS created_after, shard, seq, millis FROM shardid.decode(-1);

-- the shape users are told to use
CREATE TABLE layout_t (id bigint PRIMARY KEY);
INSERT INTO layout_t VALUES (shardid.make_id(5, 7, 1)), (shardid.make_id(6, 8, 2));
SELECT d.created_at - :'epoch_at' AS created_after, d.shard, d.seq, d.millis
FROM layout_t t, shardid.decode(t.id) d ORDER BY t.id;
DROP TABLE layout_t;

-- NULL in, NULL out
SELECT shardid.make_id(NULL, 1, 1) IS NULL AS a, shardid.make_id(1, NULL, 1) IS NULL AS b,
       shardid.make_id(1, 1, NULL) IS NULL AS c, shardid.id_millis(NULL) IS NULL AS d,
       shardid.id_shard(NULL) IS NULL AS e, shardid.id_seq(NULL) IS NULL AS f,
       shardid.id_time(NULL) IS NULL AS g;
SELECT * FROM shardid.decode(NULL);

-- bad input: each field just past its limits
SELECT shardid.make_id(0, -1, 0);
SELECT shardid.make_id(0, 8192, 0);
SELECT shardid.make_id(0, -2147483648, 0);
SELECT shardid.make_id(0, 0, -1);
SELECT shardid.make_id(0, 0, -9223372036854775808);
SELECT shardid.make_id(-1, 0, 0);
SELECT shardid.make_id(2199023255552, 0, 0);
SELECT shardid.make_id(9223372036854775807, 0, 0);
-- wrong types are caught by PostgreSQL itself
SELECT shardid.make_id(0, 2147483648, 0);
SELECT shardid.make_id(0, 'one', 0);

-- IMMUTABLE decoders can serve in an expression index
CREATE TABLE layout_idx (id bigint);
CREATE INDEX ON layout_idx (shardid.id_shard(id));
DROP TABLE layout_idx;
-- id_time() depends on shardid.epoch, so it cannot
CREATE TABLE layout_idx (id bigint);
CREATE INDEX ON layout_idx (shardid.id_time(id));
DROP TABLE layout_idx;
