#!/usr/bin/env bash
# A burst borrows seconds ahead of the clock and rows are written with
# those ids, the server stops with -m immediate, and starts again with its
# clock an hour behind (libfaketime).  Inserts go on at once: no duplicate,
# every new id greater than every id made before the crash, in both forms,
# and shardid.info() counts the calls made while the clock was behind.
# Nothing waits for the clock to catch up: past the lead limit a shard
# opens one new millisecond per millisecond of the clock (1.3), so a call
# may wait at most a millisecond when its shard used up one in less: a few
# such waits, never an hour's.
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 42))
app_server crash $port "shardid.max_lead_ms = 10000" || exit 1
q_at $port <<'SQL' >/dev/null
CREATE EXTENSION shardid;
CREATE SCHEMA s2;
CREATE SEQUENCE s2.t_id_seq;
CREATE TABLE s2.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(2, nextval('s2.t_id_seq')), phase int);
CREATE TABLE s2.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(2), phase int);
SQL

borrow_ahead 2 1000 -p $port -d app || finish
q_at $port -c "INSERT INTO s2.t (phase) SELECT 1 FROM generate_series(1, 50000);
               INSERT INTO s2.u (phase) SELECT 1 FROM generate_series(1, 50000);" || fail "inserts before the crash failed"
cluster_stop crash immediate
# shellcheck disable=SC2046
cluster_start crash $(faketime_env -1h) || { fail "restart failed"; finish; }
echo "server clock after the restart: $(q_at $port -c "SELECT clock_timestamp()") (an hour behind)"

waits0=$(q_at $port -c "SELECT clock_waits FROM shardid.info()")
# a wait for the clock would last an hour: the timeout ends it
q_at $port -c "SET statement_timeout = '10min'" -c "INSERT INTO s2.t (phase) SELECT 2 FROM generate_series(1, 20000);
               INSERT INTO s2.u (phase) SELECT 2 FROM generate_series(1, 20000);" 2>&1 | head -3
expect_ids_after $port "after the restart" old s2.t s2.u
read -r behind step waits <<<"$(q_at $port -F' ' -c "SELECT clock_behind_calls, max_clock_step_back_ms, clock_waits FROM shardid.info()")"
echo "40000 rows; clock_behind_calls=$behind max_clock_step_back_ms=$step clock_waits=$((waits - waits0))"
expect_le "$((waits - waits0))" 100 "calls that waited for the clock after the restart (each at most 1 ms)"
expect_ge "$behind" 40000 "calls counted as behind the clock"
# the step is an hour less the real time that passed since the newest id
# made before the crash
newest=$(q_at $port -c "SELECT round(extract(epoch FROM shardid.id_time(greatest(
    (SELECT max(id) FROM s2.t WHERE phase = 1), (SELECT max(id) FROM s2.u WHERE phase = 1)))) * 1000)")
expect_ge "$step" $((3600000 - ($(date +%s%3N) - newest))) "largest step back counted (ms)"
cluster_stop crash
finish
