#!/usr/bin/env bash
# test/cluster/review_legacy_edges.sh: the legacy boundaries a move carries,
# at the edges.
#
# Shard 4's schema Sh"d.4 holds two converted tables, "Or""ders.X" (its id
# column renamed to "New ID" after the conversion) and two, and a table
# plain that was never converted.
#   - A --to server whose shardid is 1.2 (no legacy_ids) is refused before
#     anything changes, naming the converted tables (shardid-move 1.3
#     copied the shard and refused it before the hand-over, undone); the
#     shard stays on the --from server, writable.
#   - A --to server that keeps rows of dropped converted tables (a row of
#     shardid.legacy_ids outlives its table until a superuser deletes it)
#     whose OIDs the restore then hands to the moved tables: after the move
#     exactly the two converted tables have a row there, with the
#     boundaries, id columns and trust of the --from server.  At 397c869
#     the stale row stayed on plain, a table never converted (its OID lies
#     in the stale range, checked), so convert_table() refused it there.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 390 3 || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null || exit 1
done
on "$c" -c "CREATE EXTENSION shardid VERSION '1.2'" >/dev/null || exit 1
S='Sh"d.4'
QS='"Sh""d.4"'
on "$a" >/dev/null <<SQL || exit 1
CREATE SCHEMA $QS;
CREATE TABLE $QS."Or""ders.X" (id bigserial PRIMARY KEY, n int NOT NULL);
CREATE TABLE $QS.two (id serial PRIMARY KEY, n int NOT NULL);
CREATE TABLE $QS.plain (id bigint PRIMARY KEY, n int NOT NULL);
INSERT INTO $QS."Or""ders.X" (n) SELECT g FROM generate_series(1, 3000) g;
INSERT INTO $QS.two (n) SELECT g FROM generate_series(1, 500) g;
INSERT INTO $QS.plain VALUES (1, 1);
SELECT shardid.register_shard(4, '$S');
SELECT shardid.convert_table('$QS."Or""ders.X"', 4);
SELECT shardid.convert_table('$QS.two', 4);
ALTER TABLE $QS."Or""ders.X" RENAME COLUMN id TO "New ID";
INSERT INTO $QS."Or""ders.X" (n) VALUES (1);
SQL
# the boundaries of the schema's tables on a server: relname, id_column, shard, below, trusted
rows() {
	on "$1" -c "SELECT string_agg(format('%s/%s/%s/%s/%s', c.relname, l.id_column, l.shard, l.legacy_below, l.trusted), ' ' ORDER BY c.relname)
	            FROM shardid.legacy_ids l JOIN pg_class c ON c.oid = l.tab JOIN pg_namespace n ON n.oid = c.relnamespace
	            WHERE n.nspname = '${S//\'/\'\'}'"
}
want='Or"ders.X/id/4/3001/t two/id/4/501/t'
expect "$(rows "$a")" = "$want" "the boundaries on a"

# a --to server on shardid 1.2: refused before anything changes
out=$("$move" --shard 4 --from "$(conn "$a")" --to "$(conn "$c")" 2>&1)
expect "$?" = 1 "exit status of a move to a server on shardid 1.2"
echo "$out" | grep -qxF "shardid-move: error: schema \"$S\" holds tables converted by shardid.convert_table() ($QS.\"Or\"\"ders.X\", $QS.two), whose legacy boundaries the --to server's shardid 1.2 cannot keep (it needs 1.3 or later): run ALTER EXTENSION shardid UPDATE there first" ||
	fail "no refusal of the 1.2 server: $out"
echo "$out" | grep -qxF "shardid-move: error: shard 4 cannot move as it is (see above); nothing was changed" ||
	fail "no word that nothing changed: $out"
expect "$(on "$c" -c "SELECT count(*) FROM shardid.move_journal")" = 0 "journal rows of the refused move on the 1.2 server"
expect "$(on "$c" -c "SELECT count(*) FROM pg_namespace WHERE nspname = '${S//\'/\'\'}'")" = 0 "the copy on the 1.2 server"
expect "$(on "$a" -c "SELECT shardid.shard_schema(4)")" = "$S" "shard 4 still on a"
on "$a" -c "BEGIN; INSERT INTO $QS.two (n) VALUES (0); ROLLBACK" >/dev/null 2>&1 || fail "shard 4 does not take writes on a"
expect "$(on "$a" -c "SELECT count(*) FROM shardid.move_journal WHERE phase NOT IN ('done', 'moved-away', 'dropped', 'aborted')")" = 0 \
	"unfinished journal rows on a"

# stale rows on b for the OIDs after the current one (tables dropped long
# ago, OIDs wrapped around): untrusted, far below any id
first=$(on "$b" -c "CREATE TABLE probe (); SELECT 'probe'::regclass::oid; DROP TABLE probe" | tail -1)
on "$b" >/dev/null <<SQL || exit 1
INSERT INTO shardid.legacy_ids (tab, id_column, shard, legacy_below, converted_by)
SELECT o::oid::regclass, 'gone', 0, 2, 'postgres' FROM generate_series($first + 1, $first + 3000) o;
SQL
out=$("$move" --shard 4 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1) || fail "move a -> b: $out"
plain=$(on "$b" -c "SELECT '$QS.plain'::regclass::oid")
expect_ge "$plain" $((first + 1)) "OID of plain on b (in the stale range)"
expect_le "$plain" $((first + 3000)) "OID of plain on b (in the stale range)"
expect "$(rows "$b")" = "$want" "the boundaries on b after the move"
expect "$(on "$b" -c "SELECT shardid.id_is_legacy(3000), shardid.id_is_legacy(3001), shardid.id_schema(3000) IS NULL")" = "t|f|t" \
	"legacy ids on b"
expect "$(on "$b" -c "SELECT count(*) FROM shardid.doctor() WHERE object LIKE '%Or%ders%' OR object LIKE '%two%' OR object LIKE '%plain%'")" = 0 \
	"the doctor's rows about the moved tables on b"
expect "$(rows "$a")" = "$want" "the boundaries on a until --drop-source"
"$move" --shard 4 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes >/dev/null 2>&1 || fail "--drop-source"
expect "$(on "$a" -c "SELECT count(*) FROM shardid.legacy_ids")" = 0 "rows of legacy_ids on a after --drop-source"
finish
