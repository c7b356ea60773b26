#!/usr/bin/env bash
# test/citus/distributed.sh: shardid serves Citus tenant schemas only, and
# says so where a Citus user goes next.  One shardid shard's ids
# must all come from one server; a table that Citus distributes by a column
# keeps one shard's rows on many placements, and a reference table has a
# copy on every node.  So:
#  * shardid.citus_use_trigger() refuses a hash-distributed table (also
#    with citus.enable_unsafe_triggers on) and a reference table, with the
#    exact message, DETAIL and HINT, and changes nothing;
#  * citus_doctor() (and doctor(), which includes it) reports a next_id()
#    DEFAULT on a hash-distributed table, a set_id() trigger on one (made
#    before create_distributed_table()), and a next_id() DEFAULT on a
#    reference table as unsupported, never recommending
#    citus_use_trigger(); the SQL of its fix works and gives ids that
#    repeat nowhere, through every node;
#  * a table added to a tenant schema made by create_shards(), with no
#    DEFAULT, its trigger dropped: the INSERT fails, and citus_doctor()
#    names the citus_use_trigger() call that makes its ids.
# On 1.2 all of these fail: citus_use_trigger() accepted both tables,
# citus_doctor() recommended citus_use_trigger() for the DEFAULT, was silent
# on the trigger and on the reference table, and on the new tenant table.
. "$(dirname "$0")/../lib.sh" citus

citus_start || { fail "the Citus cluster did not start"; finish; }
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE SEQUENCE public.events_seq" \
	-c "CREATE TABLE public.events (id bigint NOT NULL, tenant_id int NOT NULL, v int, PRIMARY KEY (tenant_id, id))" \
	-c "SELECT create_distributed_table('public.events', 'tenant_id')" \
	-c "CREATE TABLE public.countries (id bigint PRIMARY KEY, name text)" \
	-c "SELECT create_reference_table('public.countries')" >/dev/null || { fail "setup"; finish; }
# default_by_hand TABLE DEFAULT: a next_id() DEFAULT as an older shardid let
# one through (create_distributed_table() of a table that had it); shardid
# refuses it now (test/citus/guard.sh), but for Citus's own steps
default_by_hand() {
	at "$COORD" -c "SET citus.enable_ddl_propagation = off" \
		-c "ALTER TABLE $1 ALTER COLUMN id SET DEFAULT $2" >/dev/null || fail "the DEFAULT of $1 by hand"
}
default_by_hand public.events "shardid.next_id(5, nextval('public.events_seq'))"

# err SQL: the error (ERROR, DETAIL, HINT lines) of SQL on the coordinator
err() {
	PGHOST=$SHARDID_TMP PGPORT=$COORD PGUSER=postgres PGDATABASE=app \
		"$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=default -v SHOW_CONTEXT=never "$@" 2>&1 >/dev/null
}
hint="HINT:  For shardid's ids, use Citus schema-based sharding, a tenant schema per logical shard: shardid.add_shards(), shardid.citus_distribute_shard(). For this table, use a bigserial or identity column: Citus keeps their values unique across nodes."

# citus_use_trigger() refuses both, whatever citus.enable_unsafe_triggers says
want="ERROR:  shardid does not serve table public.events, which Citus distributes by column \"tenant_id\"
DETAIL:  The rows of one shardid shard would live on the placements of many Citus shards, on several nodes, and each would make ids of that shard that repeat the others'. A shard's ids must all come from one server.
$hint"
expect "$(err -c "SELECT shardid.citus_use_trigger('public.events', 5)")" = "$want" "citus_use_trigger() on a hash-distributed table"
expect "$(err -c "SET citus.enable_unsafe_triggers = on" -c "SELECT shardid.citus_use_trigger('public.events', 5)")" = "$want" \
	"citus_use_trigger() on a hash-distributed table, unsafe triggers on"
