#!/usr/bin/env bash
# Restores raise the floors by themselves: no step to remember.
#
# Server a, its clock 40 s ahead of the real one, holds two shards, each in
# a schema of its own: s_005 (sorts before "shardid", so a whole-database
# dump restores its rows before the registry's) and tenant_9 (after it).
# Each schema has two tables, one per DEFAULT form and key shape:
#   a  PRIMARY KEY (id),            DEFAULT shardid.next_id(shard)
#   b  PRIMARY KEY (tenant_id, id), DEFAULT shardid.next_id(shard, nextval(seq))
#      (the multi-tenant key of ORMs and Citus: id is its second column)
# Both shards are registered while empty (their floors NULL) and then get
# 20,000 rows per table, whose ids lie about 40 s ahead of the real clock.
# Each path below restores them into a new server b whose clock is right or behind
# (shardid.max_lead_ms = 60000 there, so that the restored ids lie within
# what strict mode follows), with no shardid step at all; then b makes
# 2,000 ids per table.  Exit 0: for every path, no new id sorts at or
# below the newest restored id of its table.
#   whole      pg_dump -Fc, pg_restore -C (the registry's rows are restored
#              before the tables have indexes, and before tenant_9 has rows)
#   plain      pg_dump -C of plain SQL through psql
#   jobs       pg_restore -j 2 into an empty database
#   schema     into a server where both schemas are registered (empty):
#              DROP SCHEMA ... CASCADE, then pg_restore of pg_dump -n of both
#   clean      the same with pg_restore --clean --if-exists -n
#   data       the same, pg_restore --data-only --disable-triggers into the
#              existing tables
#   subscribe  the same, the rows copied by a subscription to a's
#              publication, which is then dropped (a migration by logical
#              replication)
#   dataonly   the same, pg_restore --data-only without --disable-triggers
#              into the existing tables (COPY with the id column)
#   inserts    the same, pg_dump --data-only --inserts --rows-per-insert=100
#              through psql (INSERTs of explicit ids, VALUES lists)
#   copy       the same, each table by COPY ... TO STDOUT on a and
#              COPY ... FROM STDIN on b
#              (these three with shardid preloaded on b: the hooks that see
#              writes of explicit ids are in sessions that load the library)
# and a copy of the restored database made by CREATE DATABASE ... TEMPLATE
# refuses ids, naming the step (SELECT shardid.apply_floors()), until it ran.
# On 1.3 every path left 2,000 of 2,000 new ids per table below the
# restored ones: the floor was read only at registrations, and
# PRIMARY KEY (tenant_id, id) was never read; before the hooks of 1.4,
# dataonly, inserts and copy still did.
# The seed (RESTORE_SEED, printed; default from $RANDOM) picks the order of
# the paths, b's clock for each (0 to 12 s behind the real one), and
# whether b crashes (-m immediate) right after the restore, before it made
# any id, and starts again with its clock 3 s further back: the floor must
# hold through the durable mark H.
. "$(dirname "$0")/../lib.sh" failover

seed=${RESTORE_SEED:-$RANDOM}
echo "RESTORE_SEED=$seed"
RANDOM=$seed

port_a=$SHARDID_PORT_BASE
app_server -c +40s a "$port_a" "wal_level = logical" || { fail "server a did not start"; finish; }
q_at "$port_a" <<'SQL' >/dev/null || fail "filling server a failed"
CREATE EXTENSION shardid;
CREATE PUBLICATION shards;
CREATE SCHEMA s_005;
CREATE SCHEMA tenant_9;
CREATE TABLE s_005.a (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), v int);
CREATE SEQUENCE s_005.b_seq;
CREATE TABLE s_005.b (tenant_id bigint, id bigint DEFAULT shardid.next_id(5, nextval('s_005.b_seq')), v int,
                      PRIMARY KEY (tenant_id, id));
CREATE TABLE tenant_9.a (id bigint PRIMARY KEY DEFAULT shardid.next_id(9), v int);
CREATE SEQUENCE tenant_9.b_seq;
CREATE TABLE tenant_9.b (tenant_id bigint, id bigint DEFAULT shardid.next_id(9, nextval('tenant_9.b_seq')), v int,
                         PRIMARY KEY (tenant_id, id));
