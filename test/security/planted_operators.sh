#!/usr/bin/env bash
# Operators and functions planted where name resolution could find them run
# nothing.  mallory plants an operator for every operator name and every
# pair of the types that shardid's scripts and functions compare or
# compute with, one in schema public and, as the owner that a trusted 1.0
# install made her, one in schema shardid; and overloads of shardid's
# function names there.  Then, with public first on the search_path:
#  - an update from 1.0 refuses, and a fresh install into her schema too;
#  - an update from 1.0 after a superuser removed what was in shardid;
#  - every function, view and procedure of shardid that a superuser may call;
# and none of her payloads ran (a counter no rollback undoes).
. "$(dirname "$0")/../lib.sh" servers

# This script's own queries must not meet the plants either: an exact
# match in public beats pg_catalog's inexact one (oid = regnamespace, say)
export PGOPTIONS="-c search_path=pg_catalog,pg_temp"
set -f	# the operator names are not file patterns

q -c "DROP EXTENSION shardid" -c "DROP SCHEMA shardid" >/dev/null
attacker_setup mallory

ops="= <> < > <= >= + - * / % || ~ !~ ~~ !~~ & | << >>"
types="oid regclass regtype regprocedure regnamespace regrole name text \"char\" integer bigint boolean timestamptz text[] \"char\"[]"
# plant SCHEMA [operators|functions]: an operator per name and type pair,
# each calling mallory.hit(), and overloads of shardid's function names
plant() {
	local schema=$1 what=${2:-operators functions}
	{
		echo "SET ROLE mallory;"
		for l in $types; do
			for r in $types; do
				echo "CREATE FUNCTION mallory.trap($l, $r) RETURNS boolean LANGUAGE sql AS 'SELECT mallory.hit()';"
			done
		done
		case "$what" in *operators*)
			for op in $ops; do
				for l in $types; do
					for r in $types; do
						echo "CREATE OPERATOR $schema.$op (LEFTARG = $l, RIGHTARG = $r, FUNCTION = mallory.trap);"
					done
				done
			done ;;
		esac
		# overloads of shardid's names with argument types a literal resolves to
		case "$what" in *functions*)
			for f in id_shard id_seq id_millis id_time decode min_id max_id next_id make_id shard_schema id_schema \
				register_shard unregister_shard doctor info max_shard default_call default_text rows_of_other_shards \
				foreign_objects check_registry_writer owner_trusted check_shard_schema create_shards; do
				echo "CREATE FUNCTION $schema.$f(text) RETURNS bigint LANGUAGE sql AS 'SELECT 0 WHERE mallory.hit()';"
				echo "CREATE FUNCTION $schema.$f(integer) RETURNS bigint LANGUAGE sql AS 'SELECT 0 WHERE mallory.hit()';"
				echo "CREATE FUNCTION $schema.$f(oid, name, integer) RETURNS bigint LANGUAGE sql AS 'SELECT 0 WHERE mallory.hit()';"
			done ;;
		esac
		echo "RESET ROLE;"
	} | q -v ON_ERROR_STOP=0 >/dev/null 2>"$SHARDID_TMP/plant.err"
	grep -v "already exists" "$SHARDID_TMP/plant.err" | head -3
}
q -c "GRANT CREATE ON SCHEMA public TO mallory" >/dev/null
plant public
planted=$(q -c "SELECT count(*) FROM pg_operator WHERE oprnamespace = 'public'::regnamespace")
expect "$planted" = $((20 * 15 * 15)) "operators planted in public"

# 1. a 1.0 install that mallory's trusted install made hers
# (with a shard table, so that the scripts' comparisons have rows to compare)
q -c "CREATE EXTENSION shardid VERSION '1.0'" -c "ALTER SCHEMA shardid OWNER TO mallory" \
	-c "CREATE SCHEMA s1" -c "CREATE TABLE s1.t (id bigint DEFAULT shardid.next_id(1, 1))" >/dev/null
plant shardid operators
# refused while the schema is hers; then a superuser takes it, as told
out=$(q -c "SET search_path = public, pg_catalog" -c "ALTER EXTENSION shardid UPDATE" 2>&1)
case "$out" in
*'schema "shardid" belongs to role "mallory", which is not a superuser'*) ;;
*) fail "update in mallory's schema: $out" ;;
esac
attacker_check mallory "update from 1.0 in her schema"
q -c "ALTER SCHEMA shardid OWNER TO postgres" -c "REVOKE ALL ON SCHEMA shardid FROM PUBLIC CASCADE" \
	-c "GRANT USAGE ON SCHEMA shardid TO PUBLIC" >/dev/null
