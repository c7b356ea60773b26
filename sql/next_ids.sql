-- shardid.next_ids(shard, n): the arguments are checked before anything
-- else, in every mode (strict mode's ids: test/strict/sql/next_ids_strict.sql).
SELECT shardid.next_ids(1, 0);
SELECT shardid.next_ids(1, -1);
SELECT shardid.next_ids(1, 1000001);
SELECT shardid.next_ids(-1, 1);
SELECT shardid.next_ids(8192, 1);
SELECT shardid.next_ids(-1, 0);
SELECT count(*) AS no_rows FROM shardid.next_ids(NULL, 1);
SELECT count(*) AS no_rows FROM shardid.next_ids(1, NULL);
