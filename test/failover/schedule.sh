#!/usr/bin/env bash
# A randomized, seeded fault schedule.  A primary and a streaming standby;
# each round picks, from the seed: asynchronous or synchronous replication,
# the synchronous_commit of each client session, whether the standby lags
# (SIGSTOP of its walreceiver), clock offsets of both servers (libfaketime,
# at each start), and the fault: a crash (-m immediate) or a fast stop of
# the primary, then either a restart of the same server or the promotion of
# the standby.  Every id returned to a client is recorded, with whether
# its commit was acknowledged (INSERT ... RETURNING) or it was only handed
# out (SELECT next_id()), and the session's synchronous_commit.  After the
# fault the new primary makes 2M ids of each shard, and the invariants of
# the README ("Failover and restarts") are checked:
#   - no id in the new primary's tables repeats, and every id it makes is
#     greater than every id stored there (replicated or recovered);
#   - a restart of the same server repeats no id handed out before;
#   - a promoted synchronous standby repeats no id handed out before to a
#     session whose synchronous_commit is on, remote_write or remote_apply.
# Then the other server is made a standby of the new primary again
# (pg_basebackup) and the next round starts.
#
#   SCHEDULE_SEED=n   the seed (default: random; printed)
#   SCHEDULE_ROUNDS=n rounds (default 3; `make soak` sets more)
. "$(dirname "$0")/common.bash"

seed=${SCHEDULE_SEED:-$((RANDOM * 32768 + RANDOM))}
rounds=${SCHEDULE_ROUNDS:-3}
RANDOM=$seed
echo "schedule seed $seed, $rounds rounds (SCHEDULE_SEED=$seed to repeat)"
# pick VAR CHOICE...: VAR = one of the choices (no subshell: bash reseeds
# RANDOM in subshells, which would make the schedule unrepeatable)
pick() {
	local a=("${@:2}")
	printf -v "$1" '%s' "${a[RANDOM % ${#a[@]}]}"
}

port_a=$((SHARDID_PORT_BASE + 80))
port_b=$((port_a + 1))
cluster_init a $port_a "$strict_conf" "shardid.max_lead_ms = 3000" "wal_sender_timeout = 5s" || exit 1
cluster_start a || exit 1
use_cluster $port_a
q -c "CREATE DATABASE app" >/dev/null
q_at $port_a <<'SQL' >/dev/null
CREATE EXTENSION shardid;
CREATE SCHEMA s1;
CREATE TABLE s1.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(1), phase int);
CREATE SCHEMA s2;
CREATE SEQUENCE s2.t_id_seq;
CREATE TABLE s2.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(2, nextval('s2.t_id_seq')), phase int);
SQL
primary=a
standby=b
declare -A port=([a]=$port_a [b]=$port_b)
: >"$SHARDID_TMP/promised_sync"	# ids handed to on/remote_* sessions under sync replication
: >"$SHARDID_TMP/handed"		# every id handed out by the current primary

# make_standby NAME OFFSET: NAME becomes a fresh standby of the primary
make_standby() {
	as_pg rm -rf "$SHARDID_TMP/$1"
	as_pg "$PG_BIN/pg_basebackup" -D "$SHARDID_TMP/$1" -R -X stream -c fast -h "$SHARDID_TMP" \
		-p "${port[$primary]}" -U postgres || return 1
	cluster_conf "$1" "port = ${port[$1]}"
	# shellcheck disable=SC2046
	cluster_start "$1" $(faketime_env "$2") || return 1
	ready "${port[$1]}"
}
walreceiver_pid() {
	ps -o pid=,args= -u postgres | awk -v d="$SHARDID_TMP/$standby" '/walreceiver/ {print $1}' | while read -r p; do
		[ "$(readlink "/proc/$p/cwd")" = "$SHARDID_TMP/$standby" ] && echo "$p"
	done
}

pick off +0 -3s
make_standby b "$off" || { fail "first standby"; finish; }