out=$(q -c "SET search_path = public, pg_catalog" -c "ALTER EXTENSION shardid UPDATE" 2>&1)
case "$out" in
*'schema "shardid" holds objects that are not part of extension shardid'*) ;;
*) fail "update over mallory's operators: $out" ;;
esac
attacker_check mallory "update from 1.0 over planted operators"
plant shardid functions
out=$(q -c "SET search_path = public, pg_catalog" -c "ALTER EXTENSION shardid UPDATE" 2>&1)
case "$out" in
*'schema "shardid" holds objects that are not part of extension shardid'*) ;;
*) fail "update over mallory's objects: $out" ;;
esac
attacker_check mallory "update from 1.0 over planted objects"

# 2. a fresh install into her schema
q -c "DROP SCHEMA s1 CASCADE" -c "DROP EXTENSION shardid" -c "ALTER SCHEMA shardid OWNER TO mallory" >/dev/null
out=$(q -c "CREATE EXTENSION shardid" 2>&1)
case "$out" in
*'schema "shardid" belongs to role "mallory", which is not a superuser'*) ;;
*) fail "install into mallory's schema: $out" ;;
esac
attacker_check mallory "install into a schema of mallory's"

# 3. the superuser clears the schema and updates from 1.0, public first
# (renamed, not dropped: dropping thousands of objects takes a lock each)
q -c "ALTER SCHEMA shardid RENAME TO mallory_junk" -c "CREATE EXTENSION shardid VERSION '1.0'" >/dev/null
q -c "SET search_path = public, pg_catalog" -c "ALTER EXTENSION shardid UPDATE" >/dev/null ||
	fail "update from 1.0 with operators planted in public"
attacker_check mallory "update from 1.0 with public first"
q -c "DROP EXTENSION shardid" -c "SET search_path = public, pg_catalog" -c "CREATE EXTENSION shardid" >/dev/null ||
	fail "install with operators planted in public"
attacker_check mallory "install with public first"

# 4. every entry point a superuser may call, public first on the path
q -v ON_ERROR_STOP=0 >"$SHARDID_TMP/calls.out" 2>&1 <<'SQL'
SET search_path = public, pg_catalog;
CREATE SCHEMA tpl;
CREATE TABLE tpl.items (id bigint PRIMARY KEY, name text);
SELECT count(*) FROM shardid.create_shards('tpl', ARRAY[1, 2]);
CALL shardid.provision_shards('tpl', ARRAY[3]);
CALL shardid.provision_shards('tpl', 4, 5);
INSERT INTO shard_0001.items (name) VALUES ('a');
SELECT shardid.register_shard(9, 'tpl'), shardid.unregister_shard(9);
SELECT shardid.shard_schema(1), shardid.id_schema(shardid.make_id(0, 2, 0));
SELECT shardid.id_shard(5120), shardid.id_seq('1025'), shardid.id_millis(1), shardid.id_time(1),
       shardid.min_id('2026-11-01'), shardid.max_id('2026-11-01'), shardid.decode(1), shardid.max_shard();
SELECT shardid.next_id(1, 1), shardid.make_id(1, 1, 1);
SELECT count(*) FROM shardid.info();
SELECT count(*) FROM shardid.doctor();
SELECT count(*) FROM shardid.doctor(scan_rows => false);
SELECT count(*) FROM shardid.id_defaults;
SELECT count(*) FROM shardid.shards;
SELECT count(*) FROM shardid.shard_registry;
SELECT count(*) FROM shardid_internal.foreign_objects();
SELECT shardid.check_no_foreign_objects();
SELECT shardid_internal.rows_of_other_shards('shard_0001.items', 'id', 1);
SELECT shardid_internal.owner_trusted(10), shardid_internal.check_shard_schema('tpl', 1);
SQL
grep -q "^ERROR" "$SHARDID_TMP/calls.out" && { fail "an entry point failed:"; grep "^ERROR" "$SHARDID_TMP/calls.out"; }
attacker_check mallory "every entry point, public first"
finish