SELECT shardid.register_shard(5, 's_005'), shardid.register_shard(9, 'tenant_9');
INSERT INTO s_005.a (v) SELECT g FROM generate_series(1, 20000) g;
INSERT INTO s_005.b (tenant_id, v) SELECT g % 7, g FROM generate_series(1, 20000) g;
INSERT INTO tenant_9.a (v) SELECT g FROM generate_series(1, 20000) g;
INSERT INTO tenant_9.b (tenant_id, v) SELECT g % 7, g FROM generate_series(1, 20000) g;
ALTER PUBLICATION shards ADD TABLE s_005.a, s_005.b, tenant_9.a, tenant_9.b;
SQL
echo "server a: floors $(q_at "$port_a" -c "SELECT string_agg(shard || '=' || coalesce(floor_id::text, 'NULL'), ' ' ORDER BY shard) FROM shardid.shard_registry")"
dump=$SHARDID_TMP/app.dump
"$PG_BIN/pg_dump" -h "$SHARDID_TMP" -p "$port_a" -U postgres -Fc -f "$dump" app || fail "pg_dump -Fc failed"
"$PG_BIN/pg_dump" -h "$SHARDID_TMP" -p "$port_a" -U postgres -C -f "$SHARDID_TMP/app.sql" app || fail "pg_dump (plain) failed"
schemas=$SHARDID_TMP/schemas.dump
"$PG_BIN/pg_dump" -h "$SHARDID_TMP" -p "$port_a" -U postgres -Fc -n s_005 -n tenant_9 -f "$schemas" app || fail "pg_dump -n failed"
inserts=$SHARDID_TMP/inserts.sql
"$PG_BIN/pg_dump" -h "$SHARDID_TMP" -p "$port_a" -U postgres -a --inserts --rows-per-insert=100 \
	-n s_005 -n tenant_9 -f "$inserts" app || fail "pg_dump --inserts failed"
chmod 644 "$dump" "$schemas" "$SHARDID_TMP/app.sql" "$inserts"
tables="s_005.a s_005.b tenant_9.a tenant_9.b"

# server_b N: a fresh server b (its clock $behind s behind the real one)
# on its own port, libpq at it
server_b() {
	local conf=$strict_conf
	port_b=$((port_a + $1))
	case $path in dataonly | inserts | copy) conf="shared_preload_libraries = 'shardid'" ;; esac
	cluster_init "b$1" "$port_b" "$conf" "shardid.max_lead_ms = 60000" || return 1
	# shellcheck disable=SC2046
	cluster_start "b$1" $([ "$behind" -gt 0 ] && faketime_env "-${behind}s") || return 1
	use_cluster "$port_b"
}

# registered_empty: database app on b with both schemas registered and
# their tables empty (the schema of the dump, then the registrations)
registered_empty() {
	q -c "CREATE DATABASE app" >/dev/null &&
		"$PG_BIN/pg_restore" -s -d app "$dump" &&
		q_at "$port_b" -c "SELECT shardid.register_shard(5, 's_005'), shardid.register_shard(9, 'tenant_9')" >/dev/null
}

# check PATH: b makes 2,000 ids per table (tables b: tenant_id given); none
# may sort at or below the newest restored id of the table
check() {
	local path=$1 t rows result cols sel
	for t in $tables; do
		case $t in *.b) cols="tenant_id, v" sel="1, g" ;; *) cols="v" sel="g" ;; esac
		rows=$(q_at "$port_b" -c "SELECT count(*) FROM $t")
		expect "$rows" = 20000 "$path: rows of $t restored"
		result=$(q_at "$port_b" -c "CREATE TEMP TABLE old AS SELECT max(id) AS m FROM $t;
		    CREATE TEMP TABLE new AS WITH i AS (INSERT INTO $t ($cols) SELECT $sel FROM generate_series(1, 2000) g RETURNING id) SELECT id FROM i" \
		    -c "SELECT count(*) FILTER (WHERE id <= (SELECT m FROM old)) || ' ' || count(*) FROM new")
		echo "$path: $t: new ids at or below the restored ones: $result (of 2000)"
		expect "$result" = "0 2000" "$path: $t: every new id sorts after the restored ones"
	done
}

