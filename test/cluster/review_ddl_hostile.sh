#!/usr/bin/env bash
# test/cluster/review_ddl_hostile.sh: a table owner's DDL on the --from
# server while the shard moves, against the cutover's comparison of the
# tables of the schema, their columns and their partitions (move_ddl.sh,
# review_ddl_partition.sh).
#
# mallory (no superuser) may create in shard 6's schema and owns its table
# m; the superuser owns t and the partitioned table pt.  While a move
# pauses after its verification:
#   1. she tries to hang a child on t and a partition on pt in her own
#      schema, which the comparison would see on every later move (a move
#      of the shard refused forever): PostgreSQL refuses both (she owns
#      neither table), and the move succeeds;
#   2. on the move back, she gives m a column of her domain, whose CHECK
#      calls her payload, and makes a table whose name holds the
#      separators of the message ("x; new: y"): the move ends undone,
#      naming both, quoted.
# Her code never runs as a superuser, and the move after her DDL succeeds.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 460 2 || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null || exit 1
	mallory_role "$p" || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
GRANT USAGE, CREATE ON SCHEMA shard_0006 TO mallory;
CREATE TABLE shard_0006.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(6, 1), n int);
CREATE TABLE shard_0006.pt (id bigint NOT NULL DEFAULT shardid.next_id(6, 1), k int NOT NULL, PRIMARY KEY (id, k)) PARTITION BY RANGE (k);
CREATE TABLE shard_0006.pt1 PARTITION OF shard_0006.pt FOR VALUES FROM (0) TO (100);
SELECT shardid.register_shard(6, 'shard_0006');
INSERT INTO shard_0006.t (n) SELECT g FROM generate_series(1, 10) g;
INSERT INTO shard_0006.pt (k) SELECT g FROM generate_series(1, 10) g;
SET ROLE mallory;
CREATE TABLE shard_0006.m (id bigint PRIMARY KEY, n int);
INSERT INTO shard_0006.m SELECT g, g FROM generate_series(1, 10) g;
SQL
mallory_mark "$a" "$b"
paused_move() {	# paused_move FROM TO: a move paused after its verification
	move_paused "" verify "$SHARDID_TMP/move.log" --shard 6 --from "$(conn "$1")" --to "$(conn "$2")" --move-and-drop-source --yes
}
resume() {	# resume: the paused move let go, its exit status in $status
	move_go
	status=$?
	grep "error" "$SHARDID_TMP/move.log" | sed 's/^/  | /'
}

# 1. a child of t, a partition of pt: not hers to add
paused_move "$a" "$b"
expect "$(mallory_verbosity=terse as_mallory "$a" -c "CREATE TABLE mallory.kid () INHERITS (shard_0006.t)" 2>&1)" = \
	'ERROR:  must be owner of table t' "her child of t"
expect "$(mallory_verbosity=terse as_mallory "$a" -c "CREATE TABLE mallory.part PARTITION OF shard_0006.pt FOR VALUES FROM (100) TO (200)" 2>&1)" = \
	'ERROR:  must be owner of table pt' "her partition of pt"
resume
expect "$status" = 0 "the move to b, her children refused"
expect "$(on "$b" -c "SELECT shardid.shard_schema(6), (SELECT count(*) FROM shard_0006.m)")" = "shard_0006|10" "shard 6 on b"

# 2. her column of her domain, her table named with the separators
paused_move "$b" "$a"
as_mallory "$b" >/dev/null <<'SQL' || fail "her DDL on b"
CREATE DOMAIN shard_0006.evil AS int CHECK (mallory.strike());
ALTER TABLE shard_0006.m ADD COLUMN e shard_0006.evil;
CREATE TABLE shard_0006."x; new: y" (id int);
SQL
resume
expect "$status" = 1 "the move back, after her DDL"
grep -qF 'shardid-move: error: the tables of schema "shard_0006" on the --from server are no longer those of the copy on the --to server (new: "x; new: y"; other columns: m): a table, a column or a partition was added' \
	"$SHARDID_TMP/move.log" || fail "the refusal: $(cat "$SHARDID_TMP/move.log")"
grep -q "the move was undone" "$SHARDID_TMP/move.log" || fail "no word of the undo: $(cat "$SHARDID_TMP/move.log")"
expect "$(on "$b" -c "SELECT shardid.shard_schema(6)")|$(on "$a" -c "SELECT shardid.shard_schema(6)")" = "shard_0006|" \
	"shard 6 registered on b only"
no_superuser_code "the moves" "$a" "$b"
mallory_strikes "her domain's CHECK" "$b" -c "SELECT 1::shard_0006.evil"
mallory_mark "$b"

# the next move carries her DDL
"$move" --shard 6 --from "$(conn "$b")" --to "$(conn "$a")" >"$SHARDID_TMP/move.log" 2>&1 ||
	fail "the move after her DDL: $(grep error "$SHARDID_TMP/move.log")"
expect "$(on "$a" -c "SELECT shardid.shard_schema(6), (SELECT count(*) FROM shard_0006.m WHERE e IS NULL), (SELECT count(*) FROM shard_0006.\"x; new: y\")")" = \
	"shard_0006|10|0" "shard 6 back on a"
no_superuser_code "the last move" "$a" "$b"
finish
