#!/usr/bin/env bash
# test/cluster/review_move_partkey.sh: an expression in the partition key of
# a table of a role that is no superuser is refused by shardid-move, offline
# and online, before anything opens the table.
#
# PostgreSQL folds the constant parts of a partition key's expressions when
# it loads the table's description (RelationBuildPartitionKey()), as
# whoever opens the table: a superuser's LOCK TABLE or pg_dump runs them.
# mallory, with CREATE on schema shard_0005, partitions her table p by
# (a + mallory.f(0)), f() IMMUTABLE.  shardid-move at cfeee6a moved it
# offline with exit status 0 and her f() had run as the superuser (pg_dump
# and the move's LOCK of the tables opened it); the refusal of partition key
# expressions covered only online moves into PostgreSQL 15.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 370 2 "${LOGICAL[@]}" || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	# her payload here counts its runs as a superuser and nothing more
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION mallory.f(integer) RETURNS integer IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) current_user) THEN
        PERFORM pg_catalog.nextval('mallory.hits');
    END IF;
    RETURN $1;
END $$;
SQL
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA app_template;
CREATE TABLE app_template.events (id bigint PRIMARY KEY, n int NOT NULL);
SET client_min_messages = warning;
CALL shardid.add_shards('app_template', '{5}', use_sequence => true);
GRANT USAGE, CREATE ON SCHEMA shard_0005 TO mallory;
SET ROLE mallory;
CREATE TABLE shard_0005.p (id bigint NOT NULL, a integer NOT NULL) PARTITION BY RANGE ((a + mallory.f(0)));
CREATE TABLE shard_0005.p1 PARTITION OF shard_0005.p FOR VALUES FROM (0) TO (1000);
INSERT INTO shard_0005.p SELECT g, g FROM generate_series(1, 20) g;
SQL
# the payload is live: a superuser's session that routes a row runs f()
before=$(mallory_hits "$a")
on "$a" -c "BEGIN" -c "INSERT INTO shard_0005.p VALUES (100, 100)" -c "ROLLBACK" >/dev/null || fail "INSERT INTO shard_0005.p"
expect "$(mallory_hits "$a")" != "$before" "a superuser's INSERT runs mallory's partition key (test of the test)"
mallory_mark "$a" "$b"

refusal="shardid-move: error: table shard_0005.p of role mallory has an expression in its partition key, whose constant parts PostgreSQL evaluates as whoever uses the key (adding a partition, routing rows, pruning): pg_restore would run them as a superuser"
for mode in offline online; do
	opt=""
	[ "$mode" = online ] && opt=--online
	out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" $opt --yes 2>&1)
	expect "$?" = 1 "$mode move of a table with her partition key expression: exit status"
	echo "$out" | grep -qxF "$refusal" || fail "$mode move: the refusal names the table and its owner: $out"
	expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "$mode move: shard 5 still on the --from server"
	no_superuser_code "$mode move: her partition key" "$a" "$b"
done
finish
