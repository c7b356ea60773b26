#!/usr/bin/env bash
# An immediate shutdown in the middle of a load, right after ids were
# stamped seconds ahead of the clock, then a restart: every id made after
# the restart sorts after every id made before it, so none repeats.  Shared
# memory is set up anew at start, so this holds only because every shard is
# re-seeded past the largest lead (shardid.max_lead_ms).
. "$(dirname "$0")/../lib.sh" servers

q >/dev/null <<'SQL'
ALTER SYSTEM SET shardid.max_lead_ms = 10000;
CREATE SCHEMA s6;
CREATE SEQUENCE s6.t_id_seq;
CREATE TABLE s6.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(6, nextval('s6.t_id_seq')), phase int);
SQL
reload_conf

# a steady writer for the crash to interrupt
echo "INSERT INTO s6.t (phase) SELECT 1 FROM generate_series(1, 100);" >"$SHARDID_TMP/crash.sql"
"$PG_BIN/pgbench" -n -c 4 -j 2 -T 600 -f "$SHARDID_TMP/crash.sql" >"$SHARDID_TMP/crash-pgbench.log" 2>&1 &
writer=$!
writing() { [ "$(q -c "SELECT EXISTS (SELECT FROM s6.t)")" = t ]; }
wait_until "the writer's first rows" writing

# bursts borrow seconds ahead of the clock
borrow_ahead 6 2000
max_before=$(q -c "SELECT shardid.next_id(6)")
echo "largest id before the crash: $max_before"
cluster_stop "$SHARDID_CLUSTER" immediate
wait $writer
echo "writer ended with exit status $? (expected: lost its connection)"
cluster_start "$SHARDID_CLUSTER" || { fail "restart failed"; finish; }

read -r min_after seeded <<<"$(q -F' ' -c "
    SELECT min(id), (SELECT seeded_at FROM shardid.info()) >= shardid.id_time($max_before)
    FROM (SELECT shardid.next_id(6) AS id FROM generate_series(1, 100000)) s")"
q -c "INSERT INTO s6.t (phase) SELECT 2 FROM generate_series(1, 100000)" || fail "insert after restart failed"
read -r trows tafter <<<"$(q -F' ' -c "
    SELECT count(*), (SELECT min(id) FROM s6.t WHERE phase = 2) > (SELECT max(id) FROM s6.t WHERE phase = 1)
    FROM s6.t")"
echo "smallest id after the restart: $min_after (seed past the ids before the crash: $seeded); s6.t rows=$trows, later ids sort after: $tafter"
expect "$seeded" = t "the restart seed is past every id made before the crash"
expect "$(q -c "SELECT $min_after > $max_before")" = t "ids after the restart sort after ids before it"
expect "$tafter" = t "table ids after the restart sort after ids before it"

q -c "ALTER SYSTEM RESET shardid.max_lead_ms" -c "SELECT pg_reload_conf()" >/dev/null
finish
