#!/usr/bin/env bash
# test/citus/guard.sh: the guard rails at the moment it goes wrong, event
# trigger shardid_citus_guard on the coordinator:
#  * a table added to a tenant schema that create_shards() made, its id
#    bigint NOT NULL without DEFAULT, gets the set_id() trigger of the
#    schema's shard (NOTICE, exact text): inserts through every node give
#    ids of that shard, all distinct; so does a table of an application
#    role (the guard runs with its rights, and it may not run
#    citus_guard_ddl() itself), and a local table moved into the tenant
#    schema with ALTER TABLE ... SET SCHEMA; a superuser's statement on a
#    table of that role runs none of the role's planted objects (a set_id()
#    and an operator = in the tenant schema, first on the search_path);
#  * a table made in a tenant schema with a next_id(N) DEFAULT (what a user
#    writes first) loses the DEFAULT for the trigger of shard N, and a
#    second table of that schema without DEFAULT gets shard N too; the
#    doctor has nothing to say;
#  * a next_id() DEFAULT given later (ALTER TABLE) to a tenant table, with
#    or without the trigger, is refused with the exact message, and no
#    node has a DEFAULT on the table or its placements;
#  * add_shards() makes tenant schemas where schema-based sharding is on,
#    and plain schemas with local tables with distribute => false;
#  * a table made by a function (a DO block) is left alone, as Citus leaves
#    it local;
#  * a next_id() DEFAULT given to a table distributed by a column or to a
#    reference table (ALTER TABLE ... SET DEFAULT), and a set_id() trigger
#    created on one (citus.enable_unsafe_triggers on), are refused with the
#    exact message, DETAIL and HINT, and change nothing;
#  * next_id() on Citus's row-based model, whichever way it is written, is
#    refused with the exact message, DETAIL and HINT, and changes nothing:
#    create_distributed_table() and create_reference_table() of a table
#    with a next_id() DEFAULT, its own or its domain's; ALTER TABLE ... SET
#    DEFAULT in a DO block; on every node, an INSERT that runs a domain's
#    DEFAULT set after the distribution, one that calls next_id() itself,
#    one in a WITH, a COPY that leaves the id to the DEFAULT; on a table an
#    older shardid let through (its DEFAULT set by hand on every node), 9
#    clients through 3 nodes are all refused: no row, no repeated id (1.3,
#    one run: 1,800 rows, 14 ids repeated); ids given, by INSERT and COPY,
#    pass;
#  * no silent path, 9 clients through 3 nodes each (20 INSERTs of 10 rows):
#    a tenant table's domain DEFAULT refused at CREATE TABLE (and ALTER
#    TABLE ... SET SCHEMA into a tenant schema), and at every
#    INSERT when set later by ALTER DOMAIN; a tenant table's DEFAULT set in
#    a DO block or a function refused; a function of the user's that calls
#    next_id() as DEFAULT of a hash-distributed, a reference and a tenant
#    table refused at every INSERT (and COPY, INSERT ... SELECT); a set_id()
#    trigger made before create_distributed_table() or
#    create_reference_table(), and a next_id() DEFAULT at
#    create_distributed_table(t, NULL), refused; a Citus local table's
#    next_id() DEFAULT makes ids on the coordinator (no repeat) and is
#    refused through the workers; a worker that does not preload shardid
#    refuses too (its login trigger loads it).  On 1.3 every one of these
#    was accepted, and 13-31% of the ids repeated.
# On 1.2 (and 1.3 before the event trigger) the first INSERT into the added
# table failed on NOT NULL, the DEFAULT stayed and the doctor reported "id
# made where the statement arrives", and the DEFAULTs and the trigger were
# accepted.  Before the refusal of a later next_id() DEFAULT on a tenant
# table, the guard dropped it on the coordinator only: the workers kept it
# and ids routed by two nodes repeated (CI, duplicate key).  On 1.3
# create_distributed_table(), create_reference_table(), the DO block, every
# INSERT and the COPY were accepted.
. "$(dirname "$0")/../lib.sh" citus

citus_start || { fail "the Citus cluster did not start"; finish; }

# err SQL: the error (ERROR, DETAIL, HINT lines) of SQL on the coordinator
err() {
	PGHOST=$SHARDID_TMP PGPORT=$COORD PGUSER=postgres PGDATABASE=app \
		"$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=default -v SHOW_CONTEXT=never "$@" 2>&1 >/dev/null
}
# notices SQL: what psql prints on stderr (NOTICE and DETAIL lines)
notices() { err "$@"; }
doctor() { at "$COORD" -F'|' -c "SELECT problem, object, coalesce(node, '') FROM shardid.citus_doctor() ORDER BY 1, 2, 3"; }
# ids TABLE: rows, distinct ids, and the shards they decode to
ids() { at "$COORD" -c "SELECT count(*) || ' ' || count(DISTINCT id) || ' ' || coalesce(string_agg(DISTINCT shardid.id_shard(id)::text, ','), '') FROM $1"; }
# insert_everywhere TABLE: 100 rows through each node, at the same time
insert_everywhere() {
	local port pids=() pid bad=0
	for port in "$COORD" "$W1" "$W2"; do
		at "$port" -c "INSERT INTO $1 (v) SELECT generate_series(1, 100)" >/dev/null 2>"$SHARDID_TMP/ins.$port.err" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do wait "$pid" || bad=1; done
	[ $bad = 0 ] || fail "insert into $1: $(cat "$SHARDID_TMP"/ins.*.err)"
}
# set_id TABLE: the set_id() trigger's arguments on the coordinator, and the
# table's DEFAULTs
set_id() {
	at "$COORD" -c "SELECT coalesce((SELECT shard || ' ' || id_column FROM shardid.citus_tenants WHERE table_oid = '$1'::regclass), 'none')
	                       || ' default ' || coalesce((SELECT string_agg(pg_get_expr(adbin, adrelid), ',') FROM pg_attrdef WHERE adrelid = '$1'::regclass), 'none')"
}

