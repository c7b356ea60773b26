-- shardid.next_ids(shard, n) in strict mode: n ids at once, as n calls of
-- next_id(shard) would make them.

-- n ids, distinct, of the shard
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(shardid.id_shard(id) = 42) AS all_of_shard_42
FROM shardid.next_ids(42, 5000) id;

-- increasing in the order returned
SELECT bool_and(id > prev) AS increasing, count(*) AS pairs
FROM (SELECT id, lag(id) OVER (ORDER BY ord) AS prev
      FROM shardid.next_ids(42, 3000) WITH ORDINALITY t(id, ord)) s
WHERE prev IS NOT NULL;

-- after the id next_id() made before, before the one it makes after
CREATE TEMP TABLE seen (step int, id bigint);
INSERT INTO seen SELECT 1, shardid.next_id(42);
INSERT INTO seen SELECT 2, i FROM shardid.next_ids(42, 2000) i;
INSERT INTO seen SELECT 3, shardid.next_id(42);
SELECT (SELECT max(id) FROM seen WHERE step = 1) < (SELECT min(id) FROM seen WHERE step = 2) AS after_next_id,
       (SELECT max(id) FROM seen WHERE step = 2) < (SELECT min(id) FROM seen WHERE step = 3) AS before_next_id;

-- both limits of n and of the shard
SELECT count(*) AS one FROM shardid.next_ids(0, 1);
SELECT count(*) AS one FROM shardid.next_ids(8191, 1);
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids,
       bool_and(shardid.id_time(id) < clock_timestamp() + interval '2 seconds') AS within_lead
FROM shardid.next_ids(7, 1000000) id;

-- never past the durable high-water mark
SELECT shardid.id_time(max(id)) <= (SELECT high_water_mark FROM shardid.info()) AS below_mark
FROM shardid.next_ids(9, 100000) id;
