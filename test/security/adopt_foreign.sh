#!/usr/bin/env bash
# create_shards() adopts only what it would have made.
#
# A superuser provisions shard 5 from template app_template and lets
# adopter create in schema shard_0005 (a team's own role, say).  The
# template gains table u; before create_shards() runs again, adopter puts a
# VIEW shard_0005.u there whose INSTEAD OF INSERT trigger runs
# adopter.hit().  1.2 reported it as "exists", and the superuser's INSERT
# into shard_0005.u ran adopter's code as superuser (adopter became one).
# Now create_shards() refuses it, naming the view and its owner, and so it
# does a table of adopter's.  A hand-made shard_0006 whose table differs
# from the template (another column type, no primary key, an extra column)
# is kept, as before, but reported with a WARNING saying how it differs.
# Exit 0: both refusals with their messages, the drift warning, and none of
# adopter's code ran.
. "$(dirname "$0")/../lib_script.sh"
. "$(dirname "$0")/lib.bash"

attacker_setup adopter >/dev/null
q >/dev/null <<'SQL' || fail "setup"
CREATE SCHEMA app_template;
CREATE TABLE app_template.t (id bigint PRIMARY KEY, v int NOT NULL);
SELECT * FROM shardid.create_shards('app_template', ARRAY[5]);
GRANT USAGE, CREATE ON SCHEMA shard_0005 TO adopter;
CREATE TABLE app_template.u (id bigint PRIMARY KEY, w text);
SET ROLE adopter;
CREATE VIEW shard_0005.u AS SELECT 0::bigint AS id, ''::text AS w;
CREATE FUNCTION adopter.instead() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM adopter.hit(); RETURN NEW; END $$;
CREATE TRIGGER instead INSTEAD OF INSERT ON shard_0005.u FOR EACH ROW EXECUTE FUNCTION adopter.instead();
RESET ROLE;
SQL

# the view: refused with its name and owner
out=$(q -c "SELECT action FROM shardid.create_shards('app_template', ARRAY[5]) WHERE table_name = 'u'" 2>&1)
echo "create_shards() over adopter's view: $out"
echo "$out" | grep -q "ERROR:  shard 5 already holds view shard_0005.u, which belongs to role adopter" ||
	fail "create_shards() did not refuse adopter's view: $out"
if [ "$out" = exists ]; then
	# what 1.2 let an operator believe: the shard's table exists, so write to it
	q -c "INSERT INTO shard_0005.u (id, w) VALUES (1, 'x')" >/dev/null 2>&1
fi
attacker_check adopter "a view of adopter's under a template table's name"

# a table of adopter's under that name: refused too
q >/dev/null <<'SQL' || fail "setup of adopter's table"
DROP VIEW shard_0005.u CASCADE;
SET ROLE adopter;
CREATE TABLE shard_0005.u (id bigint PRIMARY KEY, w text);
RESET ROLE;
SQL
out=$(q -c "SELECT action FROM shardid.create_shards('app_template', ARRAY[5]) WHERE table_name = 'u'" 2>&1)
echo "$out" | grep -q "ERROR:  shard 5 already holds table shard_0005.u, which belongs to role adopter" ||
	fail "create_shards() did not refuse adopter's table: $out"
q -c "DROP TABLE shard_0005.u" >/dev/null
expect "$(q -c "SELECT action FROM shardid.create_shards('app_template', ARRAY[5]) WHERE table_name = 'u'" 2>&1)" = created \
	"create_shards() once adopter's table is gone"

# a hand-made shard whose table drifted: kept, reported
q >/dev/null <<'SQL' || fail "setup of shard_0006"
CREATE SCHEMA shard_0006;
CREATE TABLE shard_0006.t (id bigint, v text, extra int);
SQL
out=$(q -c "SELECT table_name || ' ' || action FROM shardid.create_shards('app_template', ARRAY[6]) ORDER BY 1" 2>&1)
echo "create_shards() over a drifted table: $out"
echo "$out" | grep -q 'WARNING:  table shard_0006.t of shard 6 differs from its template app_template.t: column extra is not in the template; column id is nullable; column v is text, not integer; primary key (id) is missing' ||
	fail "the drift of shard_0006.t was not reported: $out"
echo "$out" | grep -q "^t exists$" || fail "shard_0006.t was not kept: $out"
attacker_check adopter "after every create_shards()"
finish
