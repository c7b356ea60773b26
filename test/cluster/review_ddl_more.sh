#!/usr/bin/env bash
# test/cluster/review_ddl_more.sh: more migrations on the --from server
# while the shard moves offline (paused at "verify", before its verification), against
# the cutover's comparison (move_ddl.sh).
#
# Seen, and the move ends undone naming the table: a table moved into the
# schema (ALTER TABLE ... SET SCHEMA: new), a column renamed (other
# columns); a table moved out fails the verification (its rows are not
# found to count).  Not seen, and the move succeeds with every row (writes
# are refused, so no row breaks what was added): a CHECK and a NOT NULL
# added, a sequence made; the --to server lacks them (doc/shardid-move.md,
# Migrations during a move).
# From a server on shardid 1.2 (no shardid.legacy_ids), a table made during
# the move is seen the same way (the cutover compared nothing there, and
# the move cut over without the table and its rows).
. "$(dirname "$0")/../lib.sh" cluster
move_servers 470 3 || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" -c "CREATE SCHEMA other" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
CREATE TABLE shard_0006.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(6, 1), n int);
CREATE TABLE shard_0006.leaving (id bigint PRIMARY KEY DEFAULT shardid.next_id(6, 1), n int);
CREATE TABLE other.coming (id bigint PRIMARY KEY, n int);
SELECT shardid.register_shard(6, 'shard_0006');
INSERT INTO shard_0006.t (n) SELECT g FROM generate_series(1, 10) g;
INSERT INTO shard_0006.leaving (n) SELECT g FROM generate_series(1, 10) g;
INSERT INTO other.coming SELECT g, g FROM generate_series(1, 3) g;
SQL
on "$c" -c "CREATE EXTENSION shardid VERSION '1.2'" >/dev/null || exit 1
on "$c" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0007;
CREATE TABLE shard_0007.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(7, 1), n int);
SELECT shardid.register_shard(7, 'shard_0007');
INSERT INTO shard_0007.t (n) SELECT g FROM generate_series(1, 10) g;
SQL
during() {	# during LABEL SQL [FROM SHARD]: SQL run on FROM (a) while a move of SHARD (6) to b pauses at verify; $status, $out
	local label=$1 from=${3:-$a} shard=${4:-6}
	move_paused "$label" verify "$SHARDID_TMP/move.log" --shard "$shard" --from "$(conn "$from")" --to "$(conn "$b")"
	on "$from" -c "$2" >/dev/null || fail "$label: the migration"
	move_go
	status=$?
	out=$(cat "$SHARDID_TMP/move.log")
	echo "$out" | grep "error" | sed 's/^/  | /'
}
refused() {	# refused LABEL SQL DIFF
	during "$1" "$2"
	expect "$status" = 1 "$1: exit status of the move"
	echo "$out" | grep -qF "shardid-move: error: the tables of schema \"shard_0006\" on the --from server are no longer those of the copy on the --to server ($3): a table, a column or a partition was added" ||
		fail "$1: the refusal: $out"
	expect "$(on "$a" -c "SELECT shardid.shard_schema(6)")|$(on "$b" -c "SELECT shardid.shard_schema(6)")" = "shard_0006|" \
		"$1: shard 6 registered on a only"
}
refused "set schema, in" "ALTER TABLE other.coming SET SCHEMA shard_0006" "new: coming"
# a table moved out fails the verification first, which reads its columns
during "set schema, out" "ALTER TABLE shard_0006.leaving SET SCHEMA other"
expect "$status" = 1 "set schema, out: exit status of the move"
echo "$out" | grep -qF 'shardid-move: error: could not read the columns of table "shard_0006"."leaving" on the --from server: relation "shard_0006.leaving" does not exist' ||
	fail "set schema, out: the refusal: $out"
expect "$(on "$a" -c "SELECT shardid.shard_schema(6)")|$(on "$b" -c "SELECT shardid.shard_schema(6)")" = "shard_0006|" \
	"set schema, out: shard 6 registered on a only"
refused "a column renamed" "ALTER TABLE shard_0006.t RENAME COLUMN n TO m" "other columns: t"
expect "$(on "$a" -c "SELECT (SELECT count(*) FROM shard_0006.t), (SELECT count(*) FROM shard_0006.coming), (SELECT count(*) FROM other.leaving)")" = \
	"10|3|10" "the rows on a"
# not seen: the move succeeds, every row on b, without what was added
during "a CHECK, a NOT NULL, a sequence" \
	"ALTER TABLE shard_0006.t ADD CHECK (m > 0), ALTER COLUMN m SET NOT NULL; CREATE SEQUENCE shard_0006.s"
expect "$status" = 0 "a CHECK, a NOT NULL, a sequence: exit status of the move"
expect "$(on "$b" -c "SELECT shardid.shard_schema(6), (SELECT count(*) FROM shard_0006.t), (SELECT count(*) FROM shard_0006.coming)")" = \
	"shard_0006|10|3" "the rows on b"
expect "$(on "$b" -c "SELECT (SELECT count(*) FROM pg_constraint WHERE conrelid = 'shard_0006.t'::regclass AND contype = 'c'), (SELECT attnotnull FROM pg_attribute WHERE attrelid = 'shard_0006.t'::regclass AND attname = 'm'), to_regclass('shard_0006.s')")" = \
	"0|f|" "what the move did not carry to b"
# from shardid 1.2
during "from 1.2, a table made" "CREATE TABLE shard_0007.late (id int); INSERT INTO shard_0007.late VALUES (1)" "$c" 7
expect "$status" = 1 "from 1.2: exit status of the move"
echo "$out" | grep -qF 'shardid-move: error: the tables of schema "shard_0007" on the --from server are no longer those of the copy on the --to server (new: late): a table, a column or a partition was added' ||
	fail "from 1.2: the refusal: $out"
expect "$(on "$c" -c "SELECT shardid.shard_schema(7), (SELECT count(*) FROM shard_0007.late)")|$(on "$b" -c "SELECT shardid.shard_schema(7)")" = "shard_0007|1|" \
	"from 1.2: shard 7 registered on c only"
finish