# a tenant schema made by create_shards(), and a table added to it later
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE SCHEMA app_template" \
	-c "CREATE TABLE app_template.t (id bigint PRIMARY KEY, v int)" \
	-c "RESET citus.enable_schema_based_sharding" \
	-c "SET client_min_messages = warning" \
	-c "SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[20])" >/dev/null || { fail "setup of shard_0020"; finish; }
# add_shards(): tenant schemas where schema-based sharding is on, plain
# schemas with distribute => false
at "$COORD" -c "SET client_min_messages = warning" -c "CALL shardid.add_shards('app_template', '{21}')" >/dev/null ||
	fail "add_shards() of shard 21"
at "$COORD" -c "SET client_min_messages = warning" -c "CALL shardid.add_shards('app_template', '{22}', distribute => false)" >/dev/null ||
	fail "add_shards(distribute => false) of shard 22"
expect "$(at "$COORD" -c "SELECT string_agg(n.nspname || ':' || (s.schemaid IS NOT NULL)::text || ':' || coalesce(p.partmethod::text, 'local'), ' ' ORDER BY n.nspname)
                          FROM pg_namespace n LEFT JOIN pg_dist_schema s ON s.schemaid = n.oid
                          LEFT JOIN pg_dist_partition p ON p.logicalrelid = (n.nspname || '.t')::regclass
                          WHERE n.nspname IN ('shard_0021', 'shard_0022')")" = "shard_0021:true:n shard_0022:false:local" \
	"add_shards(): a tenant schema, and with distribute => false a plain one with a local table"
expect "$(at "$COORD" -c "SELECT string_agg(shard || ':' || schema_name, ' ' ORDER BY shard) FROM shardid.shard_registry WHERE shard IN (21, 22)")" = \
	"21:shard_0021 22:shard_0022" "add_shards() registered both"
expect "$(notices -c "CREATE TABLE shard_0020.late (id bigint PRIMARY KEY, v int)")" = \
	"NOTICE:  ids of table shard_0020.late are made by the shardid.set_id() trigger of shard 20, where its rows are stored
DETAIL:  Tenant schema shard_0020 makes ids of shard 20 in its column id, which this table has, without a DEFAULT: as shardid.citus_use_trigger('shard_0020.late', 20, 'id') does." \
	"the NOTICE of CREATE TABLE in a tenant schema"
expect "$(at "$COORD" -c "SELECT partmethod::text || repmodel::text FROM pg_dist_partition WHERE logicalrelid = 'shard_0020.late'::regclass")" = "ns" \
	"the late table is a tenant table"
expect "$(set_id shard_0020.late)" = "20 id default none" "the late table's trigger"
insert_everywhere shard_0020.late
expect "$(ids shard_0020.late)" = "300 300 20" "ids of the late table through every node"

# an application role's table: the guard runs with its rights
at "$COORD" -c "CREATE ROLE app_owner LOGIN" \
	-c "GRANT USAGE, CREATE ON SCHEMA shard_0020 TO app_owner" >/dev/null || fail "setup of app_owner"
expect "$(at "$COORD" -c "SELECT has_function_privilege('app_owner', 'shardid_internal.citus_guard_ddl()', 'EXECUTE')")" = f \
	"citus_guard_ddl() is not PUBLIC's"
PGHOST=$SHARDID_TMP PGPORT=$COORD PGUSER=app_owner PGDATABASE=app q -c "SET client_min_messages = warning" \
	-c "CREATE TABLE shard_0020.owned (id bigint NOT NULL, v int)" >/dev/null || fail "CREATE TABLE as app_owner"
expect "$(set_id shard_0020.owned)" = "none default none" "the table of a role that may not register shards is not in citus_tenants"
expect "$(at "$COORD" -c "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 'shard_0020.owned'::regclass AND tgname = 'shardid_set_id'")" = \
	"CREATE TRIGGER shardid_set_id BEFORE INSERT ON shard_0020.owned FOR EACH ROW EXECUTE FUNCTION shardid.set_id('20', 'id')" \
	"app_owner's table got the trigger"
insert_everywhere shard_0020.owned
expect "$(ids shard_0020.owned)" = "300 300 20" "ids of app_owner's table through every node"

