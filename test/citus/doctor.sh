#!/usr/bin/env bash
# test/citus/doctor.sh: shardid.citus_doctor() on the coordinator sees what
# doctor() cannot (the coordinator's tenant tables are empty shells): a row
# with an id of another shard planted straight into the shard table on a
# worker, a shard table whose set_id() trigger was dropped on the worker, a
# tenant table whose id is a next_id() DEFAULT (made on whichever node
# receives the INSERT), a shard number given to two tenant schemas, and a
# node with too few free replication origins.  Then the shard <-> tenant
# mapping (shardid.citus_tenants) answers alike on every node; doctor()
# includes citus_doctor()'s findings; create_shards() with schema-based
# sharding on makes distributed tenant schemas that every node routes to;
# citus_distribute_shard() turns a shard made with schema-based sharding
# off into a tenant schema (and refuses, saying why, one that
# create_local_shards() made with it on, whose tables Citus left local);
# shardid-move refuses a tenant schema and names citus_schema_move.
. "$(dirname "$0")/../lib.sh" citus

citus_start "max_active_replication_origins = 10" || { fail "the Citus cluster did not start"; finish; }
at "$COORD" -c "CREATE SCHEMA tenant_7" -c "CREATE SCHEMA tenant_8" \
	-c "CREATE TABLE tenant_7.a (id bigint PRIMARY KEY, v int)" \
	-c "CREATE TABLE tenant_7.b (id bigint PRIMARY KEY, v int)" \
	-c "CREATE TABLE tenant_7.d (id bigint PRIMARY KEY, v int)" \
	-c "CREATE TABLE tenant_8.a (id bigint PRIMARY KEY, v int)" \
	-c "SELECT shardid.citus_use_trigger('tenant_7.a', 7)" \
	-c "SELECT shardid.citus_use_trigger('tenant_7.b', 7)" \
	-c "SELECT shardid.citus_use_trigger('tenant_8.a', 8)" \
	-c "INSERT INTO tenant_7.a (v) SELECT generate_series(1, 100)" \
	-c "INSERT INTO tenant_8.a (v) SELECT generate_series(1, 100)" >/dev/null ||
	{ fail "setup"; finish; }
# tenant_7.d's id a next_id() DEFAULT, as 1.2 left such a table: the event
# trigger shardid_citus_guard gave the table the trigger at CREATE TABLE,
# and refuses such a DEFAULT on a tenant table, also inside a function
# (test/citus/guard.sh), so it is set by hand on every node
at "$COORD" -c "DROP TRIGGER IF EXISTS shardid_set_id ON tenant_7.d" >/dev/null || { fail "setup of tenant_7.d"; finish; }
for port in "$COORD" "$W1" "$W2"; do
	at "$port" -c "SET citus.enable_ddl_propagation = off" \
		-c "ALTER TABLE tenant_7.d ALTER COLUMN id SET DEFAULT shardid.next_id(7)" >/dev/null ||
		{ fail "setup of tenant_7.d on port $port"; finish; }
done

doctor() { at "$COORD" -F'|' -c "SELECT problem, object, coalesce(node, '') FROM shardid.citus_doctor() ORDER BY 1, 2, 3"; }
expect "$(doctor)" = "id made where the statement arrives|tenant_7.d.id|" "doctor on a healthy cluster but for a DEFAULT"
at "$COORD" -c "ALTER TABLE tenant_7.d ALTER COLUMN id DROP DEFAULT" -c "SELECT shardid.citus_use_trigger('tenant_7.d', 7)" >/dev/null
expect "$(doctor)" = "" "doctor on a healthy cluster"
# a tenant table without an index on its id: set_id() cannot read its
# newest id (1.2 reported nothing; a new row sorted below 224 moved ones)
at "$COORD" -c "CREATE TABLE tenant_7.n (id bigint NOT NULL, v int)" >/dev/null 2>&1 || fail "CREATE TABLE tenant_7.n"
expect "$(at "$COORD" -c "SELECT count(*) FROM shardid.citus_tenants WHERE schema_name = 'tenant_7' AND table_name = 'n'")" = 1 \
	"the guard gave tenant_7.n the trigger"
