#!/usr/bin/env bash
# 8 concurrent clients, each running 400 statements that insert 200 rows
# into one shard table: no duplicate key, all 640,000 rows present.  Once
# with the sequence DEFAULT, once with the sequence-free DEFAULT.  The 2011
# function, or a per-session guard, fails this with duplicate keys.
. "$(dirname "$0")/../lib.sh" servers

q <<'SQL'
CREATE SCHEMA s3;
CREATE SEQUENCE s3.t_id_seq;
CREATE TABLE s3.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(3, nextval('s3.t_id_seq')), v int);
CREATE TABLE s3.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(3), v int);
SQL

for table in s3.t s3.u; do
	echo "INSERT INTO $table (v) SELECT g FROM generate_series(1, 200) g;" >"$SHARDID_TMP/insert.sql"
	"$PG_BIN/pgbench" -n -c 8 -j 2 -t 400 -f "$SHARDID_TMP/insert.sql" >"$SHARDID_TMP/pgbench.log" 2>&1
	status=$?
	errors=$(grep -c "duplicate key" "$SHARDID_TMP/pgbench.log")
	read -r rows distinct shard3 ms_max <<<"$(q -F' ' -c "
	    SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE shardid.id_shard(id) = 3),
	           (SELECT max(n) FROM (SELECT count(*) n FROM $table GROUP BY shardid.id_millis(id)) c)
	    FROM $table")"
	echo "$table: pgbench exit=$status duplicate_key_errors=$errors rows=$rows distinct=$distinct shard_3=$shard3 max_ids_in_one_ms=$ms_max"
	grep -E "^(tps|latency average)" "$SHARDID_TMP/pgbench.log"
	expect "$status" = 0 "$table pgbench exit status"
	expect "$errors" = 0 "$table duplicate key errors"
	expect "$rows" = 640000 "$table rows"
	expect "$distinct" = 640000 "$table distinct ids"
	expect "$shard3" = 640000 "$table ids in shard 3"
	expect_le "$ms_max" 1024 "$table ids in one millisecond"
done
finish
