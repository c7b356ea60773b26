#!/usr/bin/env bash
# test/cluster/review_hold_swap.sh: the owner of the schema cannot swap a
# superuser's table of the copy for one of hers before an online move into
# PostgreSQL 15 holds it.
#
# The hold (cfeee6a) checks the code of the copy's tables again and takes
# them for the superuser, but not whose they were.  secret belongs to the
# superuser and grants nothing; mallory owns schema shard_0005.  Between the
# copy of the definitions and the subscription (paused at "subscribe") she
# drops secret on the --to server and makes her own secret, readable by
# PUBLIC: the hold took it for the superuser with her grant, the
# subscription filled it with the superuser's rows, and after the move
# every role could read them on the --to server (shardid-move at cfeee6a
# exits 0, and mallory reads the 100 rows that the --from server denied
# her).
#   the move fails, naming the table and both owners, the shard stays where
#   it was, and the --to server keeps no copy.
# On PostgreSQL 16+ nothing is held: skipped.
. "$(dirname "$0")/lib.bash"
move_servers 336 2 "${LOGICAL[@]}" || exit 1
version=$(on "$a" -c "SHOW server_version_num") || exit 1
if [ "$version" -ge 160000 ]; then
	echo "skipped: PostgreSQL $version applies a subscription's changes as the table's owner"
	exit 77
fi
as_mallory() { local p=$1; shift; "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=terse -d "$(conn "$p") user=mallory" "$@"; }
marker=$SHARDID_TMP/paused

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" -c "CREATE ROLE mallory LOGIN" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0005 AUTHORIZATION mallory;
SELECT shardid.register_shard(5, 'shard_0005');
CREATE TABLE shard_0005.secret (id bigint PRIMARY KEY, v text);
INSERT INTO shard_0005.secret SELECT g, 'secret ' || g FROM generate_series(1, 100) g;
SQL
out=$(as_mallory "$a" -c "SELECT count(*) FROM shard_0005.secret" 2>&1)
expect "$out" = "ERROR:  permission denied for table secret" "mallory reads secret on the --from server (test of the test)"

rm -f "$marker"
SHARDID_MOVE_PAUSE_AT=subscribe SHARDID_MOVE_PAUSE_FILE=$marker \
	"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes >"$SHARDID_TMP/move.log" 2>&1 &
pid=$!
wait_until "the move paused before the subscription" test -e "$marker" || { kill "$pid"; cat "$SHARDID_TMP/move.log"; finish; }
as_mallory "$b" >/dev/null <<'SQL' || fail "her swap on the --to server (test of the test)"
DROP TABLE shard_0005.secret;
CREATE TABLE shard_0005.secret (id bigint PRIMARY KEY, v text);
GRANT SELECT ON shard_0005.secret TO PUBLIC;
SQL
rm -f "$marker"
wait "$pid"
status=$?
pid=""
sed 's/^/  | /' "$SHARDID_TMP/move.log"
expect "$status" = 1 "the move whose superuser's table she swapped: exit status"
grep -qxF "shardid-move: error: table shard_0005.secret belongs to role mallory on the --to server, to role postgres on the --from server (changed on the --to server after the copy of the definitions)" \
	"$SHARDID_TMP/move.log" || fail "the error names the table and both owners"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still registered on the --from server"
expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "the copy on the --to server"
out=$(as_mallory "$b" -c "SELECT count(*) FROM shard_0005.secret" 2>&1)
expect "$out" != 100 "mallory reads the superuser's rows on the --to server"
finish