expect "$(at "$COORD" -F'|' -c "SELECT problem, object, fix FROM shardid.citus_doctor() ORDER BY 1, 2")" = \
	"tenant table without an index on its id|tenant_7.n|ALTER TABLE tenant_7.n ADD PRIMARY KEY (id);  -- or CREATE INDEX ON tenant_7.n (id);" \
	"doctor on a tenant table without an index on its id"
at "$COORD" -c "ALTER TABLE tenant_7.n ADD PRIMARY KEY (id)" >/dev/null || fail "the fix"
expect "$(doctor)" = "" "doctor after the fix"

# every node knows the tenants and their shards
for port in "$COORD" "$W1" "$W2"; do
	expect "$(at "$port" -c "SELECT string_agg(schema_name || '.' || table_name || '=' || shard, ' ' ORDER BY schema_name, table_name)
		FROM shardid.citus_tenants WHERE table_name !~ '_[0-9]+$'")" = \
		"tenant_7.a=7 tenant_7.b=7 tenant_7.d=7 tenant_7.n=7 tenant_8.a=8" "citus_tenants on port $port"
done

# a row of shard 9 planted into tenant_7.a's shard table, on its worker
w=$(node_of tenant_7)
shard_table=$(at "$COORD" -c "SELECT shard_name('tenant_7.a'::regclass, shardid) FROM pg_dist_shard
	WHERE logicalrelid = 'tenant_7.a'::regclass")
at "$w" -c "INSERT INTO $shard_table (id, v) VALUES (shardid.make_id(1000, 9, 1), 0)" >/dev/null ||
	fail "planting a row on port $w"
# the trigger dropped on tenant_7.b's shard table, on its worker
# (Citus names a shard's trigger after the shard)
shard_b=$(at "$COORD" -c "SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'tenant_7.b'::regclass")
at "$w" -c "SET citus.enable_ddl_propagation = off" \
	-c "DROP TRIGGER shardid_set_id_$shard_b ON $(at "$COORD" -c "SELECT shard_name('tenant_7.b'::regclass, $shard_b)")" >/dev/null ||
	fail "dropping the trigger on port $w"
# shard 7 given to tenant_8 too
at "$COORD" -c "CREATE TABLE tenant_8.c (id bigint PRIMARY KEY, v int)" \
	-c "SELECT shardid.citus_use_trigger('tenant_8.c', 7)" >/dev/null
got=$(doctor)
want="rows of other shards|tenant_7.a (shard table $(at "$COORD" -c "SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'tenant_7.a'::regclass"))|127.0.0.1:$w
shard claimed by several schemas|7|
trigger missing on a placement|tenant_7.b (shard table $(at "$COORD" -c "SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'tenant_7.b'::regclass"))|127.0.0.1:$w"
expect "$got" = "$want" "doctor with a planted row, a dropped trigger and a shard given twice"
expect "$(at "$COORD" -c "SELECT detail FROM shardid.citus_doctor() WHERE problem = 'rows of other shards'")" = \
	"1 rows have an id of another shard than 7." "doctor's detail on the planted row"
# doctor() includes them, the node in the object; a role that may not run
# citus_doctor() is told that the workers were not checked
want="rows of other shards|tenant_7.a (shard table $(at "$COORD" -c "SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'tenant_7.a'::regclass")) on node 127.0.0.1:$w
shard claimed by several schemas|7
trigger missing on a placement|tenant_7.b (shard table $(at "$COORD" -c "SELECT shardid FROM pg_dist_shard WHERE logicalrelid = 'tenant_7.b'::regclass")) on node 127.0.0.1:$w"
expect "$(at "$COORD" -F'|' -c "SELECT problem, object FROM shardid.doctor() WHERE problem <> 'epoch not set' ORDER BY 1, 2")" = \
	"$want" "doctor() with the Citus checks"
at "$COORD" -c "CREATE ROLE plain LOGIN" >/dev/null
expect "$(PGUSER=plain PGHOST=$SHARDID_TMP PGPORT=$COORD PGDATABASE=app q -F'|' \
	-c "SELECT problem, fix FROM shardid.doctor(false) WHERE problem LIKE 'Citus%'")" = \
	"Citus placements not checked|Run SELECT * FROM shardid.doctor(); as a superuser." "doctor() of a role that may not run citus_doctor()"

# too few free replication origins on worker 2: shardid's two take all
# (fewer than the origins a node has recovered, and it does not start)
cluster_conf w2 "max_active_replication_origins = 2"
cluster_stop w2 && citus_node_start w2 || fail "restart of worker 2"
expect "$(at "$COORD" -c "SELECT node FROM shardid.citus_doctor() WHERE problem = 'replication origins'")" = \
	"127.0.0.1:$W2" "doctor reports worker 2's replication origins"

# create_local_shards() (1.1's create_shards()) with schema-based sharding
# on makes a tenant schema whose tables stay local: citus_distribute_shard()
# says what to do
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE SCHEMA app_template" \
	-c "CREATE TABLE app_template.t (id bigint PRIMARY KEY, v int)" >/dev/null || fail "template"
at "$COORD" -c "SELECT count(*) FROM shardid.create_local_shards('app_template', ARRAY[5])" >/dev/null ||
	fail "create_local_shards with schema-based sharding on"
expect "$(at "$COORD" -c "SELECT count(*) FROM shardid.citus_distribute_shard('shard_0005', 5)" 2>&1 | head -1)" = \
	'ERROR:  schema "shard_0005" is a Citus tenant schema with tables that are not distributed' \
	"citus_distribute_shard on a tenant schema with local tables"

# create_shards() with schema-based sharding on makes distributed tenant
# schemas whose ids the trigger makes; every node routes by shard number
expect "$(at "$COORD" -c "SET client_min_messages = warning" \
	-c "SELECT string_agg(shard || ' ' || schema_name || ' ' || action, ',' ORDER BY shard) FROM shardid.create_shards('app_template', ARRAY[20, 21])")" = \
	"20 shard_0020 created,21 shard_0021 created" "create_shards with schema-based sharding on"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid IN ('shard_0020.t'::regclass, 'shard_0021.t'::regclass)")" = 2 \
	"create_shards' tables are Citus tables"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_class WHERE relname LIKE 't_id_seq%' AND relnamespace IN ('shard_0020'::regnamespace, 'shard_0021'::regnamespace)")" = 0 \
	"create_shards makes no sequence for tenant schemas"
expect "$(at "$COORD" -c "SHOW citus.enable_schema_based_sharding")" = on "schema-based sharding is on after create_shards"
at "$COORD" -c "CREATE ROLE plain2 LOGIN" -c "ALTER SCHEMA app_template OWNER TO plain2" -c "ALTER TABLE app_template.t OWNER TO plain2" >/dev/null
expect "$(PGUSER=plain2 PGHOST=$SHARDID_TMP PGPORT=$COORD PGDATABASE=app q -c "SET client_min_messages = error" -c "SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[22])" 2>&1 | head -1)" = \
	"ERROR:  permission denied to create Citus tenant schemas" "create_shards on Citus by a role that is no superuser"