# no code of another role runs with the rights of the superuser whose
# statement fires the guard: app_owner plants, in the tenant schema, a
# set_id() and an operator = of its own that record a superuser caller,
# and a table without ids whose NOT NULL a superuser then sets
at "$COORD" -c "CREATE TABLE public.pwned (who text)" -c "GRANT INSERT ON public.pwned TO PUBLIC" >/dev/null
PGHOST=$SHARDID_TMP PGPORT=$COORD PGUSER=app_owner PGDATABASE=app q -c "SET client_min_messages = warning" \
	-c "CREATE FUNCTION shard_0020.spy() RETURNS boolean LANGUAGE plpgsql AS \$\$BEGIN
	        IF (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN INSERT INTO public.pwned VALUES (current_user); END IF;
	        RETURN true; END\$\$" \
	-c "CREATE FUNCTION shard_0020.set_id() RETURNS trigger LANGUAGE plpgsql AS \$\$BEGIN PERFORM shard_0020.spy(); RETURN NEW; END\$\$" \
	-c "CREATE FUNCTION shard_0020.eq(oid, oid) RETURNS boolean LANGUAGE sql AS 'SELECT shard_0020.spy() AND \$1 OPERATOR(pg_catalog.=) \$2'" \
	-c "CREATE OPERATOR shard_0020.= (LEFTARG = oid, RIGHTARG = oid, FUNCTION = shard_0020.eq)" \
	-c "CREATE TABLE shard_0020.bait (id bigint, v int)" >/dev/null || fail "app_owner's plants"
at "$COORD" -c "SET client_min_messages = warning" -c "SET search_path = shard_0020, pg_catalog, public" \
	-c "ALTER TABLE shard_0020.bait ALTER COLUMN id SET NOT NULL" >/dev/null || fail "the superuser's ALTER TABLE"
expect "$(at "$COORD" -c "SELECT pg_get_triggerdef(oid) FROM pg_trigger WHERE tgrelid = 'shard_0020.bait'::regclass AND tgname = 'shardid_set_id'")" = \
	"CREATE TRIGGER shardid_set_id BEFORE INSERT ON shard_0020.bait FOR EACH ROW EXECUTE FUNCTION shardid.set_id('20', 'id')" \
	"the superuser's statement gave app_owner's table shardid's trigger"
expect "$(at "$COORD" -c "SELECT count(*) FROM public.pwned")" = 0 "code of app_owner run by the guard as the superuser"
at "$COORD" -c "DROP TABLE shard_0020.bait" >/dev/null

# a local table moved into the tenant schema
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.loose (id bigint PRIMARY KEY, v int)" >/dev/null || fail "setup of public.loose"
at "$COORD" -c "SET client_min_messages = warning" -c "ALTER TABLE public.loose SET SCHEMA shard_0020" >/dev/null ||
	fail "ALTER TABLE public.loose SET SCHEMA shard_0020"
expect "$(at "$COORD" -c "SELECT partmethod::text || repmodel::text FROM pg_dist_partition WHERE logicalrelid = 'shard_0020.loose'::regclass")" = "ns" \
	"the moved table is a tenant table"
expect "$(set_id shard_0020.loose)" = "20 id default none" "the moved table's trigger"
insert_everywhere shard_0020.loose
expect "$(ids shard_0020.loose)" = "300 300 20" "ids of the moved table through every node"

# a user's tenant schema, its first table with a next_id() DEFAULT
at "$COORD" -c "CREATE SCHEMA tenant_42" >/dev/null || fail "CREATE SCHEMA tenant_42"
expect "$(notices -c "CREATE TABLE tenant_42.orders (id bigint PRIMARY KEY DEFAULT shardid.next_id(42), v int)")" = \
	"NOTICE:  ids of table tenant_42.orders are made by the shardid.set_id() trigger of shard 42, where its rows are stored
DETAIL:  Its column id lost its DEFAULT, which called shardid.next_id() and which Citus would run on whichever node receives the INSERT: the nodes would repeat each other's ids." \
	"the NOTICE of a next_id() DEFAULT in a tenant schema"
expect "$(set_id tenant_42.orders)" = "42 id default none" "the DEFAULT replaced by the trigger"
at "$COORD" -c "SET client_min_messages = warning" -c "CREATE TABLE tenant_42.items (id bigint NOT NULL PRIMARY KEY, v int)" >/dev/null ||
	fail "CREATE TABLE tenant_42.items"
expect "$(set_id tenant_42.items)" = "42 id default none" "the schema's second table takes its shard from the first"
# a next_id() DEFAULT given later to a tenant table Citus has distributed:
# refused, as Citus sends the statement to the workers after the event
# trigger (a DEFAULT dropped by the guard stayed on every worker's copy,
# and an INSERT routed by a worker kept that worker's id: duplicates)
expect "$(err -c "ALTER TABLE tenant_42.orders ALTER COLUMN id SET DEFAULT shardid.next_id(42)")" = \
	"ERROR:  a DEFAULT that calls shardid.next_id() is refused on tenant table tenant_42.orders
DETAIL:  Citus runs the DEFAULT of column id on whichever node receives the INSERT: the nodes would repeat each other's ids. The ids of a tenant table are made where its rows are stored, by the shardid.set_id() trigger.
HINT:  Leave the column without a DEFAULT: the set_id() trigger of shard 42 makes its ids." \
	"ALTER TABLE ... SET DEFAULT next_id() on a tenant table with the trigger"
expect "$(set_id tenant_42.orders)" = "42 id default none" "the refused DEFAULT"
at "$COORD" -c "CREATE TABLE tenant_42.plain (id bigint, v int)" >/dev/null || fail "CREATE TABLE tenant_42.plain"
expect "$(err -c "ALTER TABLE tenant_42.plain ALTER COLUMN id SET DEFAULT shardid.next_id(42)")" = \
	"ERROR:  a DEFAULT that calls shardid.next_id() is refused on tenant table tenant_42.plain
DETAIL:  Citus runs the DEFAULT of column id on whichever node receives the INSERT: the nodes would repeat each other's ids. The ids of a tenant table are made where its rows are stored, by the shardid.set_id() trigger.
HINT:  Leave the column without a DEFAULT and install the trigger: SELECT shardid.citus_use_trigger('tenant_42.plain', 42, 'id');" \
	"ALTER TABLE ... SET DEFAULT next_id() on a tenant table without the trigger"
for port in "$COORD" "$W1" "$W2"; do
	expect "$(at "$port" -c "SELECT count(*) FROM pg_attrdef WHERE adrelid::regclass::text ~ '^tenant_42\.(orders|items|plain)'")" = 0 \
		"DEFAULTs of tenant_42's tables and their placements on port $port"
done
at "$COORD" -c "DROP TABLE tenant_42.plain" >/dev/null
insert_everywhere tenant_42.orders
insert_everywhere tenant_42.items
expect "$(ids tenant_42.orders)" = "300 300 42" "ids of tenant_42.orders through every node"
expect "$(ids tenant_42.items)" = "300 300 42" "ids of tenant_42.items through every node"

# a table made by a function: Citus leaves it local, so does the guard
at "$COORD" -c "DO \$\$BEGIN CREATE TABLE tenant_42.by_function (id bigint NOT NULL, v int); END\$\$" >/dev/null ||
	fail "CREATE TABLE in a DO block"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'tenant_42.by_function'::regclass")" = 0 \
	"no trigger on a table a function made"
at "$COORD" -c "DROP TABLE tenant_42.by_function" >/dev/null
# the doctor lists app_owner's table (its owner may not register shards), as
# it lists any such table; nothing else
expect "$(doctor)" = "tenant table of a role that may not register shards|shard_0020.owned|" "citus_doctor() after the guard"

# refusals on a hash-distributed and a reference table
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.events (id bigint NOT NULL, tenant_id int NOT NULL, v int, PRIMARY KEY (tenant_id, id))" \
	-c "SELECT create_distributed_table('public.events', 'tenant_id')" \
	-c "CREATE TABLE public.countries (id bigint PRIMARY KEY, name text)" \
	-c "SELECT create_reference_table('public.countries')" >/dev/null || { fail "setup of events and countries"; finish; }
hint="HINT:  For shardid's ids, use Citus schema-based sharding, a tenant schema per logical shard: shardid.add_shards(), shardid.citus_distribute_shard(). For this table, use a bigserial or identity column: Citus keeps their values unique across nodes."
expect "$(err -c "ALTER TABLE public.events ALTER COLUMN id SET DEFAULT shardid.next_id(5)")" = \
	"ERROR:  shardid does not serve table public.events, which Citus distributes by column \"tenant_id\"
DETAIL:  The DEFAULT of its column id calls shardid.next_id(), which Citus runs on whichever node receives the INSERT: the nodes would repeat each other's ids.
$hint" "a next_id() DEFAULT on a hash-distributed table"
expect "$(err -c "ALTER TABLE public.countries ALTER COLUMN id SET DEFAULT shardid.next_id(6)")" = \
	"ERROR:  shardid does not serve table public.countries, a Citus reference table
DETAIL:  The DEFAULT of its column id calls shardid.next_id(), which Citus runs on whichever node receives the INSERT: the nodes would repeat each other's ids.
$hint" "a next_id() DEFAULT on a reference table"
expect "$(err -c "SET citus.enable_unsafe_triggers = on" -c "CREATE TRIGGER t BEFORE INSERT ON public.events FOR EACH ROW EXECUTE FUNCTION shardid.set_id(5, 'id')")" = \
	"ERROR:  shardid does not serve table public.events, which Citus distributes by column \"tenant_id\"
DETAIL:  The rows of one shardid shard would live on the placements of many Citus shards, on several nodes, and each would make ids of that shard that repeat the others'. A shard's ids must all come from one server.
$hint" "a set_id() trigger on a hash-distributed table"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_attrdef WHERE adrelid IN ('public.events'::regclass, 'public.countries'::regclass)")" = 0 \
	"no DEFAULT after the refusals"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'public.events'::regclass AND NOT tgisinternal")" = 0 \
	"no trigger after the refusal"
