#!/usr/bin/env bash
# test/cluster/review_move_fk_outside.sh: a shard's table whose foreign key
# references a table of another role outside the shard (a shared lookup
# table, say) moves without that role's code running as the superuser.
#
# The shard's table events_l, a superuser's, references mallory.lookup, her
# table on both servers, which has a partial index WHERE mallory.f(1), her
# IMMUTABLE function. pg_restore adds the key as the superuser, and its
# check plans a query over mallory.lookup, which evaluates the predicate.
# The refusal of a table with an index expression or predicate and a
# foreign key looked only at the shard's tables of roles that are no
# superuser (shardid-move at cd63044: exit 0, mallory superuser on the --to
# server).
#   offline a -> b: refused up front, naming the key, the table and its
#   owner (her table's indexes on the --to server are hers to change, so
#   any such key is refused); nothing changed, her code never ran as a
#   superuser.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 270 2 || exit 1

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION mallory.f(integer) RETURNS boolean IMMUTABLE LANGUAGE sql AS 'SELECT mallory.strike()';
CREATE TABLE mallory.lookup (id bigint PRIMARY KEY, v integer);
INSERT INTO mallory.lookup VALUES (1, 1), (2, 2);
SQL
done

events_shard "$a" 10 || exit 1
on "$a" >/dev/null <<'SQL' || exit 1
CREATE TABLE shard_0005.events_l (id bigint PRIMARY KEY, l bigint REFERENCES mallory.lookup (id));
INSERT INTO shard_0005.events_l VALUES (1, 1), (2, 2);
SQL
# her predicate, made after the superuser's key
for p in $a $b; do
	"$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$(conn "$p") user=mallory" \
		-c "CREATE INDEX lookup_v ON mallory.lookup (v) WHERE mallory.f(1)" || exit 1
done
# test of the test: a superuser adding the key runs her predicate
mallory_strikes "a superuser adding the key runs her predicate" "$a" -c "BEGIN; ALTER TABLE shard_0005.events_l DROP CONSTRAINT events_l_l_fkey;
	ALTER TABLE shard_0005.events_l ADD FOREIGN KEY (l) REFERENCES mallory.lookup (id); ROLLBACK" || exit 1
mallory_mark "$a" "$b"

out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --yes 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 1 "offline move of a key to her table: exit status"
echo "$out" | grep -qxF -- "shardid-move: error: table shard_0005.events_l: foreign key events_l_l_fkey references table mallory.lookup of role mallory outside the schema, which pg_restore's check of the key plans as a superuser" \
	|| fail "refusal names key, table and owner"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still on the source"
no_superuser_code "offline move of a key to her table" "$a" "$b"
grep -h 'mallory.strike() as superuser' "$SHARDID_TMP"/s0.log "$SHARDID_TMP"/s1.log | sed 's/^/  log: /'
finish
