#!/usr/bin/env bash
# Paths that bring a shard's rows in without a key or index being made
# after them: each must either raise the floor by itself or make the shard
# refuse ids, naming the step; never a new id at or below a restored one.
#
# Server a, its clock 40 s ahead of the real one, holds shard 5 in schema
# s_005 (sorts before "shardid": a whole-database dump restores its rows
# before the registry's) and shard 9 in tenant_9 (after it), one table
# each, PRIMARY KEY (id), registered while empty, then 2,000 rows each.
# Each path runs on a fresh server b (right clock, shardid.max_lead_ms =
# 60000, so that the restored ids lie within what strict mode follows):
#   schema_data     pg_restore -s, then pg_restore -a of the whole dump into
#                   a new database (the two-step restore: schema, then data)
#   schema_data_dt  the same with pg_restore -a --disable-triggers
#   data            both schemas registered (empty), then pg_restore -a -n
#                   s_005 -n tenant_9 (no --disable-triggers: pg_restore's
#                   default, and what COPY of a's rows does)
#   set_schema      both registered (empty); a's rows copied into tables of
#                   schema incoming, which are then moved in with ALTER
#                   TABLE ... SET SCHEMA
#   rename          both registered (empty); a's rows copied into schemas
#                   s_005_new and tenant_9_new, then swapped in with ALTER
#                   SCHEMA ... RENAME (the registry names schemas by name)
# Then b makes 2,000 ids per table.  Exit 0: on every path, none of them
# sorts at or below the newest restored id of its table, or the INSERT is
# refused with a message naming a shardid step.  schema_data and data are
# the README's "rows written with explicit ids into an existing table" (no
# DDL follows their rows): the COPYs raise the floors at their end, in a
# session that loaded shardid (preloaded, or on PostgreSQL 17+ without
# preloading by the login event trigger shardid_load), so no path needs a
# step and the full doctor() names no shard on any.
#
# Found on 108764a: every path but schema_data_dt's shard 9 gave 2,000 of
# 2,000 new ids below the restored ones in at least one table, with no
# message; schema_data: shard 9 (its rows arrive after the registry's);
# schema_data_dt: shard 5 (the registry's rows are restored with its
# triggers disabled, so the carried floor is never applied, and s_005's
# triggers were enabled again before the registry had rows).  Since then
# set_schema passes (the event trigger reads a table moved by SET SCHEMA),
# rename (a schema renamed to a registered name raises its shard's floor)
# and schema_data_dt (enabling the registry's triggers again raises every
# registered shard's floor).  On 15230ef, on PostgreSQL 17+ without
# preloading, data needed raise_floor() (pg_restore's session never loaded
# the library): without it, 2,000 of 2,000 new ids below in both tables.
. "$(dirname "$0")/../lib.sh" failover

port_a=$((SHARDID_PORT_BASE + 151))
app_server -c +40s a "$port_a" || { fail "server a did not start"; finish; }
q_at "$port_a" <<'SQL' >/dev/null || fail "filling server a failed"
CREATE EXTENSION shardid;
CREATE SCHEMA s_005;
CREATE SCHEMA tenant_9;
CREATE TABLE s_005.a (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), v int);
CREATE TABLE tenant_9.a (id bigint PRIMARY KEY DEFAULT shardid.next_id(9), v int);
SELECT shardid.register_shard(5, 's_005'), shardid.register_shard(9, 'tenant_9');
INSERT INTO s_005.a (v) SELECT g FROM generate_series(1, 2000) g;
INSERT INTO tenant_9.a (v) SELECT g FROM generate_series(1, 2000) g;
SQL
dump=$SHARDID_TMP/app.dump
"$PG_BIN/pg_dump" -h "$SHARDID_TMP" -p "$port_a" -U postgres -Fc -f "$dump" app || fail "pg_dump -Fc failed"
chmod 644 "$dump"
tables="s_005.a tenant_9.a"