# a sequence DEFAULT, what the HINT says, passes
at "$COORD" -c "CREATE SEQUENCE public.events_id_seq" \
	-c "ALTER TABLE public.events ALTER COLUMN id SET DEFAULT nextval('public.events_id_seq')" >/dev/null ||
	fail "a sequence DEFAULT on the hash-distributed table"

# next_id() on Citus's row-based model, whichever way it is written, is
# refused where it is made (the distribution, an ALTER TABLE in a DO block)
# and where it would run (every INSERT and COPY, on every node)
refusal() {	# refusal TABLE KIND ARRIVES [COLUMN]: the exact error
	local head
	if [ "$2" = reference ]; then
		head="ERROR:  shardid does not serve table $1, a Citus reference table"
	else
		head="ERROR:  shardid does not serve table $1, which Citus distributes by column \"tenant_id\""
	fi
	if [ -n "${4:-}" ]; then
		printf '%s\nDETAIL:  The DEFAULT of its column %s calls shardid.next_id(), which Citus runs on whichever node receives the %s: the nodes would repeat each other'"'"'s ids.\n%s' "$head" "$4" "$3" "$hint"
	else
		printf '%s\nDETAIL:  The %s calls shardid.next_id(), which Citus runs on whichever node receives it: the nodes would repeat each other'"'"'s ids.\n%s' "$head" "$3" "$hint"
	fi
}
# err_at PORT SQL...: as err, on the node on PORT
err_at() {
	local port=$1
	shift
	PGHOST=$SHARDID_TMP PGPORT=$port PGUSER=postgres PGDATABASE=app \
		"$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=default -v SHOW_CONTEXT=never "$@" 2>&1 >/dev/null
}
distributed() { at "$COORD" -c "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = '$1'::regclass"; }
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.clicks (id bigint NOT NULL DEFAULT shardid.next_id(7), tenant_id int NOT NULL, PRIMARY KEY (tenant_id, id))" \
	-c "CREATE TABLE public.cities (id bigint PRIMARY KEY DEFAULT shardid.next_id(8), name text)" \
	-c "CREATE DOMAIN public.view_id AS bigint DEFAULT shardid.next_id(9)" \
	-c "CREATE TABLE public.views (id public.view_id NOT NULL, tenant_id int NOT NULL, PRIMARY KEY (tenant_id, id))" >/dev/null ||
	fail "setup of clicks, cities and views"
