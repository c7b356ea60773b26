#!/usr/bin/env bash
# A role's TEMP table claims no shard.
#
# shardid.set_id() is EXECUTE to PUBLIC.  mallory, who may register shards
# (a superuser granted her INSERT, DELETE on shardid.shard_registry), puts
# set_id('77', 'id') on a TEMP table of hers.  The registry refuses
# temporary schemas, but in 1.2 citus_tenants counted her table, so
# shard_schema(77) answered her pg_temp_N for every role, and her doctor
# rows reached a superuser's doctor; her explicit id 2 s ahead of the clock
# in that table, read at set_id()'s first id, moved the real shard 77 that
# far ahead for every session (past shardid.max_lead_ms).
# Exit 0: shard_schema(77) and id_schema() answer NULL for her and for a
# superuser, citus_tenants has no row of hers, and shard 77's next id in
# another session is near the clock.
SHARDID_TMP=""		# a server of its own: a successful attack moves a shard ahead
. "$(dirname "$0")/../lib.sh" servers
chmod 777 "$SHARDID_TMP"

strict_server settemp $((SHARDID_PORT_BASE + 72))
q -c "CREATE ROLE mallory LOGIN" >/dev/null
export PGDATABASE=app
q >/dev/null <<'SQL'
CREATE EXTENSION shardid;
GRANT INSERT, DELETE ON shardid.shard_registry TO mallory;
SQL

# mallory's session: the TEMP table, an id 2 s ahead, then one set_id() makes;
# while it is open, what do other sessions see?
mkfifo "$SHARDID_TMP/mallory.in"
q -U mallory <"$SHARDID_TMP/mallory.in" >"$SHARDID_TMP/mallory.out" 2>&1 &
mallory=$!
exec 7>"$SHARDID_TMP/mallory.in"
cat >&7 <<'SQL'
CREATE TEMP TABLE t (id bigint PRIMARY KEY, v int);
CREATE TRIGGER shardid_set_id BEFORE INSERT ON t FOR EACH ROW EXECUTE FUNCTION shardid.set_id('77', 'id');
INSERT INTO t VALUES (shardid.min_id(clock_timestamp() + interval '2 s') + (77 << 10), 0);
INSERT INTO t (v) VALUES (1);
SELECT 'mallory sees', shardid.shard_schema(77), (SELECT count(*) FROM shardid.citus_tenants);
\o /dev/null
SELECT pg_sleep(0.1);
\o
SELECT 'mallory done';
SQL
wait_until "mallory's inserts" grep -q "mallory done" "$SHARDID_TMP/mallory.out"
cat "$SHARDID_TMP/mallory.out"
expect "$(grep -c '^mallory sees||0$' "$SHARDID_TMP/mallory.out")" = 1 "shard_schema(77) and citus_tenants in mallory's own session"

expect "$(q -c "SELECT shardid.shard_schema(77) IS NULL, shardid.id_schema(shardid.make_id(1, 77, 0)) IS NULL")" = "t|t" \
	"shard_schema(77) and id_schema() of a superuser while mallory's TEMP table exists"
expect "$(q -c "SELECT count(*) FROM shardid.citus_tenants")" = 0 "citus_tenants rows of a superuser"
if [ "$(q -c "SELECT mode FROM shardid.info()")" = strict ]; then
	lead=$(q -c "SELECT round(extract(epoch FROM shardid.id_time(shardid.next_id(77)) - clock_timestamp()) * 1000)")
	echo "shard 77's next id in a superuser's session: $lead ms ahead of the clock"
	expect_le "$lead" 500 "ms shard 77's next id is ahead of the clock after mallory's TEMP table"
fi
exec 7>&-
wait "$mallory"
finish