at "$COORD" -c "ALTER SCHEMA app_template OWNER TO postgres" -c "ALTER TABLE app_template.t OWNER TO postgres" >/dev/null
for port in "$COORD" "$W1" "$W2"; do
	got=$(at "$port" -c "INSERT INTO shard_0021.t (v) VALUES (2) RETURNING shardid.id_shard(id)" \
		-c "SELECT shardid.shard_schema(20) || ' ' || shardid.id_schema(shardid.make_id(1000, 21, 0))")
	expect "$got" = "21
shard_0020 shard_0021" "insert and routing through port $port"
done

# a shard made by create_shards() with schema-based sharding off, then
# distributed
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[12])" >/dev/null ||
	fail "create_shards with schema-based sharding off"
expect "$(at "$COORD" -c "SET client_min_messages = warning" -c "SELECT string_agg(table_name || ' ' || id_column, ',') FROM shardid.citus_distribute_shard('shard_0012', 12)")" = \
	"t id" "citus_distribute_shard"
for port in "$COORD" "$W1" "$W2"; do
	got=$(at "$port" -c "INSERT INTO shard_0012.t (v) VALUES (2) RETURNING shardid.id_shard(id)")
	expect "$got" = 12 "insert into the distributed shard through port $port"
done
# citus_distribute_shard() runs no other role's code: a table of another
# role in the schema is refused
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" -c "CREATE SCHEMA shard_0030" \
	-c "CREATE TABLE shard_0030.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(30), v int)" \
	-c "ALTER TABLE shard_0030.t OWNER TO plain2" >/dev/null || fail "shard_0030"