# a DEFAULT made before create_distributed_table(), create_reference_table()
expect "$(err -c "SELECT create_distributed_table('public.clicks', 'tenant_id')")" = "$(refusal public.clicks hash INSERT id)" \
	"create_distributed_table() of a table with a next_id() DEFAULT"
expect "$(err -c "SELECT create_reference_table('public.cities')")" = "$(refusal public.cities reference INSERT id)" \
	"create_reference_table() of a table with a next_id() DEFAULT"
# a domain's DEFAULT
expect "$(err -c "SELECT create_distributed_table('public.views', 'tenant_id')")" = "$(refusal public.views hash INSERT id)" \
	"create_distributed_table() of a table whose domain's DEFAULT calls next_id()"
expect "$(distributed public.clicks) $(distributed public.cities) $(distributed public.views)" = "0 0 0" "the refused tables stay local"
# after the distribution: an ALTER TABLE in a DO block, a domain's DEFAULT
at "$COORD" -c "ALTER TABLE public.clicks ALTER COLUMN id DROP DEFAULT" \
	-c "SELECT create_distributed_table('public.clicks', 'tenant_id')" \
	-c "ALTER DOMAIN public.view_id DROP DEFAULT" \
	-c "SELECT create_distributed_table('public.views', 'tenant_id')" >/dev/null || fail "distribution of clicks and views"
expect "$(err -c "DO \$\$BEGIN ALTER TABLE public.clicks ALTER COLUMN id SET DEFAULT shardid.next_id(7); END\$\$")" = \
	"$(refusal public.clicks hash INSERT id)" "ALTER TABLE ... SET DEFAULT next_id() in a DO block"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_attrdef WHERE adrelid = 'public.clicks'::regclass")" = 0 "no DEFAULT after the DO block"
at "$COORD" -c "ALTER DOMAIN public.view_id SET DEFAULT shardid.next_id(9)" >/dev/null || fail "ALTER DOMAIN ... SET DEFAULT"
for port in "$COORD" "$W1" "$W2"; do
	expect "$(err_at "$port" -c "INSERT INTO public.views (tenant_id) VALUES (1)")" = "$(refusal public.views hash INSERT id)" \
		"INSERT into a table whose domain's DEFAULT calls next_id(), through port $port"
done
# a next_id() the statement calls itself
expect "$(err -c "INSERT INTO public.clicks (id, tenant_id) VALUES (shardid.next_id(7), 1)")" = "$(refusal public.clicks hash INSERT)" \
	"INSERT ... VALUES (shardid.next_id(7), ...) into a hash-distributed table"
# a table that an older shardid let through (its DEFAULT set on every node
# by hand): 9 clients through 3 nodes are refused, no id repeats
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.legacy (id bigint NOT NULL, tenant_id int NOT NULL)" \
	-c "SELECT create_distributed_table('public.legacy', 'tenant_id')" \
	-c "CREATE TABLE public.legacy_ref (id bigint NOT NULL, v int)" \
	-c "SELECT create_reference_table('public.legacy_ref')" >/dev/null || fail "setup of public.legacy"