paths=(whole plain jobs schema clean data subscribe dataonly inserts copy)
for ((i = ${#paths[@]} - 1; i > 0; i--)); do
	j=$((RANDOM % (i + 1)))
	t=${paths[i]} paths[i]=${paths[j]} paths[j]=$t
done
n=1
for path in "${paths[@]}"; do
	behind=$((RANDOM % 13))
	crash=$((RANDOM % 2))
	echo "$path: b's clock ${behind} s behind$([ $crash = 1 ] && echo ", a crash after the restore")"
	server_b $n || { fail "$path: server b did not start"; n=$((n + 1)); continue; }
	case $path in
	whole) "$PG_BIN/pg_restore" -C -d postgres "$dump" || fail "$path: pg_restore failed" ;;
	plain) q -f "$SHARDID_TMP/app.sql" >/dev/null || fail "$path: psql failed" ;;
	jobs) q -c "CREATE DATABASE app" && "$PG_BIN/pg_restore" -j 2 -d app "$dump" || fail "$path: pg_restore -j 2 failed" ;;
	schema) registered_empty || fail "$path: setting up failed"
		q_at "$port_b" -c "DROP SCHEMA s_005 CASCADE" -c "DROP SCHEMA tenant_9 CASCADE" 2>/dev/null
		"$PG_BIN/pg_restore" -d app "$schemas" || fail "$path: pg_restore of pg_dump -n failed" ;;
	clean) registered_empty || fail "$path: setting up failed"
		"$PG_BIN/pg_restore" --clean --if-exists -n s_005 -n tenant_9 -d app "$dump" || fail "$path: pg_restore --clean failed" ;;
	subscribe) registered_empty || fail "$path: setting up failed"
		q_at "$port_b" -c "CREATE SUBSCRIPTION shards CONNECTION 'host=$SHARDID_TMP port=$port_a dbname=app user=postgres' PUBLICATION shards" \
			>/dev/null || fail "$path: CREATE SUBSCRIPTION"
		copied() { [ "$(q_at "$port_b" -c "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate = 'r'")" = 4 ]; }
		wait_until "$path: the subscription copied the four tables" copied
		q_at "$port_b" -c "DROP SUBSCRIPTION shards" >/dev/null || fail "$path: DROP SUBSCRIPTION" ;;
	data) registered_empty || fail "$path: setting up failed"
		"$PG_BIN/pg_restore" -a --disable-triggers -n s_005 -n tenant_9 -d app "$dump" || fail "$path: pg_restore -a failed" ;;
	dataonly) registered_empty || fail "$path: setting up failed"
		"$PG_BIN/pg_restore" -a -n s_005 -n tenant_9 -d app "$dump" || fail "$path: pg_restore -a failed" ;;
	inserts) registered_empty || fail "$path: setting up failed"
		q_at "$port_b" -f "$inserts" >/dev/null || fail "$path: psql of the INSERTs failed" ;;
	copy) registered_empty || fail "$path: setting up failed"
		for t in $tables; do
			q_at "$port_a" -c "COPY $t TO STDOUT" | q_at "$port_b" -c "COPY $t FROM STDIN" ||
				fail "$path: COPY of $t failed"
		done ;;
	esac
	echo "$path: floors on b $(q_at "$port_b" -c "SELECT string_agg(shard || '=' || coalesce(floor_id::text, 'NULL'), ' ' ORDER BY shard) FROM shardid.shard_registry")"
	if [ $crash = 1 ]; then
		cluster_stop "b$n" immediate
		# shellcheck disable=SC2046
		cluster_start "b$n" $(faketime_env "-$((behind + 3))s") || fail "$path: b did not start again"
	fi
	check "$path"
	if [ $path = whole ]; then
		# a copy by CREATE DATABASE ... TEMPLATE (no CREATE EXTENSION ran
		# there): refused, naming the step, until the step
		q -c "CREATE DATABASE app2 TEMPLATE app" >/dev/null || fail "CREATE DATABASE app2 TEMPLATE app"
		out=$(PGDATABASE=app2 q -c "INSERT INTO s_005.a (v) VALUES (1)" 2>&1)
		echo "template: $out"
		case "$out" in *"are not applied on this server"*"shardid.apply_floors()"*) ;;
		*) fail "template: an id in a copy of the database before the step: $out" ;; esac
		expect "$(PGDATABASE=app2 q -c "SELECT shardid.apply_floors()")" = 2 "template: the step"
		expect "$(PGDATABASE=app2 q -c "INSERT INTO s_005.a (v) VALUES (1) RETURNING id > (SELECT max(id) FROM s_005.a)")" = t \
			"template: an id after the step"
	fi
	cluster_stop "b$n" immediate
	n=$((n + 1))
done
finish
