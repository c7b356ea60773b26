#!/usr/bin/env bash
# test/cluster/review_verify_multiset.sh: the verification compares each
# table's rows as a multiset, per table (a regression test: shardid-move at
# 6629de7 passed it).
#
# Offline moves, paused before the verification ("verify"), the copy
# changed on the --to server keeping every table's number of rows:
#   1. table d (no key) holds x twice and y once; the copy gets x once and y
#      twice (each copy of a duplicate counts);
#   2. tables p1 and p2 (the same columns) swap a row each (a row is
#      counted in its own table): the move fails naming p1;
#   3. a row of d whose text has the separators of a row's text ('a,b' and
#      NULL) becomes ('a', 'b').
# Each move fails naming the table, and is undone.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 672 2 || exit 1
marker=$SHARDID_TMP/paused
for p in $a $b; do on "$p" -c "CREATE EXTENSION shardid" >/dev/null || exit 1; done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
SELECT shardid.register_shard(6, 'shard_0006');
CREATE TABLE shard_0006.d (a text, b text);
INSERT INTO shard_0006.d VALUES ('x', 'x'), ('x', 'x'), ('y', 'y'), ('a,b', NULL);
CREATE TABLE shard_0006.p1 (id int, v text);
CREATE TABLE shard_0006.p2 (id int, v text);
INSERT INTO shard_0006.p1 VALUES (1, 'one'), (2, 'two');
INSERT INTO shard_0006.p2 VALUES (3, 'three'), (4, 'four');
SQL
changed() {	# changed LABEL TABLE ROWS SQL: the offline move, SQL on the --to server before the verification
	local label=$1 table=$2 rows=$3 sql=$4 log=$SHARDID_TMP/move.log status
	move_paused "$label" verify "$log" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" &&
		{ PGOPTIONS="-c session_replication_role=replica" on "$b" -c "$sql" >/dev/null || fail "$label: the change (test of the test)"; }
	move_go
	status=$?
	move_differs "$label" "$a" "$b" "$log" "$status" 6 "$table" "$rows"
}
changed "a duplicate row changed into another" d 4 "UPDATE shard_0006.d SET a = 'y', b = 'y' WHERE ctid = (SELECT min(ctid) FROM shard_0006.d WHERE a = 'x')"
changed "rows swapped between two tables" p1 2 "DELETE FROM shard_0006.p1 WHERE id = 2; DELETE FROM shard_0006.p2 WHERE id = 3;
INSERT INTO shard_0006.p1 VALUES (3, 'three'); INSERT INTO shard_0006.p2 VALUES (2, 'two')"
changed "a row's separators moved between its columns" d 4 "UPDATE shard_0006.d SET a = 'a', b = 'b' WHERE a = 'a,b'"
finish
