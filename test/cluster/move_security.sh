#!/usr/bin/env bash
# test/cluster/move_security.sh: shardid-move runs no code of other roles
# with a superuser's rights, on either server.
#
# mallory, an ordinary role with CREATE on schema shard_0005, plants every
# kind of code a move could run: a CHECK constraint, a partial index, an
# expression index, triggers (one ENABLE ALWAYS), a column DEFAULT, a
# generated column, a domain CHECK, a row-level security policy, a foreign
# key next to a partial index, and (through a careless superuser) an event
# trigger on the target calling her function.  Each payload calls
# mallory.strike(), which tries to become the superuser again (RESET ROLE,
# SET SESSION AUTHORIZATION DEFAULT) and, when it runs as a superuser,
# takes a number from mallory.hits (which no rollback returns) and makes
# mallory superuser.  Payload runs as mallory herself are fine.
#
#   1. an offline move with everything planted is refused up front for
#      what it cannot run as its owner (the index of a table with a foreign
#      key, which pg_restore's check of the key plans; FORCE ROW LEVEL
#      SECURITY; the event trigger), one message each; nothing changes;
#   2. without those, the offline move runs: the rows are written by
#      mallory (CHECK, domain, generated column), the counts of the
#      verification plan the partial index as its owner, pg_restore fires
#      no trigger;
#   3. an online move back: PostgreSQL 16+ applies as the table owner, so
#      it runs; on 15 every table of mallory's that carries an evaluated
#      expression is refused.
# After each: mallory.hits unchanged, mallory no superuser on both servers.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 40 2 "${LOGICAL[@]}" || exit 1

# both servers: the extension, mallory, her counter and her payload
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" escape || exit 1
	as_mallory "$p" -c "CREATE FUNCTION mallory.audit() RETURNS event_trigger LANGUAGE plpgsql AS \$\$
BEGIN PERFORM mallory.strike(); END \$\$" || exit 1
done

# the payload is live: a superuser session that SET SESSION AUTHORIZATION
# mallory (what pg_restore --use-set-session-authorization does), or SET
# ROLE mallory, and then runs her code is a superuser again
on "$a" -c "BEGIN; SET SESSION AUTHORIZATION mallory; SELECT mallory.strike(); ROLLBACK" >/dev/null 2>&1
expect "$(mallory_hits "$a")" = 1 "the payload escapes SET SESSION AUTHORIZATION (test of the test)"
on "$a" -c "BEGIN; SET ROLE mallory; SELECT mallory.strike(); ROLLBACK" >/dev/null 2>&1
expect "$(mallory_hits "$a")" = 2 "the payload escapes SET ROLE (test of the test)"
mallory_mark "$a" "$b"

# shard 5 on server a, with its template table; mallory may create in it
events_shard "$a" 50 mallory || exit 1

# plant: the kinds a move accepts (b), then those it refuses (r)
plant_accepted() {
	as_mallory "$1" >/dev/null <<'SQL'
CREATE FUNCTION shard_0005.f(integer) RETURNS boolean IMMUTABLE LANGUAGE sql AS 'SELECT mallory.strike()';
CREATE FUNCTION shard_0005.g(integer) RETURNS integer IMMUTABLE LANGUAGE sql
    AS 'SELECT CASE WHEN mallory.strike() THEN $1 END';
CREATE FUNCTION shard_0005.h() RETURNS integer LANGUAGE sql AS 'SELECT CASE WHEN mallory.strike() THEN 1 END';
CREATE FUNCTION shard_0005.trig() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM mallory.strike(); RETURN NEW; END $$;
CREATE TABLE shard_0005.t_partial (id bigint PRIMARY KEY, n integer);
CREATE INDEX ON shard_0005.t_partial (n) WHERE shard_0005.f(1);
CREATE TABLE shard_0005.t_expr (id bigint PRIMARY KEY, n integer);
CREATE INDEX ON shard_0005.t_expr (shard_0005.g(n));
CREATE TABLE shard_0005.t_trigger (id bigint PRIMARY KEY, n integer);
CREATE TRIGGER strike BEFORE INSERT OR UPDATE ON shard_0005.t_trigger
    FOR EACH ROW EXECUTE FUNCTION shard_0005.trig();
CREATE TABLE shard_0005.t_default (id bigint PRIMARY KEY, n integer DEFAULT shard_0005.h());
CREATE TABLE shard_0005.t_rls (id bigint PRIMARY KEY, n integer);
ALTER TABLE shard_0005.t_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY strike ON shard_0005.t_rls USING (shard_0005.f(n));
INSERT INTO shard_0005.t_partial SELECT g, g FROM generate_series(1, 20) g;
INSERT INTO shard_0005.t_expr SELECT g, g FROM generate_series(1, 20) g;
INSERT INTO shard_0005.t_trigger SELECT g, g FROM generate_series(1, 20) g;
INSERT INTO shard_0005.t_default SELECT g, g FROM generate_series(1, 20) g;
INSERT INTO shard_0005.t_rls SELECT g, g FROM generate_series(1, 20) g;
SQL
}
plant_refused() {	# what a superuser would evaluate while copying rows
	as_mallory "$1" >/dev/null <<'SQL'
CREATE TABLE shard_0005.t_check (id bigint PRIMARY KEY, n integer CHECK (shard_0005.f(n)));
CREATE DOMAIN shard_0005.checked AS integer CHECK (shard_0005.f(VALUE));
CREATE TABLE shard_0005.t_domain (id bigint PRIMARY KEY, n shard_0005.checked);
CREATE TABLE shard_0005.t_generated (id bigint PRIMARY KEY, n integer,
    m integer GENERATED ALWAYS AS (shard_0005.g(n)) STORED);
INSERT INTO shard_0005.t_check SELECT g, g FROM generate_series(1, 20) g;
INSERT INTO shard_0005.t_domain SELECT g, g FROM generate_series(1, 20) g;
INSERT INTO shard_0005.t_generated SELECT g, g FROM generate_series(1, 20) g;
SQL
}
plant_accepted "$a" || exit 1
plant_refused "$a" || exit 1
as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE TABLE shard_0005.t_fk_parent (id bigint PRIMARY KEY, n integer);
CREATE INDEX ON shard_0005.t_fk_parent (n) WHERE shard_0005.f(2);
CREATE TABLE shard_0005.t_fk_child (id bigint PRIMARY KEY, parent bigint REFERENCES shard_0005.t_fk_parent);
CREATE TABLE shard_0005.t_force (id bigint PRIMARY KEY);
ALTER TABLE shard_0005.t_force ENABLE ROW LEVEL SECURITY, FORCE ROW LEVEL SECURITY;
SQL
# a superuser's event trigger on the target, calling mallory's function
on "$b" -c "CREATE EVENT TRIGGER audit ON ddl_command_end EXECUTE FUNCTION mallory.audit()" || exit 1
no_superuser_code "planting" "$a" "$b"