for round in $(seq "$rounds"); do
	pick repl async sync
	pick lag no no yes
	pick fault immediate fast
	pick after promote promote restart
	pick offset +0 -3s -10s +2s
	echo "--- round $round: $repl replication, standby lags: $lag, primary $primary stops $fault, then $after (clock $offset)"
	if [ "$repl" = sync ]; then
		q_at "${port[$primary]}" -c "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >/dev/null
	else
		q_at "${port[$primary]}" -c "ALTER SYSTEM SET synchronous_standby_names = ''" -c "SELECT pg_reload_conf()" >/dev/null
	fi
	sleep 0.5
	wr=""
	if [ "$lag" = yes ]; then
		wr=$(walreceiver_pid)
		[ -n "$wr" ] && kill -STOP "$wr"
	fi
	# three client sessions, each with its own synchronous_commit
	pids=""
	for c in 1 2 3; do
		pick level off local on remote_write remote_apply
		pick shard 1 2
		pick n 1000 50000 400000
		(
			PGOPTIONS="-c synchronous_commit=$level -c statement_timeout=8s" q_at "${port[$primary]}" \
				-c "INSERT INTO s$shard.t (phase) SELECT $round FROM generate_series(1, 2000) RETURNING id" 2>/dev/null |
				sed "s/\$/ $level acked/"
			PGOPTIONS="-c synchronous_commit=$level -c statement_timeout=8s" q_at "${port[$primary]}" \
				-c "SELECT shardid.next_id($shard) FROM generate_series(1, $n)" 2>/dev/null |
				sed "s/\$/ $level handed/"
		) >"$SHARDID_TMP/client$c" &
		pids="$pids $!"
	done
	# Every client's statements have an 8 s statement_timeout, and no wait
	# of shardid's may outlast it.  A COMMIT waiting for the synchronous
	# standby is PostgreSQL's own wait, which statement_timeout does not
	# cover (it is disabled before the commit): after 15 s, no session may
	# be waiting in shardid (wait event type Extension, ShardidHighWater on
	# 17+), and the others are cancelled, which ends a commit's wait with a
	# warning.  The ids such a commit got were below a confirmed H anyway.
	clients_alive() {
		alive=0
		for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 1 ]
	}
	for i in $(seq 150); do
		clients_alive || break
		sleep 0.1
	done
	if clients_alive; then
		stuck=$(q_at "${port[$primary]}" -c "SELECT count(*) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND wait_event_type = 'Extension'
			  AND now() - query_start > interval '10 s'")
		[ "$stuck" = 0 ] || fail "round $round: $stuck sessions wait in shardid past their statement_timeout of 8 s"
		q_at "${port[$primary]}" -c "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()" >/dev/null
		for i in $(seq 600); do
			clients_alive || break
			sleep 0.1
		done
	fi
	clients_alive && fail "round $round: clients still wait 60 s after they were cancelled"
	[ -n "$wr" ] && [ $alive = 1 ] && kill -CONT "$wr" 2>/dev/null
	# shellcheck disable=SC2086
	wait $pids
	cat "$SHARDID_TMP"/client[123] >>"$SHARDID_TMP/handed"
	if [ "$repl" = sync ]; then
		awk '$2 ~ /^(on|remote_write|remote_apply)$/ {print $1}' "$SHARDID_TMP"/client[123] >>"$SHARDID_TMP/promised_sync"
	fi
	echo "clients got $(cat "$SHARDID_TMP"/client[123] | wc -l) ids ($(cat "$SHARDID_TMP"/client[123] | awk '{print $2}' | sort | uniq -c | tr '\n' ' '))"
	cluster_stop "$primary" "$fault"
	[ -n "$wr" ] && kill -CONT "$wr" 2>/dev/null

	if [ "$after" = restart ]; then
		# shellcheck disable=SC2046
		cluster_start "$primary" $(faketime_env "$offset") || { fail "round $round: restart"; break; }
		awk '{print $1}' "$SHARDID_TMP/handed" >"$SHARDID_TMP/promised"
		new=$primary
	else
		cluster_stop "$standby" fast
		# shellcheck disable=SC2046
		cluster_start "$standby" $(faketime_env "$offset") || { fail "round $round: standby start"; break; }
		ready "${port[$standby]}"
		as_pg "$PG_BIN/pg_ctl" -D "$SHARDID_TMP/$standby" -w promote >/dev/null || { fail "round $round: promotion"; break; }
		cp "$SHARDID_TMP/promised_sync" "$SHARDID_TMP/promised"
		new=$standby
		standby=$primary
		primary=$new
	fi
	ready "${port[$new]}"
	q_at "${port[$new]}" -c "ALTER SYSTEM SET synchronous_standby_names = ''" -c "SELECT pg_reload_conf()" >/dev/null
	q_at "${port[$new]}" <<SQL >"$SHARDID_TMP/check" 2>&1 || fail "round $round: ids on the new primary: $(cat "$SHARDID_TMP/check")"
CREATE TEMP TABLE promised (id bigint);
\copy promised FROM '$SHARDID_TMP/promised'
CREATE TEMP TABLE made AS
    SELECT shardid.next_id(1) AS id FROM generate_series(1, 2000000)
    UNION ALL SELECT shardid.next_id(2) FROM generate_series(1, 2000000);
INSERT INTO s1.t (phase) SELECT -$round FROM generate_series(1, 1000);
INSERT INTO s2.t (phase) SELECT -$round FROM generate_series(1, 1000);
SELECT 'repeats', count(*) FROM made JOIN promised USING (id);
WITH stored AS (
    SELECT shardid.id_shard(id) AS shard, max(id) AS newest
    FROM (SELECT id FROM s1.t WHERE phase <> -$round UNION ALL SELECT id FROM s2.t WHERE phase <> -$round) x
    GROUP BY 1)
SELECT 'below', count(*) FROM made JOIN stored ON shardid.id_shard(made.id) = stored.shard
WHERE made.id <= stored.newest;
SELECT 'duplicates', (SELECT count(*) - count(DISTINCT id) FROM s1.t) + (SELECT count(*) - count(DISTINCT id) FROM s2.t);
SQL
	repeats=$(awk -F'|' '$1 == "repeats" {print $2}' "$SHARDID_TMP/check")
	below=$(awk -F'|' '$1 == "below" {print $2}' "$SHARDID_TMP/check")
	dups=$(awk -F'|' '$1 == "duplicates" {print $2}' "$SHARDID_TMP/check")
	echo "round $round on $new: promised ids repeated: $repeats, new ids below a stored one: $below, duplicate ids in tables: $dups"
	expect "$repeats $below $dups" = "0 0 0" "round $round (seed $seed)"
	[ "$script_failed" = 1 ] && { echo "FAILED at round $round: SCHEDULE_SEED=$seed"; break; }
	: >"$SHARDID_TMP/handed"
	: >"$SHARDID_TMP/promised_sync"
	q_at "${port[$primary]}" -c "ALTER SYSTEM SET synchronous_standby_names = ''" -c "SELECT pg_reload_conf()" >/dev/null
	cluster_stop "$standby" immediate 2>/dev/null
	pick off +0 -3s +2s
	make_standby "$standby" "$off" || { fail "round $round: new standby"; break; }
done
cluster_stop "$primary" 2>/dev/null
cluster_stop "$standby" 2>/dev/null
finish
