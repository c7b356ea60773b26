#!/usr/bin/env bash
# test/citus/attacks.sh: what a role that is no superuser, owning a tenant
# schema of its own on a Citus cluster, must not get from shardid:
#  * shard_schema()/id_schema() answering its schema for a shard it names in
#    a set_id() trigger on its own table (set_id() is EXECUTE to PUBLIC), on
#    the coordinator (a shard not registered) or on a worker (which has no
#    registry), nor a shard of the cluster losing its answer because a
#    second schema claims it;
#  * a superuser running its code: citus_doctor() (and doctor(), which
#    includes it) sends a command to every placement through Citus's
#    run_command_on_placements(), which passes the command through format()
#    again with the shard table's name, so a '%' in a trigger's id column
#    argument spliced the name of the role's table (which may hold a quote)
#    into the SQL run on the worker as the superuser.
# Each attack is refused (exit 0) or works (exit 1).
. "$(dirname "$0")/../lib.sh" citus

citus_start || { fail "the Citus cluster did not start"; finish; }
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE SCHEMA app_template" \
	-c "CREATE TABLE app_template.t (id bigint PRIMARY KEY, v int)" \
	-c "RESET citus.enable_schema_based_sharding" \
	-c "SET client_min_messages = warning" \
	-c "SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[20])" \
	-c "CREATE ROLE att LOGIN" \
	-c "CREATE SCHEMA att_s AUTHORIZATION att" >/dev/null || { fail "setup"; finish; }
# att [PORT] SQL...: as the role (on the coordinator by default)
att() {
	local p=$COORD
	case $1 in [0-9]*) p=$1; shift ;; esac
	PGHOST=$SHARDID_TMP PGPORT=$p PGUSER=att PGDATABASE=app q "$@"
}

# routing: the role's table claims shard 40 (not registered) and shard 20
# (tenant schema shard_0020)
att -c "CREATE TABLE att_s.r (id bigint PRIMARY KEY, v int)" \
	-c "CREATE TRIGGER claim BEFORE INSERT ON att_s.r FOR EACH ROW EXECUTE FUNCTION shardid.set_id('40', 'id')" \
	-c "CREATE TABLE att_s.r2 (id bigint PRIMARY KEY, v int)" \
	-c "CREATE TRIGGER claim BEFORE INSERT ON att_s.r2 FOR EACH ROW EXECUTE FUNCTION shardid.set_id('20', 'id')" >/dev/null ||
	echo "note: the role could not create its claims (refused)"
for port in "$COORD" "$W1" "$W2"; do
	expect "$(at "$port" -c "SELECT coalesce(shardid.shard_schema(40), 'none') || ' ' || coalesce(shardid.id_schema(shardid.make_id(1000, 40, 0)), 'none')")" = \
		"none none" "a role's set_id() trigger does not route shard 40 to its schema on port $port"
	expect "$(at "$port" -c "SELECT coalesce(shardid.shard_schema(20), 'none')")" = \
		"shard_0020" "a role's set_id() trigger does not take shard 20's answer away on port $port"
done
expect "$(at "$COORD" -c "SELECT count(*) FROM shardid.citus_doctor() WHERE problem = 'shard claimed by several schemas'")" = 0 \
	"doctor does not take the role's claim for a tenant schema"

# the superuser's code: a table whose name closes the literal Citus's
# format() builds, and a trigger whose id column argument is %1$s
proof=$SHARDID_TMP/pwned
att -c "CREATE FUNCTION att_s.evil() RETURNS text LANGUAGE plpgsql AS \$f\$
	BEGIN
	    IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
	        EXECUTE format('COPY (SELECT current_user) TO %L', '$proof-' || current_setting('port'));
	    END IF;
	    RETURN '';
	END \$f\$" >/dev/null || fail "the role's function"
for port in "$W1" "$W2"; do
	[ "$(at "$port" -c "SELECT count(*) FROM pg_proc WHERE proname = 'evil'")" = 1 ] ||
		echo "note: att_s.evil() did not reach port $port"
done
att -c "CREATE TABLE att_s.\"'||att_s.evil()||'\" (id bigint PRIMARY KEY, v int)" \
	-c "CREATE TRIGGER claim BEFORE INSERT ON att_s.\"'||att_s.evil()||'\" FOR EACH ROW EXECUTE FUNCTION shardid.set_id('41', '%1\$s')" >/dev/null ||
	echo "note: the role could not create its planted table (refused)"
at "$COORD" -c "SELECT count(*) FROM shardid.doctor()" >/dev/null
at "$COORD" -c "SELECT count(*) FROM shardid.citus_doctor()" >/dev/null
expect "$(ls "$proof"-* 2>/dev/null | wc -l)" = 0 "doctor() runs no code of the role as the superuser on a worker"

# a trusted tenant table whose id column is named with a '%': doctor checks it
at "$COORD" -c "CREATE SCHEMA tenant_9" \
	-c "CREATE TABLE tenant_9.p (\"i%d\" bigint PRIMARY KEY, v int)" \
	-c "SELECT shardid.citus_use_trigger('tenant_9.p', 9, 'i%d')" \
	-c "INSERT INTO tenant_9.p (v) VALUES (1)" >/dev/null || fail "tenant_9"
expect "$(at "$COORD" -F'|' -c "SELECT problem, object FROM shardid.citus_doctor() WHERE object LIKE 'tenant_9%'")" = "" \
	"doctor of a table whose id column has a % in its name"
# create_shards() again after a table was added to the template: a shard
# that is already a tenant schema is refused before anything is made, with
# a hint that works (the shard's other tables are left alone)
at "$COORD" -c "CREATE TABLE app_template.u (id bigint PRIMARY KEY, w int)" >/dev/null
# (the deprecated name's WARNING left out: its own test is sql/shards.sql)
expect "$(at "$COORD" -c "SET client_min_messages = error" -c "SELECT * FROM shardid.create_shards('app_template', ARRAY[20, 21])" 2>&1 | grep -E '^(ERROR|HINT)')" = \
	'ERROR:  schema "shard_0020" is a Citus tenant schema: provisioning cannot add table "u" to it
HINT:  Run CREATE TABLE shard_0020.u (LIKE app_template.u INCLUDING ALL); then SELECT shardid.citus_use_trigger('"'shard_0020.u'"', <shard>);' \
	"create_shards adding a table to a tenant schema"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0021'")" = 0 "create_shards made nothing"
at "$COORD" -c "CREATE TABLE shard_0020.u (LIKE app_template.u INCLUDING ALL)" \
	-c "SELECT shardid.citus_use_trigger('shard_0020.u', 20)" >/dev/null || fail "the hint's statements"
expect "$(at "$W1" -c "INSERT INTO shard_0020.u (w) VALUES (1) RETURNING shardid.id_shard(id)")" = 20 "shard_0020.u made as the hint says"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = 'shard_0020.u'::regclass")" = 1 \
	"shard_0020.u is a tenant table"
finish