expect "$(at "$COORD" -c "SELECT * FROM shardid.citus_distribute_shard('shard_0030', 30)" 2>&1 | head -1)" = \
	'ERROR:  schema "shard_0030" or its tables belong to role plain2' "citus_distribute_shard of another role's table"
# shardid-move leaves tenant schemas to citus_schema_move
out=$("$PG_BIN/shardid-move" --shard=20 --from="host=$SHARDID_TMP port=$COORD user=postgres dbname=app" \
	--to="host=$SHARDID_TMP port=$W1 user=postgres dbname=app" 2>&1)
status=$?
expect "$status" = 1 "shardid-move of a Citus tenant schema exits 1"
expect "$(grep -c 'schema "shard_0020" holds Citus tables on the --from server (t): Citus places and moves them; run SELECT citus_schema_move(.shard_0020., .<worker host>., <worker port>); on the coordinator instead; nothing was changed' <<<"$out")" = 1 \
	"shardid-move's refusal of a Citus tenant schema (got: $out)"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_dist_schema WHERE schemaid = 'shard_0012'::regnamespace")" = 1 \
	"shard_0012 is a tenant schema"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = 'shard_0012.t'::regclass")" = 1 \
	"shard_0012.t is a Citus table"

# a tenant table of a role that may not register shards: its trigger makes
# ids but claims no shard; citus_use_trigger() warns, citus_doctor() says so
got=$(at "$COORD" -c "CREATE TABLE tenant_8.p (id bigint PRIMARY KEY, v int)" -c "ALTER TABLE tenant_8.p OWNER TO plain2" \
	-c "SELECT shardid.citus_use_trigger('tenant_8.p', 8)" 2>&1 >/dev/null | head -1)
expect "$got" = "WARNING:  table tenant_8.p belongs to role plain2, which may not register shards" "citus_use_trigger's warning"
expect "$(at "$COORD" -F'|' -c "SELECT problem, object, fix FROM shardid.citus_doctor() WHERE problem LIKE 'tenant table%'")" = \
	"tenant table of a role that may not register shards|tenant_8.p|GRANT INSERT, DELETE ON shardid.shard_registry TO plain2; on every node, or give the table to a role that may register shards." \
	"citus_doctor on a tenant table of a role that may not register shards"
# the fix it names: then the table counts on every node
for port in "$COORD" "$W1" "$W2"; do
	at "$port" -c "GRANT INSERT, DELETE ON shardid.shard_registry TO plain2" >/dev/null || fail "GRANT on port $port"
done
expect "$(at "$COORD" -c "SELECT count(*) FROM shardid.citus_doctor() WHERE problem LIKE 'tenant table%'")" = 0 "citus_doctor after the GRANT"
for port in "$COORD" "$W1" "$W2"; do
	expect "$(at "$port" -c "SELECT count(*) FROM shardid.citus_tenants WHERE schema_name = 'tenant_8' AND table_name = 'p'")" = 1 \
		"tenant_8.p in citus_tenants on port $port after the GRANT"
done
finish
