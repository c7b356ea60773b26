#!/usr/bin/env bash
# A session that stamped a shard before its schema was registered, or while
# the registered schema did not exist, gets ids after the stored ones once
# the shard's floor is raised:
#
# 1. the schema registered in the same session, after the data exists;
# 2. the schema registered by another session;
# 3. the registered schema dropped, and another schema holding the shard's
#    data renamed to the registered name: the rename raises the shard's
#    floor (event trigger shardid_floor, 1.4), so doctor() names nothing and
#    no step is needed (1.3 needed shardid.raise_floor(8)).
# The registry's floor trigger function, registry_floor(), is refused as
# any other table's trigger, and to roles other than superusers.
#
# Each shard's table holds one id 5 s ahead of the clock (a restore of a
# shard whose ids borrowed ahead); the session's next insert must get an id
# after it.  (Before the registry and pg_namespace were watched, the
# session went on from the ids it had, 5 s below the stored one: a
# duplicate key as soon as the clock caught up, and ids that sort before
# the data.)  1.2 read stored ids in each backend, once and again after an
# invalidation (its trigger registry_changed()); 1.3 reads them only when
# the floor is raised (a registration, raise_floor()) and the shard's state
# is shared by every backend, so case 3 needed raise_floor() in 1.3 (1.4
# raises the floor at the rename), and registry_changed() is gone: its
# refusals are now registry_floor()'s.
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 70))
app_server late $port "shardid.max_lead_ms = 10000" || exit 1
q_at $port <<'SQL' >/dev/null
CREATE EXTENSION shardid;
CREATE FUNCTION ahead(shard int) RETURNS bigint LANGUAGE sql AS $$
    SELECT shardid.make_id((extract(epoch FROM clock_timestamp() + interval '5 s') * 1000)::bigint
                           - (SELECT i.epoch_ms FROM shardid.info() i), shard, 0) $$;
CREATE TABLE stored (shard int, id bigint);
INSERT INTO stored SELECT s, ahead(s) FROM generate_series(6, 8) s;
CREATE SCHEMA s6;
CREATE TABLE s6.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(6));
INSERT INTO s6.t SELECT id FROM stored WHERE shard = 6;
CREATE SCHEMA s7;
CREATE TABLE s7.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(7));
INSERT INTO s7.t SELECT id FROM stored WHERE shard = 7;
CREATE SCHEMA s8;
CREATE TABLE s8.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(8));
SELECT shardid.register_shard(8, 's8');
CREATE SCHEMA s8_new;
CREATE TABLE s8_new.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(8));
INSERT INTO s8_new.t SELECT id FROM stored WHERE shard = 8;
SQL

# one session, which stamps each shard before the change
out=$(q_at $port 2>&1 <<SQL
SELECT shardid.next_id(6) IS NOT NULL;
SELECT shardid.register_shard(6, 's6');
INSERT INTO s6.t DEFAULT VALUES;
SELECT shardid.next_id(7) IS NOT NULL;
\\! PGPORT=$port PGDATABASE=app "$PG_BIN/psql" -X -q -At -c "SELECT shardid.register_shard(7, 's7')" >/dev/null
INSERT INTO s7.t DEFAULT VALUES;
SELECT shardid.next_id(8) IS NOT NULL;
\\! PGPORT=$port PGDATABASE=app "$PG_BIN/psql" -X -q -At -c "DROP SCHEMA s8 CASCADE" >/dev/null 2>&1
SELECT shardid.next_id(8) IS NOT NULL;
\\! PGPORT=$port PGDATABASE=app "$PG_BIN/psql" -X -q -At -c "ALTER SCHEMA s8_new RENAME TO s8" >/dev/null
SELECT count(*) = 0 FROM shardid.doctor() WHERE problem = 'stored ids ahead of the shard''s ids' AND object = 'shard 8: s8.t.id';
INSERT INTO s8.t DEFAULT VALUES;
SQL
)
echo "$out" | grep -v '^t$' | grep -v '^$'
expect "$(echo "$out" | grep -c '^f$')" = 0 "the session's checks that answered f (doctor() naming no shard 8 after the rename)"
for shard in 6 7 8; do
	read -r rows after <<<"$(q_at $port -F' ' -c "
	    SELECT count(*), count(*) FILTER (WHERE id > (SELECT id FROM stored WHERE shard = $shard))
	    FROM s$shard.t")"
	echo "shard $shard: $rows rows, of them after the stored id: $after"
	expect "$rows $after" = "2 1" "shard $shard: the id inserted after the change"
done

# the trigger function is the registry's: refused elsewhere, and not for PUBLIC
out=$(q_at $port -c "CREATE TABLE other (shard int, schema_name name, floor_id bigint)" \
	-c "CREATE TRIGGER t BEFORE INSERT ON other FOR EACH ROW EXECUTE FUNCTION shardid_internal.registry_floor()" \
	-c "INSERT INTO other VALUES (1, 'public', 1)" 2>&1)
echo "registry_floor() on another table: $out"
expect "$out" = "ERROR:  shardid_internal.registry_floor() is a trigger of shardid.shard_registry only" "registry_floor() on another table"
q_at $port -c "CREATE ROLE plain LOGIN" -c "GRANT CREATE ON SCHEMA public TO plain" >/dev/null
out=$(PGUSER=plain q_at $port -c "CREATE TABLE mine (id bigint)" \
	-c "CREATE TRIGGER t BEFORE INSERT ON mine FOR EACH ROW EXECUTE FUNCTION shardid_internal.registry_floor()" 2>&1)
echo "registry_floor() on a plain role's table: $out"
expect "$out" = "ERROR:  permission denied for function shardid_internal.registry_floor" "registry_floor() for a plain role"
cluster_stop late
finish