# The login event trigger shardid_load (17+) loads shardid in every new
# session, before it calls anything of shardid: its GUCs are defined (a
# placeholder is not in pg_settings).  Without preloading, doctor() names
# it when disabled, and apply_floors() makes it again where pg_upgrade from
# 15 or 16 left none, as a member of the extension.  Where the library
# cannot be loaded, a login goes on with a WARNING (a failing login trigger
# would refuse every connection to the database).
loaded=$(q_at "$port_a" -c "SELECT count(*) FROM pg_settings WHERE name = 'shardid.max_lead_ms'")
expect "$loaded" = 1 "a new session has shardid loaded before it calls it"
if [ "$strict_conf" != "shared_preload_libraries = 'shardid'" ]; then
	q_at "$port_a" -c "ALTER EVENT TRIGGER shardid_load DISABLE" >/dev/null
	expect "$(q_at "$port_a" -c "SELECT count(*) FROM pg_settings WHERE name = 'shardid.max_lead_ms'")" = 0 \
		"a new session without the trigger has shardid unloaded"
	expect "$(q_at "$port_a" -c "SELECT object FROM shardid.doctor(scan_rows => false) WHERE problem = 'shardid not loaded at login'")" = \
		"event trigger shardid_load" "doctor() names the disabled login trigger"
	q_at "$port_a" -c "ALTER EXTENSION shardid DROP EVENT TRIGGER shardid_load" -c "DROP EVENT TRIGGER shardid_load" \
		-c "SELECT shardid.apply_floors()" >/dev/null || fail "apply_floors() without the login trigger"
	expect "$(q_at "$port_a" -c "SELECT e.evtenabled::text || ' ' || d.deptype::text FROM pg_event_trigger e
	                               JOIN pg_depend d ON d.classid = 'pg_event_trigger'::regclass AND d.objid = e.oid
	                                AND d.refclassid = 'pg_extension'::regclass
	                               WHERE e.evtname = 'shardid_load' AND e.evtevent = 'login'")" = "A e" \
		"apply_floors() made the login trigger again, enabled always, a member of the extension"
	expect "$(q_at "$port_a" -c "SELECT count(*) FROM shardid.doctor(scan_rows => false) WHERE problem = 'shardid not loaded at login'")" = 0 \
		"doctor() names no login trigger once apply_floors() made it"
	# where the library cannot be loaded (here: a role that may not call
	# the function that loads it), logins go on, with a WARNING that says so
	q_at "$port_a" -c "CREATE ROLE loginer LOGIN" -c "REVOKE EXECUTE ON FUNCTION shardid_internal.load_library() FROM PUBLIC" >/dev/null
	out=$(PGUSER=loginer q_at "$port_a" -c "SELECT current_user" 2>&1)
	echo "$out" | sed 's/^/  | /'
	case "$out" in
	*"WARNING:  shardid is not loaded in this session: permission denied for function load_library"*loginer) ;;
	*) fail "a login where shardid cannot be loaded: $out" ;;
	esac
	q_at "$port_a" -c "GRANT EXECUTE ON FUNCTION shardid_internal.load_library() TO PUBLIC" >/dev/null
	expect "$(PGUSER=loginer q_at "$port_a" -c "SELECT count(*) FROM pg_settings WHERE name = 'shardid.max_lead_ms'" 2>&1)" = 1 \
		"a role that is no superuser has shardid loaded at login"
fi

# server_b N: a fresh server b (right clock) on its own port, libpq at it
server_b() {
	port_b=$((port_a + $1))
	cluster_init "b$1" "$port_b" "$strict_conf" "shardid.max_lead_ms = 60000" || return 1
	cluster_start "b$1" || return 1
	use_cluster "$port_b"
}

# registered_empty: database app on b, both schemas registered, tables empty
registered_empty() {
	q -c "CREATE DATABASE app" >/dev/null &&
		"$PG_BIN/pg_restore" -s -d app "$dump" &&
		q_at "$port_b" -c "SELECT shardid.register_shard(5, 's_005'), shardid.register_shard(9, 'tenant_9')" >/dev/null
}

# copy_rows FROM_TABLE TO_TABLE: a's rows of FROM_TABLE into TO_TABLE on b
copy_rows() {
	q_at "$port_a" -c "COPY $1 TO STDOUT" | q_at "$port_b" -c "COPY $2 FROM STDIN"
}

