#!/usr/bin/env bash
# test/cluster/review_move_guc.sh: a setting an owner's code changes while
# shardid-move writes her rows offline does not outlive her write.
#
# The rows of each table are written by a SECURITY DEFINER function owned by
# the table's owner, whose SET clauses restore search_path and row_security
# when it returns, but PostgreSQL keeps a plain SET (set_config(..., false))
# made inside it: "an ordinary SET command (without LOCAL) overrides the SET
# clause ... the effects of such a command will persist after function exit".
# mallory's CHECK sets search_path to 'mallory, pg_catalog' in the move's
# superuser session on the --to server; the move's next statement in that
# session, the check before the COMMIT, joins pg_trigger's deferrable
# triggers (she has one, never fired, on a table of hers) to pg_class on
# "c.oid = t.tgrelid": her operator mallory.=(oid, oid), which says false,
# ran as the superuser, made her one, and hid her trigger from the check
# (shardid-move at cd63044 exits 0 with mallory superuser on the --to server).
#   offline a -> b: the check sees her trigger (which blocks any offline move
#   into that server, even never fired) and the move fails, undone;
#   mallory's code never ran as a superuser.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 190 2 || exit 1

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
-- her operator, found before pg_catalog's where the search_path says so
CREATE FUNCTION mallory.oideq(oid, oid) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM mallory.strike(); RETURN false; END $$;
CREATE OPERATOR mallory.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = mallory.oideq);
-- what her CHECK calls: a plain SET of the session's search_path
CREATE FUNCTION mallory.leak(integer) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN PERFORM pg_catalog.set_config('search_path', 'mallory, pg_catalog', false); RETURN true; END $$;
-- a deferrable trigger (never fired) for the check's join to look at
CREATE TABLE mallory.q (n integer);
CREATE FUNCTION mallory.q_noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER q_noop AFTER INSERT ON mallory.q DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION mallory.q_noop();
SQL
done

events_shard "$a" 10 mallory || exit 1
as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE TABLE shard_0005.t_leak (id bigint PRIMARY KEY, n integer CHECK (mallory.leak(n)));
INSERT INTO shard_0005.t_leak SELECT g, g FROM generate_series(1, 10) g;
SQL
# test of the test: once the setting is made, the superuser's join runs her operator
mallory_strikes "a superuser's join after mallory.leak() runs her operator" "$a" \
	-c "SELECT mallory.leak(1); SELECT count(*) FROM pg_class c JOIN pg_namespace n ON c.relnamespace = n.oid" || exit 1
mallory_mark "$a" "$b"

out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --yes 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 1 "offline move with her deferrable trigger on the target: exit status"
want='shardid-move: error: could not commit the rows of shard 5 on the --to server: deferrable constraint trigger q_noop on table mallory.q of role mallory, which the commit would run as a superuser'
echo "$out" | grep -qxF -- "$want" || fail "her trigger seen by the check: wanted \"$want\""
expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "target schema left by the failed move"
no_superuser_code "offline move with her search_path" "$a" "$b"
grep -h 'mallory.strike() as superuser' "$SHARDID_TMP"/s0.log "$SHARDID_TMP"/s1.log | sed 's/^/  log: /'
finish