# 1. offline, everything planted: refused, one message per object
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 1 "offline move with code of mallory: exit status"
for want in \
	'error: table shard_0005.t_fk_parent of role mallory: index shard_0005.t_fk_parent_n_idx has an expression or a predicate, and the table has a foreign key, whose check pg_restore plans as a superuser' \
	'table shard_0005.t_force has FORCE ROW LEVEL SECURITY' \
	'error: event trigger audit calls function mallory.audit() of role mallory on the --to server, which the move'"'"'s DDL would fire as a superuser' \
	'error: shard 5 cannot move as it is (see above); nothing was changed'; do
	echo "$out" | grep -qF -- "$want" || fail "refusal: wanted \"$want\""
done
echo "$out" | grep -q 't_partial\|t_expr\|t_trigger\|t_default\|t_rls\|t_check\|t_domain\|t_generated' &&
	fail "refusal names an object the move runs safely"
expect "$(on "$b" -c "SELECT count(*) FROM shardid.move_journal")" = 0 "journal rows written by the refused move"
expect "$(on "$a" -c "SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_moving'")" = 0 "freeze left by the refused move"
no_superuser_code "refused offline move" "$a" "$b"

# 2. offline with what it accepts: it moves, no payload runs as a superuser
on "$a" -c "DROP TABLE shard_0005.t_fk_child, shard_0005.t_fk_parent, shard_0005.t_force" || exit 1
on "$b" -c "DROP EVENT TRIGGER audit" || exit 1
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --move-and-drop-source --yes || fail "offline move of shard 5 failed"
expect "$(on "$b" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 registered on the target"
# counted by mallory: a superuser's count would plan her partial index
expect "$(as_mallory "$b" -c "SELECT count(*) FROM shard_0005.t_partial")" = 20 "rows of t_partial on the target"
for t in t_check t_domain t_generated; do
	expect "$(as_mallory "$b" -c "SELECT count(*) FROM shard_0005.$t")" = 20 "rows of $t on the target"
done
expect "$(as_mallory "$b" -c "SELECT sum(m) FROM shard_0005.t_generated")" = 210 "generated column computed on the target"
no_superuser_code "offline move" "$a" "$b"

# 3. online back
on "$b" -c "ALTER TABLE shard_0005.t_trigger ENABLE ALWAYS TRIGGER strike" || exit 1
on "$a" -c "CREATE EVENT TRIGGER audit ON ddl_command_end EXECUTE FUNCTION mallory.audit()" -c "ALTER EVENT TRIGGER audit DISABLE" || exit 1
version=$(on "$a" -c "SHOW server_version_num")
out=$("$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --online 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
if [ "$version" -ge 160000 ]; then
	expect "$status" = 0 "online move into PostgreSQL 16+, which applies as the table owner: exit status"
	expect "$(as_mallory "$a" -c "SELECT count(*) FROM shard_0005.t_generated")" = 20 "rows of t_generated on the target"
else
	expect "$status" = 1 "online move into PostgreSQL 15, which applies as a superuser: exit status"
	why="the --to server runs PostgreSQL 15, whose subscriptions apply changes as a superuser, with no way to apply them as the table's owner"
	for want in 't_check of role mallory carries a CHECK constraint' \
		"t_domain of role mallory carries a domain in a column's type" \
		't_generated of role mallory carries a generated column' \
		't_expr of role mallory carries an index expression or predicate' \
		't_partial of role mallory carries an index expression or predicate' \
		't_trigger of role mallory carries a trigger' 't_default of role mallory carries a DEFAULT'; do
		echo "$out" | grep -qxF -- "shardid-move: error: table shard_0005.$want: $why" || fail "refusal on 15: wanted \"$want\""
	done
fi
no_superuser_code "online move" "$a" "$b"
grep -h 'mallory.strike() as superuser' "$SHARDID_TMP"/s0.log "$SHARDID_TMP"/s1.log | sed 's/^/  log: /'
finish
