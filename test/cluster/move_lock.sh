#!/usr/bin/env bash
# test/cluster/move_lock.sh: the move lock no ordinary role can take.
#
# 1.2's move lock was a session advisory lock, pg_advisory_lock(1936223606,
# shard), in the shard's database: squatter, a role that may only CONNECT,
# took it for shard 5 and every move of shard 5, even --abort, was refused
# as "another shardid-move".  Now the lock is the shard's row of
# shardid.move_locks, which only superusers write, naming the run's session.
#   1. squatter holds the advisory lock on both servers: the move runs;
#   2. squatter cannot write shardid.move_locks (permission denied);
#   3. a row left by a run killed with SIGKILL (its session gone) is taken over;
#   4. a second run while a move runs is refused, naming the first run's
#      session (its pid), and the first move finishes.
. "$(dirname "$0")/../lib.sh" cluster
squat=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; [ -n "$squat" ] && kill "$squat" 2>/dev/null; shardid_cleanup' EXIT

move_servers 140 2 "${LOGICAL[@]}" || exit 1
for p in $a $b; do
	on "$p" >/dev/null <<'SQL' || exit 1
CREATE EXTENSION shardid;
CREATE ROLE squatter LOGIN;
GRANT CONNECT ON DATABASE app TO squatter;
SQL
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA app_0005;
CREATE TABLE app_0005.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5, 1), n int);
SELECT shardid.register_shard(5, 'app_0005');
INSERT INTO app_0005.t (n) SELECT g FROM generate_series(1, 100) g;
SQL
sq() { "$PG_BIN/psql" -X -q -At -d "host=$SHARDID_TMP port=$1 user=squatter dbname=app" "${@:2}"; }

# 1. the advisory lock of 1.2, held by squatter on both servers
mkfifo "$SHARDID_TMP/squat.in"
{
	sq "$a" -c "SELECT pg_advisory_lock(1936223606, 5)" -c "SELECT 'held'" -c "SELECT pg_sleep(600)" &
	sq "$b" -c "SELECT pg_advisory_lock(1936223606, 5)" -c "SELECT 'held'" -c "SELECT pg_sleep(600)" &
	wait
} >"$SHARDID_TMP/squat.out" 2>&1 &
squat=$!
wait_until "squatter's advisory locks" eval '[ "$(grep -c held "$SHARDID_TMP/squat.out")" = 2 ]'
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1)
expect "$?" = 0 "a move while squatter holds 1.2's advisory lock"
echo "$out" | grep -q "another shardid-move" && fail "squatter's advisory lock refused the move: $out"
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes >/dev/null 2>&1 || fail "--drop-source"
for p in $a $b; do
	on "$p" -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'squatter'" >/dev/null
done
kill "$squat" 2>/dev/null
wait "$squat" 2>/dev/null
squat=""

# 2. squatter cannot take the new lock
out=$(sq "$b" -c "INSERT INTO shardid.move_locks (shard, pid, backend_start) VALUES (5, pg_backend_pid(), now())" 2>&1)
expect "$out" = "ERROR:  permission denied for table move_locks" "squatter writing shardid.move_locks"

# 3. a lock row whose session is gone (a run killed with SIGKILL) is taken over
on "$b" -c "INSERT INTO shardid.move_locks (shard, pid, backend_start) VALUES (5, 99999999, now() - interval '1 hour')" >/dev/null
out=$("$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" 2>&1)
expect "$?" = 0 "a move over a lock row left by a killed run"
[ "$?" = 0 ] || echo "$out"
"$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --drop-source --yes >/dev/null 2>&1 || fail "--drop-source back"
expect "$(on "$a" -c "SELECT count(*) FROM shardid.move_locks") $(on "$b" -c "SELECT count(*) FROM shardid.move_locks")" = "0 0" \
	"lock rows left after the moves ended"

# 4. a second run while a move runs: refused, naming the first run's session
rm -f "$marker"
SHARDID_MOVE_PAUSE_AT=copy SHARDID_MOVE_PAUSE_FILE=$marker \
	"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/move.log" 2>&1 &
pid=$!
wait_until "the first move paused" test -e "$marker"
holder=$(on "$a" -c "SELECT pid FROM shardid.move_locks WHERE shard = 5")
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --abort 2>&1)
expect "$?" = 1 "--abort while the move runs"
echo "$out" | grep -q "another shardid-move is working on shard 5 with the --from server right now (its session there: pid $holder, application " ||
	fail "the refusal does not name the running move's session (pid $holder): $out"
move_go
expect "$?" = 0 "the first move, after the refused second run"
finish
