#!/usr/bin/env bash
# A burst borrows seconds ahead of the clock and rows are written with
# those ids, the server stops with -m immediate, and starts again with its
# clock an hour behind (libfaketime).  Inserts go on at once: no duplicate,
# every new id greater than every id made before the crash, in both forms,
# and shardid.info() counts the calls made while the clock was behind.
. "$(dirname "$0")/common.bash"

port=$((SHARDID_PORT_BASE + 42))
cluster_init crash $port "$strict_conf" "shardid.max_lead_ms = 10000" || exit 1
cluster_start crash || exit 1
use_cluster $port
q -c "CREATE DATABASE app" >/dev/null
q_at $port <<'SQL' >/dev/null
CREATE EXTENSION shardid;
CREATE SCHEMA s2;
CREATE SEQUENCE s2.t_id_seq;
CREATE TABLE s2.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(2, nextval('s2.t_id_seq')), phase int);
CREATE TABLE s2.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(2), phase int);
SQL

lead=$(q_at $port -c "
    SELECT round(extract(epoch FROM shardid.id_time(max(id)) - clock_timestamp()) * 1000)
    FROM (SELECT shardid.next_id(2) AS id FROM generate_series(1, 5000000)) s")
q_at $port -c "INSERT INTO s2.t (phase) SELECT 1 FROM generate_series(1, 50000);
               INSERT INTO s2.u (phase) SELECT 1 FROM generate_series(1, 50000);" || fail "inserts before the crash failed"
echo "burst ended $lead ms ahead of the clock"
expect_ge "$lead" 1000 "lead of the burst (ms)"
cluster_stop crash immediate
# shellcheck disable=SC2046
cluster_start crash $(faketime_env -1h) || { fail "restart failed"; finish; }
echo "server clock after the restart: $(q_at $port -c "SELECT clock_timestamp()") (an hour behind)"

start=$(date +%s%3N)
q_at $port -c "INSERT INTO s2.t (phase) SELECT 2 FROM generate_series(1, 20000);
               INSERT INTO s2.u (phase) SELECT 2 FROM generate_series(1, 20000);" 2>&1 | head -3
elapsed=$(($(date +%s%3N) - start))
expect_ids_after $port "after the restart" old s2.t s2.u
read -r behind step <<<"$(q_at $port -F' ' -c "SELECT clock_behind_calls, max_clock_step_back_ms FROM shardid.info()")"
echo "40000 rows in $elapsed ms; clock_behind_calls=$behind max_clock_step_back_ms=$step"
expect_le "$elapsed" 20000 "time for the inserts after the restart (ms)"
expect_ge "$behind" 40000 "calls counted as behind the clock"
expect_ge "$step" 3600000 "largest step back counted (ms)"
cluster_stop crash
finish
