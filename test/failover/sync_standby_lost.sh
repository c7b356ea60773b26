#!/usr/bin/env bash
# Synchronous replication (synchronous_standby_names = '*') whose only
# standby (clock 3 s behind) is stopped, so that no new high-water mark H
# can be confirmed.
#
# 1. Waits for a raise of H are interruptible: h1 raises H and waits for
#    the standby; h2 (statement_timeout 2 s, same shard) and h3 (another
#    shard) need H too and wait for h1's raise, under shardid's own wait
#    event; h2's timeout, a pg_cancel_backend() of h3 and a
#    pg_terminate_backend() of h4 each end their wait at once with an
#    error; a cancel of h1 ends its wait with an error, not with ids.
#    (1.1: h2-h4 waited on LWLock/extension until h1 was cancelled.)
# 2. Every session's ids are covered by its own durability: session 1
#    (synchronous_commit = local) makes 2M ids, which needs H raised;
#    session 2 (on) then asks for 20,000 ids.  Neither may get an id past
#    an H the standby has not confirmed.  The primary crashes, the standby
#    is promoted and makes 3M ids of the shard: none equals an id that
#    session 2 received.  (1.1: session 1's unconfirmed H covered session
#    2's ids, which the promoted server handed out again.)
. "$(dirname "$0")/../lib.sh" failover

primary=$((SHARDID_PORT_BASE + 50))
standby=$((primary + 1))
app_server primary $primary || exit 1
q_at $primary <<'SQL' >/dev/null
CREATE EXTENSION shardid;
SELECT shardid.next_id(1);
SQL
standby_of standby $standby $primary -3s || finish
q_at $primary -c "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >/dev/null
for i in $(seq 600); do
	[ "$(q_at $primary -c "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")" = 1 ] && break
	sleep 0.1
done
expect "$(q_at $primary -c "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'")" = 1 "a synchronous standby"
# ids while the standby confirms: H raised and confirmed
q_at $primary -c "SELECT count(shardid.next_id(1)) FROM generate_series(1, 100000)" >/dev/null || fail "ids with the standby up"
cluster_stop standby fast
echo "standby stopped; H as of now: $(q_at $primary -c "SELECT high_water_mark FROM shardid.info()")"

