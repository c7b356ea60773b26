#!/usr/bin/env bash
# test/cluster/move_as_owner.sh: shardid-move writes rows as their table's
# owner, whatever the owner's code calls and by whatever path it is reached.
#
# mallory, an ordinary role with CREATE on schema shard_0005, reaches her
# mallory.strike() (which tries RESET ROLE and SET SESSION AUTHORIZATION
# DEFAULT, and when it runs as a superuser counts on mallory.hits and makes
# mallory superuser) by paths no pg_depend edge shows:
#   t_xml    a CHECK through ts_rewrite(), a built-in that runs SQL text (as
#            query_to_xml() does, which needs a server built with libxml);
#   t_comp   a composite type whose attribute is of a domain with a CHECK;
#   t_range  a range type whose subtype is that domain;
#   t_pred   a partial index whose predicate calls her function (planning
#            a query of the table runs it), on a table with an oid column,
#            which the move's check of large objects reads (as the
#            superuser on 1d5c0d1: her code ran as superuser).
# shardid-move 1.2 moved them with exit status 0 and she was superuser on the
# --to server.
#   1. offline a -> b: the move runs, the rows are there, written as mallory;
#   2. online b -> a: on PostgreSQL 15 (the apply runs as a superuser) every
#      such table is refused up front, naming table and owner; on 16+ the
#      subscription applies as the table's owner and the move runs;
#   3. offline, her code takes the names of the move's helper functions in
#      pg_temp (where shardid-move 1.3 made them: the move failed), and
#      empties pg_temp (DISCARD TEMP): the helpers live in a schema of the
#      move's own with a random name, and the move runs;
#   4. offline, her code queues a deferred trigger event for the COMMIT
#      (which PostgreSQL before 18 fires as the committing superuser): the
#      move fails, nothing committed.
# After each: mallory.hits unchanged, mallory no superuser on both servers.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 170 2 "${LOGICAL[@]}" || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" escape || exit 1
done

events_shard "$a" 50 mallory || exit 1
on "$a" >/dev/null <<'SQL' || exit 1
GRANT SELECT ON shard_0005.events TO mallory;
COMMENT ON TABLE shard_0005.events IS 'the events';
-- values whose text depends on settings, which differ between the servers
-- and an identity column GENERATED ALWAYS, whose values COPY keeps
CREATE TABLE shard_0005.vals (id bigint PRIMARY KEY, d date, f float8, i interval,
    k integer GENERATED ALWAYS AS IDENTITY (START 7));
INSERT INTO shard_0005.vals VALUES (1, '2026-03-04', 0.1::float8 + 0.2, '1 day 2 hours 3.5 seconds');
ALTER DATABASE app SET datestyle = 'SQL, DMY';
ALTER DATABASE app SET intervalstyle = 'sql_standard';
ALTER DATABASE app SET extra_float_digits = -3;
SQL
as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION shard_0005.f(integer) RETURNS boolean IMMUTABLE LANGUAGE sql AS 'SELECT mallory.strike()';
CREATE TABLE shard_0005.t_xml (id bigint PRIMARY KEY,
    n integer CHECK (pg_catalog.ts_rewrite('x'::pg_catalog.tsquery,
        'SELECT CASE WHEN mallory.strike() THEN ''x''::pg_catalog.tsquery END, ''y''::pg_catalog.tsquery') IS NOT NULL));
CREATE DOMAIN shard_0005.guarded AS integer CHECK (shard_0005.f(VALUE));
CREATE TYPE shard_0005.pair AS (v shard_0005.guarded);
CREATE TABLE shard_0005.t_comp (id bigint PRIMARY KEY, p shard_0005.pair);
CREATE TYPE shard_0005.grange AS RANGE (subtype = shard_0005.guarded);
CREATE TABLE shard_0005.t_range (id bigint PRIMARY KEY, r shard_0005.grange);
CREATE TABLE shard_0005.t_pred (id bigint PRIMARY KEY, n integer, doc oid);
CREATE INDEX ON shard_0005.t_pred (n) WHERE shard_0005.f(1);
INSERT INTO shard_0005.t_xml SELECT g, g FROM generate_series(1, 20) g;
INSERT INTO shard_0005.t_comp SELECT g, ('(' || g || ')')::shard_0005.pair FROM generate_series(1, 20) g;
INSERT INTO shard_0005.t_range SELECT g, shard_0005.grange(g, g + 1) FROM generate_series(1, 20) g;
INSERT INTO shard_0005.t_pred SELECT g, g FROM generate_series(1, 20) g;
SQL

# the payloads are live: a superuser's INSERT runs each of them
for ins in "t_xml VALUES (100, 1)" "t_comp VALUES (100, '(1)')" \
	"t_range VALUES (100, shard_0005.grange(1, 2))" "t_pred VALUES (100, 1)"; do
	mallory_strikes "a superuser's INSERT INTO $ins runs mallory's code" "$a" -c "BEGIN; INSERT INTO shard_0005.$ins; ROLLBACK" || exit 1
done
mallory_mark "$a" "$b"

# 1. offline: moves, written by mallory
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --move-and-drop-source --yes || fail "offline move of shard 5 failed"
expect "$(on "$b" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 registered on the target"
for t in t_xml t_comp t_range t_pred; do
	expect "$(as_mallory "$b" -c "SELECT count(*) FROM shard_0005.$t")" = 20 "rows of $t on the target"
done
expect "$(on "$b" -c "SELECT d = '2026-03-04' AND f = 0.1::float8 + 0.2 AND i = '1 day 2 hours 3.5 seconds' AND k = 7 FROM shard_0005.vals")" \
	= t "values copied whatever the servers' datestyle, intervalstyle and extra_float_digits, identity kept"
