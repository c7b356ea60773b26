#!/usr/bin/env bash
# pg_upgrade of a cluster whose databases have shardid 1.3, then the update
# to 1.4 as pg_upgrade itself writes it (update_extensions.sql): no
# database may make ids below its carried floors without the step.
#
# Server a (PG_CONFIG; its library is this build, its catalogs say 1.3, as
# after installing the new package and before ALTER EXTENSION ... UPDATE)
# has databases app1 (shard 5) and app2 (shard 6) with shardid 1.3, and
# app3 (shard 7) with 1.4, each with one table of 2,000 ids 40 s ahead of
# the real clock and its floor raised on them (raise_floor()).  Before the
# upgrade, an id in a 1.3 database:
#   - is made, or refused naming the step that exists there (ALTER EXTENSION
#     shardid UPDATE): on 108764a it is refused naming
#     shardid.apply_floors(), which a 1.3 database does not have, so every
#     server that installs the 1.4 package stops making ids until the
#     update (the hint now names the update there; the refusal stays);
# pg_upgrade (into SHARDID_PG_CONFIG_NEW's PostgreSQL if set, e.g. 17 to
# 18; else the same one) carries the tables and floors, not the origins.
# b runs the update_extensions.sql pg_upgrade wrote (ALTER EXTENSION
# shardid UPDATE in both databases, PostgreSQL 16+; by hand before), then:
#   - app1's 2,000 new ids sort after its carried floor, or its first id is
#     refused, naming shardid.apply_floors(), which the operator runs there
#     (108764a: refused, the high-water origin missing);
#   - app3 (shard 7, whose catalogs said 1.4 before the upgrade) is
#     refused naming the step until it ran there, then its 2,000 new ids
#     sort after its carried floor (holds on 108764a);
#   - app2's 2,000 new ids sort after its carried floor, or are refused
#     naming the step.  On 108764a all 2,000 sorted below, silently: the
#     update to 1.4 creates the origin shardid_floors_<database oid>, which
#     says "floors applied", without applying them.  Since the update
#     applies the floors (shardid.apply_floors()), both pass.
. "$(dirname "$0")/../lib.sh" failover

new_config=${SHARDID_PG_CONFIG_NEW:-$PG_CONFIG}
new_bin=$("$new_config" --bindir)
new_major=$("$new_config" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')
a=$((SHARDID_PORT_BASE + 161))
b=$((a + 1))
app_server a $a "shardid.max_lead_ms = 60000" || exit 1
q -c "CREATE DATABASE app1" -c "CREATE DATABASE app2" -c "CREATE DATABASE app3" >/dev/null || fail "databases on a"
for d in "app1 5 1.3" "app2 6 1.3" "app3 7 1.4"; do
	read -r db shard version <<<"$d"
	PGDATABASE=$db q <<SQL >/dev/null || fail "setup of $db on a"
CREATE EXTENSION shardid VERSION '$version';
CREATE SCHEMA s$shard;
CREATE TABLE s$shard.t (id bigint PRIMARY KEY DEFAULT shardid.next_id($shard), v int);
SELECT shardid.register_shard($shard, 's$shard');
INSERT INTO s$shard.t (id, v)
SELECT shardid.make_id(shardid.id_millis(shardid.min_id(clock_timestamp() + interval '40 s')), $shard, g), g
FROM generate_series(1, 2000) g;
SELECT shardid.raise_floor($shard);
SQL
done
out=$(PGDATABASE=app1 q -c "SELECT shardid.next_id(5)" 2>&1)
echo "a, a 1.3 database under this library: $out"
case "$out" in
[0-9]*) ;;
*"ALTER EXTENSION shardid UPDATE"*) ;;
*) fail "an id in a 1.3 database under this library is refused without naming a step that exists there: $out" ;;
esac
# b's data checksums as a's (PostgreSQL 18's initdb turns them on by default)
checksums=$(q -c "SHOW data_checksums")
cluster_stop a fast

as_pg "$new_bin/initdb" -D "$SHARDID_TMP/b" -U postgres -A trust --no-sync \
	$(if [ "$checksums" = on ]; then echo --data-checksums; elif [ "$new_major" -ge 18 ]; then echo --no-data-checksums; fi) \
	>"$SHARDID_TMP/b.initdb.log" 2>&1 ||
	{ cat "$SHARDID_TMP/b.initdb.log"; fail "initdb b"; finish; }
printf "%s\n" "port = $b" "listen_addresses = ''" "unix_socket_directories = '$SHARDID_TMP'" "fsync = off" \
	"$strict_conf" "shardid.max_lead_ms = 60000" | as_pg tee -a "$SHARDID_TMP/b/postgresql.conf" >/dev/null
