#!/usr/bin/env bash
# test/cluster/review_verify_guard.sh: the owner of a table of the shard
# cannot write to it on the --from server after the verification by
# disabling the freeze's trigger.
#
# The freeze is a statement trigger (shardid_moving) on each table, and
# PostgreSQL lets a table's owner ALTER TABLE ... DISABLE TRIGGER any
# trigger of her table that is not internal.  mallory (no superuser) owns
# shard_0006.t; each offline move pauses once the rows are verified
# ("verified"), and on the --from server she
#   1. disables the trigger and inserts a row;
#   2. disables it, inserts a row and enables it again.
# shardid-move at 6629de7 went on, exited 0 and moved the shard, her row on
# the --from server only.  Now the hand-over finds the trigger disabled or
# written since the freeze (its row of pg_trigger no longer the freeze's,
# as the source's row of the journal is), with the tables held against
# writes: each move fails naming the table, and is undone.  (A write made
# once the --from server recorded the hand-over, before the --to server
# registers the shard, stays on the --from server: not tested.)
. "$(dirname "$0")/../lib.sh" cluster
move_servers 680 2 || exit 1
marker=$SHARDID_TMP/paused
for p in $a $b; do on "$p" -c "CREATE EXTENSION shardid" -c "CREATE ROLE mallory LOGIN" >/dev/null || exit 1; done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
GRANT USAGE ON SCHEMA shard_0006 TO mallory;
SELECT shardid.register_shard(6, 'shard_0006');
CREATE TABLE shard_0006.t (id bigint PRIMARY KEY, v text);
ALTER TABLE shard_0006.t OWNER TO mallory;
INSERT INTO shard_0006.t VALUES (1, 'one');
SQL
written() {	# written LABEL ID SQL...: the move, her psql arguments on the --from server once the rows are verified
	local label=$1 id=$2 log=$SHARDID_TMP/move.log status
	shift 2
	move_paused "$label" verified "$log" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" &&
		{ as_mallory "$a" -c "ALTER TABLE shard_0006.t DISABLE TRIGGER shardid_moving" \
			-c "INSERT INTO shard_0006.t VALUES ($id, 'hers')" "$@" >/dev/null ||
			fail "$label: her write on the --from server (test of the test)"; }
	move_go
	status=$?
	sed 's/^/  | /' "$log"
	expect "$status" = 1 "$label: exit status"
	grep -qxF "shardid-move: error: the trigger shardid_moving that refuses writes to table shard_0006.t on the --from server was disabled or changed after the freeze (the owner of a table may ALTER TABLE ... DISABLE TRIGGER): rows written there meanwhile would not be on the --to server; move the shard again" "$log" ||
		fail "$label: the changed trigger not reported, naming the table"
	expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0006'")" = 0 "$label: the copy left on the --to server"
	expect "$(on "$a" -c "SELECT shardid.shard_schema(6)")" = shard_0006 "$label: shard 6 registered on the --from server"
	expect "$(on "$a" -c "SELECT count(*) FROM shard_0006.t WHERE id = $id")" = 1 "$label: her row on the --from server"
}
written "the trigger disabled" 2
written "the trigger disabled and enabled again" 3 -c "ALTER TABLE shard_0006.t ENABLE TRIGGER shardid_moving"
"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/last.move" 2>&1 ||
	fail "the move with the trigger left alone: $(cat "$SHARDID_TMP/last.move")"
expect "$(on "$b" -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM shard_0006.t")" = "1,2,3" "the rows moved"
finish
