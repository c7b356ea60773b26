#!/usr/bin/env bash
# shardid.next_ids() and next_id() of one shard at the same time: every id
# unique, and none further ahead of the clock than shardid.max_lead_ms.
# The lead is set to 5 ms, so that each next_ids(15, 5000) (5 ms of ids)
# cannot be reserved at once and goes in chunks with waits for the clock.
# 2 pgbench clients insert next_ids(15, 5000), 2 insert 2000 next_id(15)
# each, into one table with a primary key on id; every row also records
# clock_timestamp(), read after its id was made.
. "$(dirname "$0")/../lib.sh" servers

q >/dev/null <<'SQL'
ALTER SYSTEM SET shardid.max_lead_ms = 5;
SELECT pg_reload_conf();
CREATE TABLE next_ids_t (id bigint PRIMARY KEY, at timestamptz NOT NULL, bulk boolean NOT NULL);
SQL
lead_is_5ms() { [ "$(q -c "SHOW shardid.max_lead_ms")" = 5ms ]; }
wait_until "the lead of 5 ms in effect" lead_is_5ms

echo "INSERT INTO next_ids_t SELECT i, clock_timestamp(), true FROM shardid.next_ids(15, 5000) i;" >"$SHARDID_TMP/bulk.sql"
echo "INSERT INTO next_ids_t SELECT shardid.next_id(15), clock_timestamp(), false FROM generate_series(1, 2000);" >"$SHARDID_TMP/single.sql"
"$PG_BIN/pgbench" -n -c 2 -j 1 -t 10 -f "$SHARDID_TMP/bulk.sql" >"$SHARDID_TMP/bulk.log" 2>&1 &
bulk=$!
"$PG_BIN/pgbench" -n -c 2 -j 1 -t 10 -f "$SHARDID_TMP/single.sql" >"$SHARDID_TMP/single.log" 2>&1
single_status=$?
wait $bulk
bulk_status=$?

read -r rows distinct bulk_rows ahead <<<"$(q -F' ' -c "
    SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE bulk),
           coalesce(max(round(extract(epoch FROM shardid.id_time(id) - at) * 1000)), 0)
    FROM next_ids_t")"
echo "rows=$rows distinct=$distinct from next_ids=$bulk_rows; furthest id ahead of its row's clock: $ahead ms; pgbench exit $bulk_status $single_status"
q >/dev/null <<'SQL'
ALTER SYSTEM RESET shardid.max_lead_ms;
SELECT pg_reload_conf();
DROP TABLE next_ids_t;
SQL
[ "$bulk_status $single_status" = "0 0" ] || { cat "$SHARDID_TMP/bulk.log" "$SHARDID_TMP/single.log" | grep -i error | head -5; }
expect "$bulk_status $single_status" = "0 0" "pgbench exit status (next_ids, next_id)"
expect "$rows $distinct $bulk_rows" = "140000 140000 100000" "rows, distinct ids, ids from next_ids()"
expect_le "$ahead" 6 "ms an id is ahead of the clock with a lead of 5 ms"
finish
