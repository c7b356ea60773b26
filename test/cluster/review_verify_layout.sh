#!/usr/bin/env bash
# test/cluster/review_verify_layout.sh: an online move verifies the text of
# the rows it hashed before the freeze even when DDL that writes no row
# version changes that text after those hashes.
#
# The freeze's part of the hashes reads only the row versions written or
# deleted since the hashes before it; the text of a row is ROW(its columns
# by name).  mallory (no superuser) owns table shard_0006.s (id, a text,
# b text) and mallory.one on both servers; shard_0006.r holds a regclass
# column naming mallory.one.  Each move pauses once the rows are hashed
# before the freeze ("hashed"), and she changes, on one server, what rows
# read without touching one:
#   1. on the --to server she swaps the names of columns a and b (the
#      columns' names and types, all the verification and the cutover
#      compared, stay the same);
#   2. the same on the --from server;
#   3. on the --to server she drops column b and adds a column b again
#      with a constant DEFAULT (no rewrite: every row now reads it);
#   4. on the --to server she renames mallory.one: the regclass values of
#      r read otherwise;
#   5. (PostgreSQL 18+) on the --to server she changes the expression of a
#      virtual generated column of table v (ALTER TABLE ... SET EXPRESSION,
#      which rewrites nothing);
#   6. on the --to server a superuser (a migration) drops attribute b of
#      composite type public.pair, which a column of table c holds, and adds
#      an attribute b again: its values read NULL there, and the type has
#      the same attributes in the same order as on the --from server (all
#      the verification compared of it).
# (Into PostgreSQL 15 cases 1 and 4 only, a superuser changing the copy.)
# shardid-move at 6629de7 ended each of these moves verified, exit status 0,
# the shard moved with values that differ from the --from server's.  Now a
# table whose columns (by number; the expressions of its virtual generated
# columns) or whose composite types' attributes (by number) changed on a
# server since the hashes before the freeze is hashed in full in the
# freeze, as is every table with a column of a type whose text names a
# catalog object (reg*, aclitem): each move fails naming the table, and is
# undone; the last move, with nothing changed, succeeds.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 660 2 "${LOGICAL[@]}" || exit 1
marker=$SHARDID_TMP/paused
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" -c "CREATE TABLE mallory.one (x int)" -c "GRANT USAGE ON SCHEMA mallory TO PUBLIC" \
		>/dev/null && on "$p" -c "CREATE TYPE public.pair AS (a text, b text)" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006 AUTHORIZATION mallory;
SELECT shardid.register_shard(6, 'shard_0006');
SET ROLE mallory;
CREATE TABLE shard_0006.s (id bigint PRIMARY KEY, a text, b text);
INSERT INTO shard_0006.s SELECT g, 'a' || g, 'b' || g FROM generate_series(1, 20) g;
CREATE TABLE shard_0006.r (id bigint PRIMARY KEY, rel regclass);
INSERT INTO shard_0006.r SELECT g, 'mallory.one' FROM generate_series(1, 5) g;
CREATE TABLE shard_0006.c (id bigint PRIMARY KEY, p public.pair);
INSERT INTO shard_0006.c SELECT g, ROW('a' || g, 'b' || g)::public.pair FROM generate_series(1, 3) g;
SQL
v18=$(on "$a" -c "SELECT current_setting('server_version_num')::int >= 180000")
# into PostgreSQL 15 the move's superuser holds the copy's tables until the
# verification, so a superuser (a migration) changes them there; its online
# moves take 20 s and more each: cases 1 and 4 only
to_by=as_mallory all=t
[ "$(on "$b" -c "SELECT current_setting('server_version_num')::int >= 160000")" = t ] || to_by=on all=f
if [ "$v18" = t ]; then
	as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE TABLE shard_0006.v (id bigint PRIMARY KEY, x int, y text GENERATED ALWAYS AS (x::text || 'a') VIRTUAL);
INSERT INTO shard_0006.v (id, x) SELECT g, g FROM generate_series(1, 7) g;
SQL
fi
changed() {	# changed LABEL PORT TABLE ROWS SQL: the move, her SQL on server PORT once the rows are hashed (${by:-as_mallory})
	local label=$1 port=$2 table=$3 rows=$4 sql=$5 log=$SHARDID_TMP/move.log status
	move_paused "$label" hashed "$log" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" --online &&
		{ "${by:-as_mallory}" "$port" -c "$sql" >/dev/null || fail "$label: the DDL (test of the test)"; }
	move_go
	status=$?
	move_differs "$label" "$a" "$b" "$log" "$status" 6 "$table" "$rows"
}
swap="ALTER TABLE shard_0006.s RENAME a TO x; ALTER TABLE shard_0006.s RENAME b TO a; ALTER TABLE shard_0006.s RENAME x TO b"
by=$to_by changed "columns swapped on the --to server" "$b" s 20 "$swap"
if [ $all = t ]; then
	changed "columns swapped on the --from server" "$a" s 20 "$swap"
	expect "$(on "$a" -c "SELECT a FROM shard_0006.s WHERE id = 1")" = b1 "the columns swapped on the --from server (test of the test)"
	as_mallory "$a" -c "$swap" >/dev/null || fail "her columns back on the --from server"
	changed "a column dropped and added again on the --to server" "$b" s 20 \
		"ALTER TABLE shard_0006.s DROP COLUMN b; ALTER TABLE shard_0006.s ADD COLUMN b text DEFAULT 'x'"
fi
changed "the table a regclass names renamed on the --to server" "$b" r 5 "ALTER TABLE mallory.one RENAME TO two"
as_mallory "$b" -c "ALTER TABLE mallory.two RENAME TO one" >/dev/null || fail "her table's name back on the --to server"
if [ $all = t ]; then
	[ "$v18" = t ] && changed "a virtual generated column's expression changed on the --to server" "$b" v 7 \
		"ALTER TABLE shard_0006.v ALTER COLUMN y SET EXPRESSION AS (x::text || 'b')"
	by=on changed "a composite type's attribute dropped and added again on the --to server" "$b" c 3 \
		"ALTER TYPE public.pair DROP ATTRIBUTE b; ALTER TYPE public.pair ADD ATTRIBUTE b text"
	"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" --online >"$SHARDID_TMP/last.move" 2>&1 ||
		fail "the move with nothing changed: $(cat "$SHARDID_TMP/last.move")"
	expect "$(on "$b" -c "SELECT string_agg(rel::text, ',') FROM shard_0006.r")" = "mallory.one,mallory.one,mallory.one,mallory.one,mallory.one" \
		"the regclass values moved"
fi
no_superuser_code "the moves" "$a" "$b"
finish