want="ERROR:  shardid does not serve table public.countries, a Citus reference table
DETAIL:  Citus keeps a copy of a reference table on every node, and each copy would make its own ids for the same rows. A shard's ids must all come from one server.
$hint"
expect "$(err -c "SELECT shardid.citus_use_trigger('public.countries', 6)")" = "$want" "citus_use_trigger() on a reference table"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_trigger WHERE tgrelid IN ('public.events'::regclass, 'public.countries'::regclass) AND NOT tgisinternal")" = 0 \
	"no trigger after the refusals"
expect "$(at "$COORD" -c "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'public.events'::regclass")" = \
	"shardid.next_id(5, nextval('events_seq'::regclass))" "the DEFAULT is kept after the refusal"

# citus_doctor(): the DEFAULT on the hash-distributed table
doctor() { at "$COORD" -F'|' -c "SELECT problem, object, coalesce(node, '') FROM shardid.citus_doctor() ORDER BY 1, 2, 3"; }
expect "$(doctor)" = "shardid on a table distributed by a column|public.events.id|" "citus_doctor() on a next_id() DEFAULT of a hash-distributed table"
expect "$(at "$COORD" -c "SELECT detail FROM shardid.citus_doctor()")" = \
	"Citus distributes public.events by column tenant_id (hash): the rows of shard 5 live on the placements of many Citus shards, and its DEFAULT calls shardid.next_id(5) on whichever node receives the INSERT; nodes repeat each other's ids. shardid does not serve such tables." \
	"citus_doctor()'s detail"
fix=$(at "$COORD" -c "SELECT fix FROM shardid.citus_doctor()")
expect "$fix" = \
	"Give the column Citus's own ids, unique across nodes: CREATE SEQUENCE public.events_id_seq; ALTER TABLE public.events ALTER COLUMN id SET DEFAULT pg_catalog.nextval('public.events_id_seq'); (not shardid.citus_use_trigger(), which refuses this table). For shardid's ids, use a Citus tenant schema per logical shard: CALL shardid.add_shards(), shardid.citus_distribute_shard()." \
	"citus_doctor()'s fix"
expect "$(at "$COORD" -F'|' -c "SELECT problem, object FROM shardid.doctor() WHERE problem LIKE 'shardid on%'")" = \
	"shardid on a table distributed by a column|public.events.id" "doctor() includes the row"