(cd "$SHARDID_TMP" && as_pg "$new_bin/pg_upgrade" -b "$PG_BIN" -B "$new_bin" -d "$SHARDID_TMP/a" \
	-D "$SHARDID_TMP/b" -p $a -P $b -U postgres -s "$SHARDID_TMP" >"$SHARDID_TMP/pg_upgrade.log" 2>&1) ||
	{ tail -20 "$SHARDID_TMP/pg_upgrade.log"; fail "pg_upgrade"; finish; }
echo "pg_upgrade $("$PG_CONFIG" --version) -> $("$new_config" --version): done"
as_pg "$new_bin/pg_ctl" -D "$SHARDID_TMP/b" -l "$SHARDID_TMP/b.log" -w -t 60 start >/dev/null ||
	{ tail -20 "$SHARDID_TMP/b.log"; fail "start b"; finish; }
PG_BIN=$new_bin
use_cluster $b
if [ -f "$SHARDID_TMP/update_extensions.sql" ]; then
	q -f "$SHARDID_TMP/update_extensions.sql" >/dev/null || fail "update_extensions.sql"
else
	for db in app1 app2; do PGDATABASE=$db q -c "ALTER EXTENSION shardid UPDATE" || fail "update $db"; done
	PGDATABASE=app3 q -c "ALTER EXTENSION shardid UPDATE" >/dev/null 2>&1
fi
echo "b: shardid $(PGDATABASE=app1 q -c "SELECT extversion FROM pg_extension WHERE extname = 'shardid'") in both databases; origins: $(q -c "SELECT string_agg(roname, ' ' ORDER BY roname) FROM pg_replication_origin")"

# new_ids DB SHARD: 2,000 new ids of SHARD in DB; how many sort at or
# below its carried floor (or the error)
new_ids() {
	PGDATABASE=$1 q -c "CREATE TEMP TABLE new AS WITH i AS (INSERT INTO s$2.t (v) SELECT 0 FROM generate_series(1, 2000) RETURNING id) SELECT id FROM i" \
		-c "SELECT count(*) FILTER (WHERE id <= (SELECT floor_id FROM shardid.shard_registry WHERE shard = $2)) FROM new" 2>&1
}
out=$(new_ids app1 5)
case "$out" in
0) echo "app1: 2,000 new ids, none at or below its carried floor" ;;
*"shardid.apply_floors()"*)
	echo "app1, its first id: $(echo "$out" | grep -m1 ERROR)"
	expect "$(PGDATABASE=app1 q -c "SELECT shardid.apply_floors()")" = 1 "app1: the step"
	expect "$(new_ids app1 5)" = 0 "app1: new ids at or below its carried floor after the step" ;;
*) fail "app1's ids after pg_upgrade and the update: neither after its floor nor refused naming the step: $out" ;;
esac
out=$(new_ids app2 6)
case "$out" in
0) echo "app2: 2,000 new ids, none at or below its carried floor" ;;
*ERROR:*shardid.*) echo "app2: refused: $(echo "$out" | grep -m1 ERROR)" ;;
*) echo "app2: new ids at or below its carried floor: $out of 2000"
	fail "app2: new ids at or below its carried floor after pg_upgrade and the update, no refusal: $out" ;;
esac
# app3 had 1.4 before the upgrade: refused until its own step, then after
out=$(PGDATABASE=app3 q -c "INSERT INTO s7.t (v) VALUES (0)" 2>&1)
echo "app3 (1.4 before the upgrade), its first id: $(echo "$out" | grep -m1 ERROR)"
case "$out" in *"are not applied on this server"*"shardid.apply_floors()"*) ;;
*) fail "app3's first id after pg_upgrade does not name the step: $out" ;; esac
expect "$(PGDATABASE=app3 q -c "SELECT shardid.apply_floors()")" = 1 "app3: the step"
expect "$(PGDATABASE=app3 q -c "CREATE TEMP TABLE new AS WITH i AS (INSERT INTO s7.t (v) SELECT 0 FROM generate_series(1, 2000) RETURNING id) SELECT id FROM i" \
	-c "SELECT count(*) FILTER (WHERE id <= (SELECT floor_id FROM shardid.shard_registry WHERE shard = 7)) FROM new")" = 0 \
	"app3: new ids at or below its carried floor after the step"
as_pg "$new_bin/pg_ctl" -D "$SHARDID_TMP/b" -m fast -w stop >/dev/null
finish
