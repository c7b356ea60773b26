#!/usr/bin/env bash
# test/cluster/move_large_objects.sh: a row written during an online move
# that points at a large object made after the checks ends the move undone.
#
# A move carries no large object (pg_dump --schema leaves them out): its
# checks refuse an oid column pointing at one the --to server lacks
# (move_needs.sh, case 4).  But an online move copies the rows written
# after its checks too: a row that points at a large object made then
# arrived on the --to server as an oid pointing at nothing, and the move
# ended with exit status 0 (shardid-move up to 0777975).  Now the
# verification, in the freeze, reads the oid columns again: the move fails
# naming the column, and is undone; once the large object is on the --to
# server under the same oid, the move runs.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 700 2 "${LOGICAL[@]}" || exit 1
marker=$SHARDID_TMP/paused
# lo_undone LABEL SHARD OID STATUS LOG: the move (exit STATUS, output in LOG)
# failed in the freeze on the large object OID that b lacks, naming the
# column, and was undone: no copy on b, the shard taking writes on a
lo_undone() {
	local label=$1 shard=$2 oid=$3 status=$4 log=$5 schema
	schema=shard_$(printf '%04d' "$2")
	sed 's/^/  | /' "$log"
	expect "$status" = 1 "$label: exit status"
	for want in \
		"shardid-move: error: column body of table $schema.docs points at large objects that the --to server lacks (1, oid $oid): a move carries no large object (pg_dump --schema leaves them out), and the copied oids would point at nothing" \
		"shardid-move: error: rows of schema \"$schema\" written since the checks point at large objects that the --to server lacks (see above)"; do
		grep -qxF -- "$want" "$log" || fail "$label: wanted \"$want\""
	done
	expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = '$schema'")" = 0 "$label: the copy left on the --to server"
	expect "$(on "$a" -c "SELECT shardid.shard_schema($shard)")" = "$schema" "$label: shard $shard registered on the --from server"
	expect "$(on "$a" -c "INSERT INTO $schema.docs VALUES (100, NULL) RETURNING id")" = 100 "$label: shard $shard takes writes on the --from server"
}
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0008;
SELECT shardid.register_shard(8, 'shard_0008');
CREATE TABLE shard_0008.docs (id bigint PRIMARY KEY, body oid);
INSERT INTO shard_0008.docs VALUES (1, NULL), (2, NULL);
SQL
log=$SHARDID_TMP/move.log
move_paused "a large object made during the move" hashed "$log" \
	--shard 8 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes || exit 1
body=$(on "$a" -c "INSERT INTO shard_0008.docs VALUES (3, lo_from_bytea(0, 'late')) RETURNING body") ||
	fail "a row pointing at a new large object"
move_go
lo_undone "a large object made during the move" 8 "$body" "$?" "$log"

# the large object copied to b under the same oid: the move runs
on "$a" -c "SELECT format('SELECT lo_from_bytea(%s, %L::bytea);', oid, lo_get(oid)) FROM pg_largeobject_metadata" |
	on "$b" >/dev/null || fail "copying the large object to b"
"$move" --shard 8 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes >"$log" 2>&1
expect "$?" = 0 "the large object copied first: exit status"
expect "$(on "$b" -c "SELECT convert_from(lo_get(body), 'UTF8') FROM shard_0008.docs WHERE id = 3")" = late \
	"the large object the moved oid points at on b"

# offline, the same reading in the freeze: a row stored before the checks
# whose oid became a large object's after them (made under that oid on the
# --from server while the move ran) ends the move undone as well
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0009;
SELECT shardid.register_shard(9, 'shard_0009');
CREATE TABLE shard_0009.docs (id bigint PRIMARY KEY, body oid);
INSERT INTO shard_0009.docs VALUES (1, 4242420);
SQL
move_paused "offline, a large object made during the move" freeze "$log" \
	--shard 9 --from "$(conn "$a")" --to "$(conn "$b")" --yes || exit 1
on "$a" -c "SELECT lo_from_bytea(4242420, 'late')" >/dev/null || fail "offline: a large object made under a stored oid"
move_go
lo_undone "offline, a large object made during the move" 9 4242420 "$?" "$log"
finish