# the fix's SQL works; then ids made through every node repeat nowhere
sql=${fix#*nodes: }
sql=${sql% (not *}
at "$COORD" -c "${sql%%; ALTER*}" -c "ALTER ${sql#*; ALTER }" >/dev/null || fail "the fix's SQL: $sql"
for port in "$COORD" "$W1" "$W2"; do
	at "$port" -c "INSERT INTO public.events (tenant_id, v) SELECT g % 16, g FROM generate_series(1, 300) g" >/dev/null ||
		fail "insert through port $port after the fix"
done
expect "$(at "$COORD" -c "SELECT count(*) || ' ' || count(DISTINCT id) FROM public.events")" = "900 900" "ids after the fix"
expect "$(doctor)" = "" "citus_doctor() after the fix"

# a set_id() trigger that 1.2's citus_use_trigger() put on a local table,
# distributed afterwards (refused since 1.4: made here on the distributed
# table with DDL propagation off): reported, with the trigger's DROP in the
# fix, and left out of the placement checks
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.clicks (id bigint, tenant_id int NOT NULL, v int)" \
	-c "SELECT create_distributed_table('public.clicks', 'tenant_id')" \
	-c "SET citus.enable_ddl_propagation = off" \
	-c "CREATE TRIGGER shardid_set_id BEFORE INSERT ON public.clicks FOR EACH ROW EXECUTE FUNCTION shardid.set_id('6', 'id')" >/dev/null ||
	fail "setup of public.clicks"
expect "$(doctor)" = "shardid on a table distributed by a column|public.clicks.id|" "citus_doctor() on a set_id() trigger of a hash-distributed table"
expect "$(at "$COORD" -F'|' -c "SELECT detail, fix FROM shardid.citus_doctor()")" = \
	"Citus distributes public.clicks by column tenant_id (hash): the rows of shard 6 live on the placements of many Citus shards, and its set_id() trigger makes ids of shard 6 on every node that holds a copy; they repeat each other's ids. shardid does not serve such tables.|DROP TRIGGER shardid_set_id ON public.clicks; then give the column Citus's own ids, unique across nodes: CREATE SEQUENCE public.clicks_id_seq; ALTER TABLE public.clicks ALTER COLUMN id SET DEFAULT pg_catalog.nextval('public.clicks_id_seq');. For shardid's ids, use a Citus tenant schema per logical shard: CALL shardid.add_shards(), shardid.citus_distribute_shard()." \
	"citus_doctor()'s detail and fix for the trigger"
at "$COORD" -c "DROP TABLE public.clicks" >/dev/null

# a next_id() DEFAULT on a reference table (by hand: shardid refuses it at
# create_reference_table() and ALTER TABLE, test/citus/guard.sh)
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.regions (id bigint PRIMARY KEY, name text)" \
	-c "SELECT create_reference_table('public.regions')" >/dev/null || fail "setup of the reference table"
default_by_hand public.regions "shardid.next_id(6, nextval('public.events_seq'))"
expect "$(doctor)" = "shardid on a reference table|public.regions.id|" "citus_doctor() on a next_id() DEFAULT of a reference table"
expect "$(at "$COORD" -c "SELECT detail FROM shardid.citus_doctor()")" = \
	"public.regions is a Citus reference table, copied to every node, and its DEFAULT calls shardid.next_id(6) on whichever node receives the INSERT; nodes repeat each other's ids. shardid does not serve such tables." \
	"citus_doctor()'s detail for the reference table"
expect "$(at "$COORD" -c "SELECT fix FROM shardid.citus_doctor()" | grep -c "citus_use_trigger('")" = 0 "no citus_use_trigger() call in the fix"
at "$COORD" -c "DROP TABLE public.regions" >/dev/null

# a table added later to a tenant schema that create_shards() made, whose
# trigger (which event trigger shardid_citus_guard gave it, test/citus/guard.sh)
# was dropped: the INSERT fails, the doctor names the call that makes its ids
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE SCHEMA app_template" \
	-c "CREATE TABLE app_template.t (id bigint PRIMARY KEY, v int)" \
	-c "RESET citus.enable_schema_based_sharding" \
	-c "SET client_min_messages = warning" \
	-c "SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[20])" \
	-c "CREATE TABLE shard_0020.late (id bigint PRIMARY KEY, v int)" \
	-c "DROP TRIGGER shardid_set_id ON shard_0020.late" >/dev/null || fail "setup of shard_0020"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = 'shard_0020.late'::regclass")" = 1 \
	"the late table is a tenant table"
expect "$(err -c "INSERT INTO shard_0020.late (v) VALUES (1)" | head -1)" != "" "an INSERT into the late table fails"
expect "$(doctor)" = "tenant table without ids|shard_0020.late|" "citus_doctor() on a tenant table without ids"
fix=$(at "$COORD" -F'|' -c "SELECT detail, fix FROM shardid.citus_doctor()")
expect "$fix" = "Tenant schema shard_0020 makes ids of shard 20 with the set_id() trigger, but this table has neither the trigger nor a DEFAULT on its column id: an INSERT without an id fails (null value in column id).|SELECT shardid.citus_use_trigger('shard_0020.late', 20, 'id');" \
	"citus_doctor()'s detail and fix for the late table"
at "$COORD" -c "${fix#*|}" >/dev/null || fail "the fix for the late table"
for port in "$COORD" "$W1" "$W2"; do
	at "$port" -c "INSERT INTO shard_0020.late (v) SELECT generate_series(1, 100)" >/dev/null ||
		fail "insert into the late table through port $port"
done
expect "$(at "$COORD" -c "SELECT count(DISTINCT id) || ' ' || min(shardid.id_shard(id)) || ' ' || max(shardid.id_shard(id)) FROM shard_0020.late")" = \
	"300 20 20" "ids of the late table"
expect "$(doctor)" = "" "citus_doctor() at the end"
finish