for port in "$COORD" "$W1" "$W2"; do
	at "$port" -c "SET citus.enable_ddl_propagation = off" \
		-c "ALTER TABLE public.legacy ALTER COLUMN id SET DEFAULT shardid.next_id(11)" \
		-c "ALTER TABLE public.legacy_ref ALTER COLUMN id SET DEFAULT shardid.next_id(12)" >/dev/null ||
		fail "the DEFAULT by hand on port $port"
done
pids=()
for port in "$COORD" "$COORD" "$COORD" "$W1" "$W1" "$W1" "$W2" "$W2" "$W2"; do
	err_at "$port" -c "INSERT INTO public.legacy (tenant_id) SELECT g % 16 FROM generate_series(1, 200) g" >"$SHARDID_TMP/client.${#pids[@]}" &
	pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
want=$(refusal public.legacy hash INSERT id)
for i in "${!pids[@]}"; do
	expect "$(cat "$SHARDID_TMP/client.$i")" = "$want" "client $i of 9 inserting into public.legacy"
done
expect "$(at "$COORD" -c "SELECT count(*) || ' rows, ' || (count(*) - count(DISTINCT id)) || ' repeats' FROM public.legacy")" = "0 rows, 0 repeats" \
	"9 clients through 3 nodes"
expect "$(err_at "$W1" -c "INSERT INTO public.legacy_ref (v) VALUES (1)")" = "$(refusal public.legacy_ref reference INSERT id)" \
	"INSERT into a reference table with a next_id() DEFAULT through a worker"
expect "$(err_at "$W2" -c "WITH w AS (INSERT INTO public.legacy (tenant_id) VALUES (1) RETURNING id) SELECT count(*) FROM w")" = "$want" \
	"an INSERT in a WITH"
expect "$(printf '1\n' | err_at "$W2" -c "COPY public.legacy (tenant_id) FROM STDIN")" = "$(refusal public.legacy hash COPY id)" \
	"COPY that leaves the id to its next_id() DEFAULT"
# ids given are not refused, nor a COPY of every column
at "$W1" -c "INSERT INTO public.legacy (id, tenant_id) VALUES (1, 1)" >/dev/null || fail "INSERT with an id given"
printf '2\t2\n' | at "$W2" -c "COPY public.legacy FROM STDIN" >/dev/null || fail "COPY with the ids given"
expect "$(at "$COORD" -c "SELECT string_agg(id::text, ',' ORDER BY id) FROM public.legacy")" = "1,2" "rows with ids given"
expect "$(doctor)" = "shardid on a reference table|public.legacy_ref.id|
shardid on a table distributed by a column|public.legacy.id|
shardid on a table distributed by a column|public.views.id|
tenant table of a role that may not register shards|shard_0020.owned|" "the doctor reports the tables an older shardid let through"

# no silent path: next_id() written another way, for a table whose ids it
# would make on whichever node receives the INSERT.  nine TABLE COLUMN: 9
# clients, 3 through each node, each 20 INSERTs of 10 rows (VALUES: Citus
# evaluates the DEFAULT where the statement arrives; 1.3 repeated 13-31% of
# the ids of every case below); client i's errors in nine.i
nine() {
	local pids=() i=0 port
	for i in $(seq 20); do echo "INSERT INTO $1 ($2) VALUES (1), (2), (3), (4), (5), (6), (7), (8), (9), (10);"; done >"$SHARDID_TMP/nine.sql"
	i=0
	for port in "$COORD" "$COORD" "$COORD" "$W1" "$W1" "$W1" "$W2" "$W2" "$W2"; do
		err_at "$port" <"$SHARDID_TMP/nine.sql" 2>&1 | sed 's/^psql:<stdin>:[0-9]*: //' >"$SHARDID_TMP/nine.$i" &
		pids+=($!)
		i=$((i + 1))
	done
	wait "${pids[@]}"
}
# nine_refused TABLE COLUMN WANT: every client refused with WANT, no row
nine_refused() {
	local i
	nine "$1" "$2"
	for i in 0 1 2 3 4 5 6 7 8; do
		expect "$(cat "$SHARDID_TMP/nine.$i")" = "$3" "client $i of 9 inserting into $1"
	done
	expect "$(at "$COORD" -c "SELECT count(*) FROM $1")" = 0 "rows of $1 after 9 clients"
}
tenant_default() {	# tenant_default TABLE SHARD: the refusal of a DEFAULT on a tenant table
	printf '%s\n%s\n%s' "ERROR:  a DEFAULT that calls shardid.next_id() is refused on tenant table $1" \
		"DETAIL:  Citus runs the DEFAULT of column id on whichever node receives the INSERT: the nodes would repeat each other's ids. The ids of a tenant table are made where its rows are stored, by the shardid.set_id() trigger." \
		"HINT:  Make column id a bigint without a DEFAULT, and install the trigger: SELECT shardid.citus_use_trigger('$1', $2, 'id');"
}
tenant_call() {	# tenant_call TABLE: the refusal of a call (a function's) on a tenant table
	printf '%s\n%s\n%s' "ERROR:  a call of shardid.next_id() is refused on tenant table $1" \
		"DETAIL:  The INSERT calls shardid.next_id(), which Citus runs on whichever node receives it: the nodes would repeat each other's ids. The ids of a tenant table are made where its rows are stored, by the shardid.set_id() trigger." \
		"HINT:  Call shardid.next_id() nowhere in the statement, nor in its DEFAULTs' functions: the shardid.set_id() trigger makes the ids (shardid.citus_use_trigger())."
}
# a. a tenant table: a domain's DEFAULT, at CREATE TABLE (refused) and set
# later by ALTER DOMAIN (no event trigger: every INSERT refused); a DEFAULT
# set in a DO block or a function
at "$COORD" -c "CREATE DOMAIN public.tenant_id AS bigint DEFAULT shardid.next_id(5)" \
	-c "CREATE DOMAIN public.later_id AS bigint" -c "CREATE SCHEMA tenant_5" >/dev/null || fail "setup of the domains"