# pg_restore made the privileges and comments around the rows
expect "$(as_mallory "$b" -c "SELECT count(*) FROM shard_0005.events")" = 50 "rows of events on the target (granted)"
expect "$(on "$b" -c "SELECT obj_description('shard_0005.events'::regclass, 'pg_class')")" = "the events" "comment on the target"
expect "$(on "$b" -c "SELECT count(*) FROM pg_index WHERE indrelid = 'shard_0005.t_pred'::regclass")" = 2 "indexes of t_pred on the target"
expect "$(on "$b" -c "SELECT string_agg(p::text || ' ' || r::text, ',') FROM shard_0005.t_comp JOIN shard_0005.t_range USING (id) WHERE id = 3")" \
	= "(3) [3,4)" "composite and range values copied"
no_superuser_code "offline move" "$a" "$b"

# 2. online back
version=$(on "$a" -c "SHOW server_version_num")
out=$("$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --online --move-and-drop-source --yes 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
if [ "$version" -ge 160000 ]; then
	expect "$status" = 0 "online move into PostgreSQL 16+, which applies as the table owner: exit status"
	expect "$(as_mallory "$a" -c "SELECT count(*) FROM shard_0005.t_comp")" = 20 "rows of t_comp on the target"
	from=$a to=$b
else
	expect "$status" = 1 "online move into PostgreSQL 15, which applies as a superuser: exit status"
	why="the --to server runs PostgreSQL 15, whose subscriptions apply changes as a superuser, with no way to apply them as the table's owner"
	for want in \
		"shardid-move: error: table shard_0005.t_comp of role mallory carries a composite type of a role that is no superuser in a column's type, a domain in a column's type: $why" \
		"shardid-move: error: table shard_0005.t_pred of role mallory carries an index expression or predicate: $why" \
		"shardid-move: error: table shard_0005.t_range of role mallory carries a domain in a column's type: $why" \
		"shardid-move: error: table shard_0005.t_xml of role mallory carries a CHECK constraint: $why" \
		"shardid-move: error: shard 5 cannot move as it is (see above); nothing was changed"; do
		echo "$out" | grep -qxF -- "$want" || fail "refusal on 15: wanted \"$want\""
	done
	echo "$out" | grep -q 'table shard_0005.events' && fail "refusal names the superuser's table"
	from=$b to=$a
fi
no_superuser_code "online move" "$a" "$b"

# 3. her code takes the helper functions' names of 1.3 and empties pg_temp: the move runs
as_mallory "$from" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION shard_0005.squat(integer) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 0..20 LOOP
        BEGIN
            EXECUTE pg_catalog.format('CREATE FUNCTION pg_temp.shardid_move_write_%s() RETURNS bigint '
                'LANGUAGE sql AS %L', i, 'SELECT CASE WHEN mallory.strike() THEN 0::bigint END');
        EXCEPTION WHEN OTHERS THEN NULL;
        END;
    END LOOP;
    EXECUTE 'DISCARD TEMP';
    RETURN true;
END $$;
CREATE TABLE shard_0005.t_aaa (id bigint PRIMARY KEY, n integer CHECK (shard_0005.squat(n)));
INSERT INTO shard_0005.t_aaa VALUES (1, 1);
SQL
out=$("$move" --shard 5 --from "$(conn "$from")" --to "$(conn "$to")" --move-and-drop-source --yes 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 0 "offline move with the helpers' names of 1.3 taken and pg_temp emptied: exit status"
expect "$(as_mallory "$to" -c "SELECT count(*) FROM shard_0005.t_aaa")" = 1 "rows of t_aaa on the target"
expect "$(on "$to" -c "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shardid\_move\_%'")" = 0 "the move's schemas left on the target"
no_superuser_code "helpers' names taken" "$a" "$b"
t=$from; from=$to; to=$t
on "$from" -c "DROP TABLE shard_0005.t_aaa; DROP FUNCTION shard_0005.squat(integer)" || exit 1

# 4. her code queues a deferred trigger event for the COMMIT: nothing committed
for p in $a $b; do
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
CREATE TABLE mallory.q (n integer);
CREATE FUNCTION mallory.q_strike() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM mallory.strike(); RETURN NULL; END $$;
CREATE CONSTRAINT TRIGGER q_strike AFTER INSERT ON mallory.q DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION mallory.q_strike();
SQL
done
as_mallory "$from" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION shard_0005.defer(integer) RETURNS boolean LANGUAGE sql AS 'INSERT INTO mallory.q VALUES (1) RETURNING true';
CREATE TABLE shard_0005.t_aaa (id bigint PRIMARY KEY, n integer CHECK (shard_0005.defer(n)));
INSERT INTO shard_0005.t_aaa VALUES (1, 1);
SQL
on "$from" -c "DELETE FROM mallory.q" || exit 1
mallory_mark "$from"	# the INSERT's deferred event ran as mallory (not a superuser)
out=$("$move" --shard 5 --from "$(conn "$from")" --to "$(conn "$to")" 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 1 "offline move with a deferred trigger event queued: exit status"
want='shardid-move: error: could not commit the rows of shard 5 on the --to server: deferrable constraint trigger q_strike on table mallory.q of role mallory, which the commit would run as a superuser'
echo "$out" | grep -qxF -- "$want" || fail "deferred trigger: wanted \"$want\""
expect "$(on "$to" -c "SELECT count(*) FROM mallory.q")" = 0 "rows her code wrote on the target, committed"
expect "$(on "$to" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "target schema left by the failed move"
no_superuser_code "deferred trigger" "$a" "$b"
grep -h 'mallory.strike() as superuser' "$SHARDID_TMP"/s0.log "$SHARDID_TMP"/s1.log | sed 's/^/  log: /'
finish