# wait_state APPNAME WAIT_EVENT_TYPE: until the session waits so (60 s)
wait_state() {
	local end=$((SECONDS + 60))
	while [ $SECONDS -lt $end ]; do
		[ "$(q_at $primary -c "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$1' AND wait_event_type = '$2'")" = 1 ] && return 0
		sleep 0.1
	done
	fail "$1 did not come to wait ($2): $(q_at $primary -c "SELECT wait_event_type, wait_event FROM pg_stat_activity WHERE application_name = '$1'")"
	return 1
}
pid_of() { q_at $primary -c "SELECT pid FROM pg_stat_activity WHERE application_name = '$1'"; }
# ended APPNAME BACKGROUND_PID: the session ended within 10 s
ended() {
	local end=$((SECONDS + 10))
	while [ $SECONDS -lt $end ]; do
		kill -0 "$2" 2>/dev/null || return 0
		sleep 0.1
	done
	fail "$1 still waits 10 s after it was told to stop"
	return 1
}
burst() {	# burst APPNAME SHARD [SET ...]: ids until H must be raised
	local app=$1 shard=$2
	shift 2
	PGAPPNAME=$app q_at $primary "$@" -c "SELECT count(shardid.next_id($shard)) FROM generate_series(1, 20000000)" \
		>"$SHARDID_TMP/$app.out" 2>&1
}

# 1. h1 raises H and waits for the standby
burst h1 1 &
h1=$!
wait_state h1 IPC
echo "h1 waits: $(q_at $primary -c "SELECT wait_event_type || '/' || wait_event FROM pg_stat_activity WHERE application_name = 'h1'")"
start=$(date +%s%3N)
burst h2 1 -c "SET statement_timeout = '2s'" &
h2=$!
burst h3 2 &
h3=$!
burst h4 3 &
h4=$!
wait_state h3 Extension
wait_state h4 Extension
events=$(q_at $primary -c "SELECT string_agg(DISTINCT wait_event, ',') FROM pg_stat_activity WHERE application_name IN ('h3', 'h4')")
echo "h3, h4 wait on: $events"
if [ "$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')" -ge 17 ]; then
	expect "$events" = ShardidHighWater "wait event of the waiters"
fi
ended h2 $h2 && echo "h2 ended after $(($(date +%s%3N) - start)) ms: $(head -1 "$SHARDID_TMP/h2.out")"
expect "$(grep -c "canceling statement due to statement timeout" "$SHARDID_TMP/h2.out")" = 1 "h2 ended by its statement_timeout"
q_at $primary -c "SELECT pg_cancel_backend($(pid_of h3))" >/dev/null
ended h3 $h3 && echo "h3 after pg_cancel_backend: $(head -1 "$SHARDID_TMP/h3.out")"
expect "$(grep -c "canceling statement due to user request" "$SHARDID_TMP/h3.out")" = 1 "h3 ended by pg_cancel_backend"
q_at $primary -c "SELECT pg_terminate_backend($(pid_of h4))" >/dev/null
ended h4 $h4 && echo "h4 after pg_terminate_backend: $(head -1 "$SHARDID_TMP/h4.out")"
expect "$(grep -c "terminating connection due to administrator command" "$SHARDID_TMP/h4.out")" = 1 "h4 ended by pg_terminate_backend"
kill -0 $h1 2>/dev/null || fail "h1 ended before it was cancelled: $(cat "$SHARDID_TMP/h1.out")"
q_at $primary -c "SELECT pg_cancel_backend($(pid_of h1))" >/dev/null
ended h1 $h1 && echo "h1 after pg_cancel_backend: $(grep -E "^(ERROR|[0-9])" "$SHARDID_TMP/h1.out" | head -1)"
expect "$(grep -c "ERROR:  canceling the wait for the synchronous standbys to confirm shardid's high-water mark" "$SHARDID_TMP/h1.out")" = 1 "h1: an error, no ids"

# 2. mixed durability levels, on a fresh start of the primary (sessions
# that still wait, on 1.1, are ended by it; the standby stays stopped)
cluster_stop primary immediate
cluster_start primary || { fail "primary did not start again"; finish; }
wait
PGAPPNAME=s1 q_at $primary -c "SET synchronous_commit = local" -c "SET statement_timeout = '5s'" \
	-c "SELECT count(shardid.next_id(5)) FROM generate_series(1, 2000000)" >"$SHARDID_TMP/s1.out" 2>&1
echo "session 1 (local): $(grep -E "^(ERROR|[0-9])" "$SHARDID_TMP/s1.out" | head -1)"
expect "$(grep -c "ERROR:  canceling the wait for the synchronous standbys to confirm shardid's high-water mark" "$SHARDID_TMP/s1.out")" = 1 "session 1 (local) waits for the standby to raise H, and its statement_timeout ends that with an error"
PGAPPNAME=s2 q_at $primary -c "SET statement_timeout = '5s'" \
	-c "SELECT shardid.next_id(5) FROM generate_series(1, 20000)" >"$SHARDID_TMP/s2.out" 2>&1
grep -E '^[0-9]+$' "$SHARDID_TMP/s2.out" >"$SHARDID_TMP/s2.ids"
echo "session 2 (on): $(wc -l <"$SHARDID_TMP/s2.ids") ids; $(grep -E "^ERROR" "$SHARDID_TMP/s2.out" | head -1)"
cluster_stop primary immediate
# shellcheck disable=SC2046
cluster_start standby $(faketime_env -3s) || { fail "standby did not start again"; finish; }
ready $standby || { fail "standby not ready"; finish; }
as_pg "$PG_BIN/pg_ctl" -D "$SHARDID_TMP/standby" -w promote >/dev/null || fail "promotion failed"
q_at $standby <<SQL >/dev/null || fail "ids of session 2 on the promoted standby"
CREATE TABLE given (id bigint);
\copy given FROM '$SHARDID_TMP/s2.ids'
SQL
# before the promoted server makes an id: the H it replayed covers every id
# session 2 received (what keeps them from being made again)
above=$(q_at $standby -c "SELECT count(*) FROM given WHERE shardid.id_time(id) > (SELECT high_water_mark FROM shardid.info())")
echo "promoted: $above of the ids session 2 received lie past the H the standby replayed"
expect "$above" = 0 "ids of session 2 (synchronous_commit = on) past the H the synchronous standby confirmed"
q_at $standby -c "CREATE TABLE made AS SELECT shardid.next_id(5) AS id FROM generate_series(1, 3000000)" >/dev/null ||
	fail "ids on the promoted standby"
read -r given repeats <<<"$(q_at $standby -F' ' -c "SELECT (SELECT count(*) FROM given), count(*) FROM made JOIN given USING (id)")"
echo "promoted: 3M ids of shard 5; $repeats of them equal one of the $given ids session 2 received"
expect "$repeats" = 0 "ids of session 2 (synchronous_commit = on) made again by the promoted standby"
cluster_stop standby
finish