# check PATH: b makes 2,000 ids per table; none may sort at or below the
# newest restored id of the table, unless the shard refuses, naming a step
check() {
	local path=$1 t out
	for t in $tables; do
		out=$(q_at "$port_b" -c "CREATE TEMP TABLE old AS SELECT max(id) AS m FROM $t;
		    CREATE TEMP TABLE new AS WITH i AS (INSERT INTO $t (v) SELECT g FROM generate_series(1, 2000) g RETURNING id) SELECT id FROM i" \
			-c "SELECT count(*) FILTER (WHERE id <= (SELECT m FROM old)) || ' ' || count(*) FROM new" 2>&1)
		case "$out" in
		"0 2000") echo "$path: $t: new ids at or below the restored ones: 0 of 2000" ;;
		*ERROR:*shardid.*) echo "$path: $t: refused: $(echo "$out" | grep -m1 -E 'HINT|ERROR')" ;;
		*) echo "$path: $t: new ids at or below the restored ones: $out (of 2000)"
			fail "$path: $t: new ids at or below the restored ones, and no refusal: $out" ;;
		esac
	done
}

n=1
for path in schema_data schema_data_dt data set_schema rename; do
	server_b $n || { fail "$path: server b did not start"; n=$((n + 1)); continue; }
	case $path in
	schema_data | schema_data_dt)
		flag=""
		[ $path = schema_data_dt ] && flag=--disable-triggers
		q -c "CREATE DATABASE app" >/dev/null &&
			"$PG_BIN/pg_restore" -s -d app "$dump" &&
			"$PG_BIN/pg_restore" -a $flag -d app "$dump" || fail "$path: pg_restore failed" ;;
	data) registered_empty || fail "$path: setting up failed"
		"$PG_BIN/pg_restore" -a -n s_005 -n tenant_9 -d app "$dump" || fail "$path: pg_restore -a failed" ;;
	set_schema) registered_empty || fail "$path: setting up failed"
		q_at "$port_b" -c "CREATE SCHEMA incoming" -c "DROP TABLE s_005.a, tenant_9.a" \
			-c "CREATE TABLE incoming.a5 (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), v int)" \
			-c "CREATE TABLE incoming.a9 (id bigint PRIMARY KEY DEFAULT shardid.next_id(9), v int)" >/dev/null &&
			copy_rows s_005.a incoming.a5 && copy_rows tenant_9.a incoming.a9 &&
			q_at "$port_b" -c "ALTER TABLE incoming.a5 SET SCHEMA s_005" -c "ALTER TABLE s_005.a5 RENAME TO a" \
				-c "ALTER TABLE incoming.a9 SET SCHEMA tenant_9" -c "ALTER TABLE tenant_9.a9 RENAME TO a" >/dev/null ||
			fail "$path: moving the tables in failed" ;;
	rename) registered_empty || fail "$path: setting up failed"
		q_at "$port_b" -c "CREATE SCHEMA s_005_new" -c "CREATE SCHEMA tenant_9_new" \
			-c "CREATE TABLE s_005_new.a (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), v int)" \
			-c "CREATE TABLE tenant_9_new.a (id bigint PRIMARY KEY DEFAULT shardid.next_id(9), v int)" >/dev/null &&
			copy_rows s_005.a s_005_new.a && copy_rows tenant_9.a tenant_9_new.a &&
			q_at "$port_b" -c "BEGIN" -c "ALTER SCHEMA s_005 RENAME TO s_005_old" -c "ALTER SCHEMA s_005_new RENAME TO s_005" \
				-c "ALTER SCHEMA tenant_9 RENAME TO tenant_9_old" -c "ALTER SCHEMA tenant_9_new RENAME TO tenant_9" -c "COMMIT" >/dev/null ||
			fail "$path: swapping the schemas in failed" ;;
	esac
	echo "$path: floors on b $(q_at "$port_b" -c "SELECT string_agg(shard || '=' || coalesce(floor_id::text, 'NULL'), ' ' ORDER BY shard) FROM shardid.shard_registry")"
	named=$(q_at "$port_b" -c "SELECT string_agg(object, ', ' ORDER BY object) FROM shardid.doctor()
	                           WHERE problem = 'stored ids ahead of the shard''s ids'")
	expect "$named" = "" "$path: shards doctor() names (none needs a step)"
	check "$path"
	cluster_stop "b$n" immediate
	n=$((n + 1))
done
finish