expect "$(err -c "CREATE TABLE tenant_5.by_domain (id public.tenant_id NOT NULL, v int)")" = "$(tenant_default tenant_5.by_domain 5)" \
	"CREATE TABLE in a tenant schema, its id's domain DEFAULT calls next_id()"
expect "$(at "$COORD" -c "SELECT count(*) FROM pg_class WHERE relname = 'by_domain'")" = 0 "the refused table"
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.moving (id public.tenant_id NOT NULL, v int)" >/dev/null || fail "setup of public.moving"
expect "$(err -c "ALTER TABLE public.moving SET SCHEMA tenant_5")" = "$(tenant_default tenant_5.moving 5)" \
	"ALTER TABLE ... SET SCHEMA into a tenant schema, its id's domain DEFAULT calls next_id()"
expect "$(at "$COORD" -c "SELECT relnamespace::regnamespace FROM pg_class WHERE relname = 'moving'")" = public "the refused move"
at "$COORD" -c "CREATE TABLE tenant_5.later (id public.later_id NOT NULL, v int)" \
	-c "ALTER DOMAIN public.later_id SET DEFAULT shardid.next_id(5)" >/dev/null || fail "ALTER DOMAIN ... SET DEFAULT of a tenant table's column"
nine_refused tenant_5.later v "$(tenant_default tenant_5.later 5)"
at "$COORD" -c "CREATE TABLE tenant_5.in_do (id bigint NOT NULL, v int)" \
	-c "CREATE FUNCTION public.give_default() RETURNS void LANGUAGE plpgsql AS \$\$BEGIN ALTER TABLE tenant_5.in_do ALTER COLUMN id SET DEFAULT shardid.next_id(5); END\$\$" >/dev/null ||
	fail "setup of tenant_5.in_do"
expect "$(err -c "DO \$\$BEGIN ALTER TABLE tenant_5.in_do ALTER COLUMN id SET DEFAULT shardid.next_id(5); END\$\$")" = "$(tenant_default tenant_5.in_do 5)" \
	"ALTER TABLE ... SET DEFAULT next_id() of a tenant table in a DO block"
expect "$(err -c "SELECT public.give_default()")" = "$(tenant_default tenant_5.in_do 5)" \
	"ALTER TABLE ... SET DEFAULT next_id() of a tenant table in a function"
for port in "$COORD" "$W1" "$W2"; do
	expect "$(at "$port" -c "SELECT count(*) FROM pg_attrdef WHERE adrelid::regclass::text LIKE 'tenant_5.in_do%'")" = 0 \
		"no DEFAULT on tenant_5.in_do or its placement on port $port"
done
# b. a function of the user's that calls next_id() as DEFAULT: the DDL
# cannot see into it; every INSERT and COPY that runs it is refused where
# it arrives, on every node
at "$COORD" -c "CREATE FUNCTION public.my_id() RETURNS bigint LANGUAGE sql AS 'SELECT shardid.next_id(5)'" \
	-c "CREATE FUNCTION public.my_id_pl() RETURNS bigint LANGUAGE plpgsql AS 'BEGIN RETURN shardid.next_id(5); END'" \
	-c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.wrapped (id bigint NOT NULL DEFAULT public.my_id(), tenant_id int NOT NULL)" \
	-c "SELECT create_distributed_table('public.wrapped', 'tenant_id')" \
	-c "CREATE TABLE public.wrapped_ref (id bigint NOT NULL DEFAULT public.my_id_pl(), v int)" \
	-c "SELECT create_reference_table('public.wrapped_ref')" \
	-c "RESET citus.enable_schema_based_sharding" \
	-c "CREATE TABLE tenant_5.wrapped (id bigint NOT NULL DEFAULT public.my_id(), v int)" >/dev/null ||
	fail "setup of the tables whose DEFAULT is a function that calls next_id()"
