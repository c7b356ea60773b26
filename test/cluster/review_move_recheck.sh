#!/usr/bin/env bash
# test/cluster/review_move_recheck.sh: what an owner's code leaves for the
# COMMIT of the offline move's rows does not run as the superuser.
#
# The check before that COMMIT looks for deferrable constraint triggers of
# roles that are no superuser, but leaves out internal ones. A DEFERRABLE
# EXCLUDE (or UNIQUE) constraint is such an internal trigger: an INSERT that
# may conflict queues a recheck, which the COMMIT runs, evaluating the
# index's expressions, as the role that commits (PostgreSQL before 18).
# mallory's CHECK inserts two rows into her table mallory.q on the --to
# server, whose deferred EXCLUDE constraint is on her expression
# mallory.ix(n); at the COMMIT, as the superuser, mallory.ix() made her
# superuser and returned distinct values, and the move committed
# (shardid-move at cd63044 on PostgreSQL 15 exits 0 with mallory superuser
# on the --to server). PostgreSQL 18 fires the recheck as mallory.
#   offline a -> b: the check names her constraint, nothing is committed,
#   mallory's code never runs as a superuser.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 230 2 || exit 1

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
-- as a superuser: strikes, and says values that do not conflict
CREATE FUNCTION mallory.ix(integer) RETURNS integer IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) current_user) THEN
        PERFORM mallory.strike();
        RETURN pg_catalog.nextval('mallory.hits')::integer;
    END IF;
    RETURN $1;
END $$;
CREATE TABLE mallory.q (n integer, EXCLUDE USING btree ((mallory.ix(n)) WITH OPERATOR(pg_catalog.=))
    DEFERRABLE INITIALLY DEFERRED);
CREATE FUNCTION mallory.queue(integer) RETURNS boolean LANGUAGE sql AS
    'INSERT INTO mallory.q VALUES (1), (1); SELECT true';
SQL
done

events_shard "$a" 10 mallory || exit 1
# on the source, her function queues nothing (there her own COMMIT would
# run the recheck as herself, find the conflict and fail her INSERT)
as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE OR REPLACE FUNCTION mallory.queue(integer) RETURNS boolean LANGUAGE sql AS 'SELECT true';
CREATE TABLE shard_0005.t_aaa (id bigint PRIMARY KEY, n integer CHECK (mallory.queue(n)));
INSERT INTO shard_0005.t_aaa VALUES (1, 1);
SQL
# test of the test: a superuser's transaction that queues the recheck runs her code
mallory_strikes "the COMMIT of a superuser's conflicting INSERT runs mallory.ix()" "$b" -c "INSERT INTO mallory.q VALUES (7), (7)" || exit 1
on "$b" -c "TRUNCATE mallory.q" || exit 1
mallory_mark "$a" "$b"

out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --yes 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 1 "offline move with her deferred recheck queued: exit status"
want='shardid-move: error: could not commit the rows of shard 5 on the --to server: deferrable constraint q_ix_excl on table mallory.q of role mallory, which the commit would run as a superuser'
echo "$out" | grep -qxF -- "$want" || fail "deferred recheck: wanted \"$want\""
expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "target schema left by the failed move"
expect "$(on "$b" -c "SELECT count(*) FROM mallory.q")" = 0 "rows her code wrote on the target, committed"
no_superuser_code "offline move with her deferred recheck" "$a" "$b"
grep -h 'mallory.strike() as superuser' "$SHARDID_TMP"/s0.log "$SHARDID_TMP"/s1.log | sed 's/^/  log: /'
finish
