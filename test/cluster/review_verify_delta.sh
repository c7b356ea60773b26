#!/usr/bin/env bash
# test/cluster/review_verify_delta.sh: the freeze's part of the hashes of an
# online move over row versions that VACUUM FREEZE, HOT updates and aborted
# subtransactions leave (a regression test: shardid-move at 6629de7 passed
# it).
#
# The move pauses once the rows are hashed before the freeze ("hashed"); on
# the --from server a HOT update, a delete, an insert whose subtransaction
# rolls back beside one that commits, a row updated back to its old value,
# then VACUUM (FREEZE) of the table (frozen tuples keep their xmin, which
# the freeze's part reads).  The move succeeds, the rows on the --to server
# those of the --from server.  Then the same on the --to server's copy in
# a second move (the trigger that refuses writes there bypassed by a
# superuser): the move fails naming the table, and is undone.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 684 2 "${LOGICAL[@]}" || exit 1
marker=$SHARDID_TMP/paused
for p in $a $b; do on "$p" -c "CREATE EXTENSION shardid" >/dev/null || exit 1; done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
SELECT shardid.register_shard(6, 'shard_0006');
CREATE TABLE shard_0006.t (id bigint PRIMARY KEY, v text) WITH (fillfactor = 50);
INSERT INTO shard_0006.t SELECT g, 'v' || g FROM generate_series(1, 50) g;
SQL
changes() {	# changes N: the changes, on rows N (of 1 to 50) and 100 + N
	echo "UPDATE shard_0006.t SET v = 'hot' WHERE id = $1;
DELETE FROM shard_0006.t WHERE id = $(($1 + 1));
BEGIN; SAVEPOINT s; INSERT INTO shard_0006.t VALUES ($((100 + $1)), 'gone'); ROLLBACK TO s;
INSERT INTO shard_0006.t VALUES ($((101 + $1)), 'kept'); COMMIT;
UPDATE shard_0006.t SET v = 'x' WHERE id = $(($1 + 2)); UPDATE shard_0006.t SET v = 'v$(($1 + 2))' WHERE id = $(($1 + 2));"
}
content() { on "$1" -c "SELECT string_agg(id || ':' || v, ',' ORDER BY id) FROM shard_0006.t"; }
move_paused "changes on the --from server" hashed "$SHARDID_TMP/from.move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" --online &&
	{ on "$a" -c "$(changes 1)" -c "VACUUM (FREEZE) shard_0006.t" >/dev/null || fail "the changes on the --from server (test of the test)"; }
move_go
status=$?
sed 's/^/  | /' "$SHARDID_TMP/from.move"
expect "$status" = 0 "the move with changes on the --from server: exit status"
expect "$(content "$b")" = "$(content "$a")" "the rows on the --to server"
expect "$(on "$b" -c "SELECT v FROM shard_0006.t WHERE id = 1")" = hot "the HOT update moved"
"$move" --shard 6 --from "$(conn "$b")" --to "$(conn "$a")" --drop-source --yes >/dev/null 2>&1 ||
	on "$a" -c "DROP SCHEMA shard_0006 CASCADE" >/dev/null || fail "the old copy dropped"
move_paused "changes on the --to server" hashed "$SHARDID_TMP/to.move" --shard 6 --from "$(conn "$b")" --to "$(conn "$a")" --online &&
	{ PGOPTIONS="-c session_replication_role=replica" on "$a" -c "$(changes 10)" -c "VACUUM (FREEZE) shard_0006.t" >/dev/null ||
		fail "the changes on the --to server (test of the test)"; }
move_go
move_differs "changes on the --to server" "$b" "$a" "$SHARDID_TMP/to.move" $? 6 t 50
finish