nine_refused public.wrapped tenant_id "$(refusal public.wrapped hash INSERT)"
nine_refused public.wrapped_ref v "$(refusal public.wrapped_ref reference INSERT)"
nine_refused tenant_5.wrapped v "$(tenant_call tenant_5.wrapped)"
expect "$(printf '1\n' | err_at "$W1" -c "COPY public.wrapped (tenant_id) FROM STDIN")" = "$(refusal public.wrapped hash COPY)" \
	"COPY that runs a function's next_id(), through a worker"
expect "$(err_at "$W2" -c "INSERT INTO public.wrapped (id, tenant_id) SELECT public.my_id(), 1")" = "$(refusal public.wrapped hash INSERT)" \
	"INSERT ... SELECT of a function that calls next_id()"
at "$W2" -c "INSERT INTO public.wrapped (id, tenant_id) VALUES (1, 1)" >/dev/null || fail "an id given beside a function's DEFAULT"
# c. a set_id() trigger created before the distribution
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.triggered (id bigint NOT NULL, tenant_id int NOT NULL)" \
	-c "CREATE TRIGGER shardid_set_id BEFORE INSERT ON public.triggered FOR EACH ROW EXECUTE FUNCTION shardid.set_id(5, 'id')" >/dev/null ||
	fail "setup of public.triggered"
expect "$(err -c "SET citus.enable_unsafe_triggers = on" -c "SELECT create_distributed_table('public.triggered', 'tenant_id')")" = \
	"ERROR:  shardid does not serve table public.triggered, which Citus distributes by column \"tenant_id\"
DETAIL:  The rows of one shardid shard would live on the placements of many Citus shards, on several nodes, and each would make ids of that shard that repeat the others'. A shard's ids must all come from one server.
$hint" "create_distributed_table() of a table with a set_id() trigger"
expect "$(err -c "SET citus.enable_unsafe_triggers = on" -c "SELECT create_reference_table('public.triggered')")" = \
	"ERROR:  shardid does not serve table public.triggered, a Citus reference table
DETAIL:  Citus keeps a copy of a reference table on every node, and each copy would make its own ids for the same rows. A shard's ids must all come from one server.
$hint" "create_reference_table() of a table with a set_id() trigger"
expect "$(distributed public.triggered)" = 0 "the table with the trigger stays local"
# a table distributed without a column: one shard, as a tenant table's
expect "$(err -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.single (id bigint NOT NULL DEFAULT shardid.next_id(5), v int)" \
	-c "SELECT create_distributed_table('public.single', NULL)")" = \
	"ERROR:  a DEFAULT that calls shardid.next_id() is refused on Citus single-shard table public.single
DETAIL:  Citus runs the DEFAULT of column id on whichever node receives the INSERT: the nodes would repeat each other's ids. The ids of a Citus single-shard table are made where its rows are stored, by the shardid.set_id() trigger.
HINT:  Make column id a bigint without a DEFAULT, and install the trigger: SELECT shardid.citus_use_trigger('public.single', 5, 'id');" \
	"create_distributed_table(..., NULL) of a table with a next_id() DEFAULT"
# d. a Citus local table: its rows are the coordinator's, which makes its
# ids; a worker's INSERT is refused
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE TABLE public.loc (id bigint NOT NULL DEFAULT shardid.next_id(5), v int)" \
	-c "SELECT citus_add_local_table_to_metadata('public.loc')" >/dev/null || fail "setup of the Citus local table"
nine public.loc v
want="ERROR:  shardid.next_id() is refused on Citus local table public.loc on a worker
DETAIL:  The DEFAULT of its column id calls shardid.next_id(): the rows of a Citus local table are stored on the coordinator, and ids this worker made would repeat the coordinator's.
HINT:  Run the INSERT on the coordinator."
expect "$(cat "$SHARDID_TMP"/nine.[012])" = "" "the coordinator's clients of the Citus local table"
for i in 3 4 5 6 7 8; do
	expect "$(cat "$SHARDID_TMP/nine.$i")" = "$want" "worker client $i of 9 inserting into the Citus local table"
done
expect "$(at "$COORD" -c "SELECT count(*) || ' rows, ' || (count(*) - count(DISTINCT id)) || ' repeats, shards ' || string_agg(DISTINCT shardid.id_shard(id)::text, ',') FROM public.loc")" = \
	"600 rows, 0 repeats, shards 5" "the Citus local table's ids, all made on the coordinator"
# e. a worker that does not preload shardid: its login event trigger loads
# the library, whose hooks refuse as on the others
cluster_conf w2 "shared_preload_libraries = 'citus'"
cluster_stop w2 && citus_node_start w2 || fail "restart of w2 without preloading shardid"
expect "$(at "$W2" -c "SHOW shared_preload_libraries")" = citus "w2 does not preload shardid"
expect "$(err_at "$W2" -c "INSERT INTO tenant_5.wrapped (v) VALUES (1)")" = "$(tenant_call tenant_5.wrapped)" \
	"a function's next_id() for a tenant table, through a worker without preloading"
expect "$(err_at "$W2" -c "INSERT INTO public.legacy (tenant_id) VALUES (1)")" = "$(refusal public.legacy hash INSERT id)" \
	"a next_id() DEFAULT on a hash-distributed table, through a worker without preloading"
finish
