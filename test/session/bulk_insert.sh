#!/usr/bin/env bash
# One INSERT ... SELECT of 2,000,000 rows into a table whose id defaults to
# shardid.next_id(5, nextval('s5.t_id_seq')) succeeds, with all ids distinct
# and in shard 5.  A plain C port of the 2011 function fails this with a
# duplicate key as soon as 1024 rows land in one millisecond.
. "$(dirname "$0")/../lib.sh" servers

q <<'SQL'
CREATE SCHEMA s5;
CREATE SEQUENCE s5.t_id_seq;
CREATE TABLE s5.t (
    id bigint PRIMARY KEY DEFAULT shardid.next_id(5, nextval('s5.t_id_seq')),
    v  int NOT NULL
);
SQL
start=$(date +%s%3N)
q -c "INSERT INTO s5.t (v) SELECT g FROM generate_series(1, 2000000) g" || fail "INSERT failed"
end=$(date +%s%3N)
read -r rows distinct shard5 ms_max <<<"$(q -F' ' -c "
    SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE shardid.id_shard(id) = 5),
           (SELECT max(n) FROM (SELECT count(*) n FROM s5.t GROUP BY shardid.id_millis(id)) c)
    FROM s5.t")"
echo "2M-row INSERT: $((end - start)) ms; rows=$rows distinct=$distinct in_shard_5=$shard5 max_ids_in_one_ms=$ms_max"
expect "$rows" = 2000000 "row count"
expect "$distinct" = 2000000 "distinct ids"
expect "$shard5" = 2000000 "ids in shard 5"
expect_le "$ms_max" 1024 "ids in one millisecond"
finish
