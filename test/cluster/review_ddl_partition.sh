#!/usr/bin/env bash
# test/cluster/review_ddl_partition.sh: a partition attached to a
# partitioned table of the shard while the shard moves, in the shard's
# schema or in another one.
#
# The cutover compared the tables of the schema (move_ddl.sh): a partition
# made in the schema is a new table, one made in another schema is not
# there at all, and the move cut over without it (exit 0), its rows left
# behind on the --from server and the range it covers refusing inserts on
# the --to server.  Now the cutover also compares the partitions and
# inheritance children of each table of the schema, wherever they are, and
# each move ends undone naming the table ("other partitions: p"), offline
# (paused after the verification) and online (in the catch-up).
. "$(dirname "$0")/../lib.sh" cluster
move_servers 450 2 "${LOGICAL[@]}" || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" -c "CREATE SCHEMA other" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
CREATE TABLE shard_0006.p (id bigint NOT NULL DEFAULT shardid.next_id(6, 1), k int NOT NULL, PRIMARY KEY (id, k)) PARTITION BY RANGE (k);
CREATE TABLE shard_0006.p1 PARTITION OF shard_0006.p FOR VALUES FROM (0) TO (100);
SELECT shardid.register_shard(6, 'shard_0006');
INSERT INTO shard_0006.p (k) SELECT g FROM generate_series(1, 50) g;
SQL

late_partition() {	# late_partition LABEL SCHEMA PAUSE_POINT LOW ERROR [--online]: a partition made there
	local label=$1 schema=$2 at=$3 lo=$4 error=$5 out status
	shift 5
	move_paused "$label" "$at" "$SHARDID_TMP/move.log" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" "$@"
	on "$a" >/dev/null <<SQL || fail "$label: the migration on a"
CREATE TABLE $schema.p_$lo PARTITION OF shard_0006.p FOR VALUES FROM ($lo) TO ($lo + 100);
INSERT INTO $schema.p_$lo (k) SELECT g FROM generate_series($lo, $lo + 4) g;
SQL
	move_go
	status=$?
	out=$(cat "$SHARDID_TMP/move.log")
	echo "$out" | grep "error" | sed 's/^/  | /'
	expect "$status" = 1 "$label: exit status of the move"
	echo "$out" | grep -qF "shardid-move: error: $error" || fail "$label: the refusal: $out"
	echo "$out" | grep -q "the move was undone" || fail "$label: no word of the undo: $out"
	expect "$(on "$a" -c "SELECT shardid.shard_schema(6)")|$(on "$b" -c "SELECT shardid.shard_schema(6)")" = "shard_0006|" \
		"$label: shard 6 registered on a only"
	expect "$(on "$a" -c "SELECT count(*) FROM $schema.p_$lo")" = 5 "$label: the new partition's rows on a"
	expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0006'")" = 0 "$label: the copy on b"
}
changed='the tables of schema "shard_0006" on the --from server are no longer those of the copy on the --to server (DIFF): a table, a column or a partition was added'
late_partition "offline, in the schema" shard_0006 verify 100 "${changed/DIFF/new: p_100; other partitions: p}"
late_partition "offline, in another schema" other verify 200 "${changed/DIFF/other partitions: p}"
# (online, a partition in another schema from the start fails the
# subscription, which does not find it on the --to server)
on "$a" -c "DROP TABLE other.p_200" >/dev/null || fail "dropping other.p_200"
late_partition "online, in another schema" other catch-up 300 "${changed/DIFF/other partitions: p}" --online
expect "$(on "$a" -c "SELECT count(*) FROM shard_0006.p")" = 60 "the rows of p on a"
# offline, a partition in another schema from the start: the copy of the
# schema lacks it as well (the move cut over without its rows); refused
# before anything changes
"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/move.log" 2>&1
expect "$?" = 1 "a partition in another schema from the start: exit status of the move"
grep -qF 'shardid-move: error: tables of schema "shard_0006" have partitions or inheritance children in other schemas: other.p_300 (of shard_0006.p); a move copies the schema only, and their rows would stay behind: attach them to the schema (ALTER TABLE ... SET SCHEMA) or detach them first; nothing was changed' "$SHARDID_TMP/move.log" ||
	fail "a partition in another schema from the start: the refusal: $(cat "$SHARDID_TMP/move.log")"
grep -q "writes to shard 6 are refused" "$SHARDID_TMP/move.log" && fail "a partition in another schema from the start: the move froze the shard"
expect "$(on "$a" -c "SELECT shardid.shard_schema(6)")|$(on "$b" -c "SELECT shardid.shard_schema(6)")" = "shard_0006|" \
	"a partition in another schema from the start: shard 6 registered on a only"
# the partition in schema other goes (the copy of the schema cannot carry
# it): the next move carries p_100
on "$a" -c "DROP TABLE other.p_300" >/dev/null || fail "dropping other.p_300"
"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/move.log" 2>&1 ||
	fail "the move after the migrations: $(grep error "$SHARDID_TMP/move.log")"
expect "$(on "$b" -c "SELECT count(*) FROM shard_0006.p")|$(on "$b" -c "SELECT count(*) FROM shard_0006.p_100")" = "55|5" \
	"the rows of p on b"
finish
