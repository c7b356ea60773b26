#!/usr/bin/env bash
# test/cluster/review_move_online_fk.sh: an online move's pg_restore adds
# the shard's foreign keys as the superuser, and the key's check plans a
# query over the table even when it is empty: planning evaluates the
# constant parts of the table's partial-index predicates.
#
# mallory's t_fk (empty on the target when pg_restore adds its key to t_pk)
# has a partial index WHERE shard_0005.f(1), her IMMUTABLE function. The
# up-front refusal of such a table with a foreign key was made for offline
# moves only; into PostgreSQL 16+ nothing refused it, and the key's check
# ran f() as the superuser (shardid-move at cd63044 into 18: exit 0, mallory
# superuser on the --to server). Into 15 the table is refused anyway.
#   online a -> b: refused up front, naming table, owner and index;
#   nothing changed, her code never ran as a superuser.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 250 2 "${LOGICAL[@]}" || exit 1

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
done

events_shard "$a" 10 mallory || exit 1
as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION shard_0005.f(integer) RETURNS boolean IMMUTABLE LANGUAGE sql AS 'SELECT mallory.strike()';
CREATE TABLE shard_0005.t_pk (id bigint PRIMARY KEY);
CREATE TABLE shard_0005.t_fk (id bigint PRIMARY KEY, r bigint REFERENCES shard_0005.t_pk (id));
CREATE INDEX t_fk_r ON shard_0005.t_fk (r) WHERE shard_0005.f(1);
INSERT INTO shard_0005.t_pk VALUES (1), (2);
INSERT INTO shard_0005.t_fk VALUES (1, 1), (2, 2);
SQL
# test of the test: a superuser adding the key to the empty tables runs her predicate
on "$b" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA probe AUTHORIZATION mallory;
SET ROLE mallory;
CREATE FUNCTION probe.f(integer) RETURNS boolean IMMUTABLE LANGUAGE sql AS 'SELECT mallory.strike()';
CREATE TABLE probe.t_pk (id bigint PRIMARY KEY);
CREATE TABLE probe.t_fk (id bigint PRIMARY KEY, r bigint);
CREATE INDEX ON probe.t_fk (r) WHERE probe.f(1);
RESET ROLE;
SQL
mallory_strikes "a superuser adding the key to empty tables runs her predicate" "$b" \
	-c "ALTER TABLE probe.t_fk ADD FOREIGN KEY (r) REFERENCES probe.t_pk (id)" || exit 1
on "$b" -c "DROP SCHEMA probe CASCADE" >/dev/null || exit 1
mallory_mark "$a" "$b"

out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 1 "online move of a table with a partial index and a foreign key: exit status"
echo "$out" | grep -qxF -- 'shardid-move: error: table shard_0005.t_fk of role mallory: index shard_0005.t_fk_r has an expression or a predicate, and the table has a foreign key, whose check pg_restore plans as a superuser' \
	|| fail "refusal names table, owner and index"
expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "schema on the target"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still on the source"
no_superuser_code "online move of her key" "$a" "$b"
grep -h 'mallory.strike() as superuser' "$SHARDID_TMP"/s0.log "$SHARDID_TMP"/s1.log | sed 's/^/  log: /'
finish
