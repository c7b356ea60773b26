#!/usr/bin/env bash
# An immediate shutdown in the middle of a load, right after ids were
# stamped seconds ahead of the clock, then a restart: every id made after
# the restart sorts after every id made before it, so none repeats.  Shared
# memory is set up anew at start, so this holds only because every shard is
# re-seeded past the largest lead (shardid.max_lead_ms).
. "$(dirname "$0")/../lib_script.sh"

q >/dev/null <<'SQL'
ALTER SYSTEM SET shardid.max_lead_ms = 10000;
SELECT pg_reload_conf();
CREATE SCHEMA s6;
CREATE SEQUENCE s6.t_id_seq;
CREATE TABLE s6.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(6, nextval('s6.t_id_seq')), phase int);
SQL
sleep 0.5

# a steady writer for the crash to interrupt
echo "INSERT INTO s6.t (phase) SELECT 1 FROM generate_series(1, 100);" >"$SHARDID_TMP/crash.sql"
"$PG_BIN/pgbench" -n -c 4 -j 2 -T 60 -f "$SHARDID_TMP/crash.sql" >"$SHARDID_TMP/crash-pgbench.log" 2>&1 &
writer=$!
sleep 1

# 8M ids in one statement borrow seconds ahead of the clock
read -r max_before lead <<<"$(q -F' ' -c "
    SELECT max(id), round(extract(epoch FROM shardid.id_time(max(id)) - clock_timestamp()) * 1000)
    FROM (SELECT shardid.next_id(6) AS id FROM generate_series(1, 8000000)) s")"
echo "largest id before the crash: $max_before, $lead ms ahead of the clock"
cluster_stop "$SHARDID_CLUSTER" immediate
wait $writer
echo "writer ended with exit status $? (expected: lost its connection)"
cluster_start "$SHARDID_CLUSTER" || { fail "restart failed"; finish; }

read -r min_after seeded <<<"$(q -F' ' -c "
    SELECT min(id), (SELECT seeded_at FROM shardid.info()) > clock_timestamp()
    FROM (SELECT shardid.next_id(6) AS id FROM generate_series(1, 100000)) s")"
q -c "INSERT INTO s6.t (phase) SELECT 2 FROM generate_series(1, 100000)" || fail "insert after restart failed"
read -r trows tafter <<<"$(q -F' ' -c "
    SELECT count(*), (SELECT min(id) FROM s6.t WHERE phase = 2) > (SELECT max(id) FROM s6.t WHERE phase = 1)
    FROM s6.t")"
echo "smallest id after the restart: $min_after (seed still ahead of the clock: $seeded); s6.t rows=$trows, later ids sort after: $tafter"
expect_ge "$lead" 2000 "lead before the crash (ms)"
expect "$seeded" = t "the restart seed is ahead of the clock"
expect "$(q -c "SELECT $min_after > $max_before")" = t "ids after the restart sort after ids before it"
expect "$tafter" = t "table ids after the restart sort after ids before it"

q -c "ALTER SYSTEM RESET shardid.max_lead_ms" -c "SELECT pg_reload_conf()" >/dev/null
finish
