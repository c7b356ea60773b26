#!/usr/bin/env bash
# test/cluster/move_ddl.sh: a table made in the shard's schema on the
# --from server while the shard moves.
#
# The freeze refuses writes to the tables of the schema (a statement
# trigger on each), not DDL: a migration that adds a table to the shard
# during a move makes a table without the freeze, whose rows the copy does
# not hold.  Before 1.3's cutover compared the tables of the schema with
# those of the copy, the move cut over without it: the table and the rows
# written into it stayed behind on the --from server (gone with
# --drop-source), and the shard on the --to server lacked a table.  Now,
# offline (paused after the verification) and online (paused before the
# subscription, and in the catch-up), and a column added offline, the
# move ends undone naming the table, the shard
# stays on the --from server with every row, and the next move carries the
# new table.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 430 2 "${LOGICAL[@]}" || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
CREATE TABLE shard_0006.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(6, 1), n int);
SELECT shardid.register_shard(6, 'shard_0006');
INSERT INTO shard_0006.t (n) SELECT g FROM generate_series(1, 100) g;
SQL

late_table() {	# late_table LABEL PAUSE_POINT ERROR [--online]: a table made while the move pauses there
	local label=$1 at=$2 table=late_$2 error=$3 out status
	table=${table//-/_}
	error=${error//TABLE/$table}
	shift 3
	move_paused "$label" "$at" "$SHARDID_TMP/move.log" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" "$@"
	on "$a" >/dev/null <<SQL || fail "$label: the migration on a"
CREATE TABLE shard_0006.$table (id bigint PRIMARY KEY DEFAULT shardid.next_id(6, 1), n int);
INSERT INTO shard_0006.$table (n) SELECT g FROM generate_series(1, 5) g;
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
	expect "$(on "$a" -c "SELECT count(*) FROM shard_0006.$table")" = 5 "$label: the new table's rows on a"
	expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0006'")" = 0 "$label: the copy on b"
	expect "$(on "$a" -c "INSERT INTO shard_0006.t (n) VALUES (0) RETURNING 'writable'")" = writable "$label: shard 6 writable on a"
}
changed='the tables of schema "shard_0006" on the --from server are no longer those of the copy on the --to server (new: TABLE): a table, a column or a partition was added, dropped or renamed after the copy began, whose rows, columns or legacy boundary (shardid.legacy_ids) the move would not carry; move the shard again'
late_table "offline" verify "$changed"
# online, before the subscription: the publication (of the schema's
# tables) has the new table, the copy does not
late_table "online, before the subscription" subscribe \
	'could not subscribe the --to server to the --from server: relation "shard_0006.TABLE" does not exist' --online
# online, once the initial copy is done
late_table "online, in the catch-up" catch-up "$changed" --online

# a column added on a while the move pauses after its verification: the
# copy lacks it (the move used to cut over without it, and inserts that
# name it failed on b)
move_paused "a column" verify "$SHARDID_TMP/move.log" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")"
on "$a" -c "ALTER TABLE shard_0006.t ADD COLUMN note text NOT NULL DEFAULT 'x'" >/dev/null || fail "a column: the migration on a"
move_go
status=$?
out=$(cat "$SHARDID_TMP/move.log")
echo "$out" | grep "error" | sed 's/^/  | /'
expect "$status" = 1 "a column: exit status of the move"
echo "$out" | grep -qF 'on the --to server (other columns: t): a table, a column or a partition was added' || fail "a column: the refusal: $out"
expect "$(on "$a" -c "SELECT shardid.shard_schema(6)")|$(on "$b" -c "SELECT shardid.shard_schema(6)")" = "shard_0006|" \
	"a column: shard 6 registered on a only"

# the next move carries the tables and the column
"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" >/dev/null 2>&1 || fail "the move after the migrations"
expect "$(on "$b" -c "SELECT (SELECT count(*) FROM shard_0006.t), (SELECT count(*) FROM shard_0006.late_verify), (SELECT count(*) FROM shard_0006.late_subscribe), (SELECT count(*) FROM shard_0006.late_catch_up)")" = "103|5|5|5" \
	"rows on b after the move"
expect "$(on "$b" -c "SELECT count(*) FROM shard_0006.t WHERE note = 'x'")" = 103 "the column on b after the move"
finish
