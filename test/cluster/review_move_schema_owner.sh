#!/usr/bin/env bash
# test/cluster/review_move_schema_owner.sh: a role that owns the shard's
# schema but not all of its tables does not get her code run as the
# superuser by the offline copy.
#
# The owner of a schema may drop any object in it. mallory owns schema
# shard_0005 (and so the copy on the --to server, which the move creates
# AUTHORIZATION the source schema's owner); a superuser owns its table
# events. Her table a_first is written first (by her); its CHECK drops the
# just-restored events on the target and makes her own events, with a
# trigger. The superuser's rows of events are then written by a SECURITY
# DEFINER function of the superuser, into her table: her trigger ran as the
# superuser (shardid-move at cd63044: mallory superuser on the --to server).
#   offline a -> b: the move sees the swap before the superuser's rows are
#   written, fails and is undone; her code never runs as a superuser.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 290 2 || exit 1

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION mallory.trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM mallory.strike(); RETURN NEW; END $$;
-- on the target (where events was restored by the superuser), once
CREATE FUNCTION mallory.swap(integer) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT r.rolname FROM pg_catalog.pg_class c JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) c.relowner
        WHERE c.oid OPERATOR(pg_catalog.=) 'shard_0005.events'::pg_catalog.regclass) OPERATOR(pg_catalog.<>) 'mallory' THEN
        DROP TABLE shard_0005.events;
        CREATE TABLE shard_0005.events (id bigint, n integer);
        CREATE TRIGGER t BEFORE INSERT ON shard_0005.events FOR EACH ROW EXECUTE FUNCTION mallory.trg();
    END IF;
    RETURN true;
END $$;
SQL
done

events_shard "$a" 10 || exit 1
on "$a" -c "ALTER SCHEMA shard_0005 OWNER TO mallory" || exit 1
as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE OR REPLACE FUNCTION mallory.swap(integer) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE TABLE shard_0005.a_first (id bigint PRIMARY KEY, n integer CHECK (mallory.swap(n)));
INSERT INTO shard_0005.a_first VALUES (1, 1);
SQL
expect "$(on "$a" -c "SELECT r.rolsuper FROM pg_class c JOIN pg_roles r ON r.oid = c.relowner WHERE c.oid = 'shard_0005.events'::regclass")" = t "events is a superuser's table on the source"
mallory_mark "$a" "$b"

out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --yes 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 1 "offline move with the superuser's table swapped on the target: exit status"
want='shardid-move: error: could not write the rows of table "shard_0005"."events": it is no longer the table pg_restore made on the --to server (dropped and made again while an owner'"'"'s code ran)'
echo "$out" | grep -qxF -- "$want" || fail "swap seen: wanted \"$want\""
expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "target schema left by the failed move"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still on the source"
no_superuser_code "offline move with her swap" "$a" "$b"
grep -h 'mallory.strike() as superuser' "$SHARDID_TMP"/s0.log "$SHARDID_TMP"/s1.log | sed 's/^/  log: /'
finish
