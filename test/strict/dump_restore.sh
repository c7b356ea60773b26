#!/usr/bin/env bash
# pg_dump of a database with shardid, two logical-shard schemas and a
# database-level shardid.epoch, restored with pg_restore into a fresh
# cluster: DEFAULTs intact, sequences continued, the epoch carried, old ids
# decode as before, the shard registry and the schema's owner and
# privileges carried, and inserts go on with no duplicate and sorting after
# every restored id.
. "$(dirname "$0")/../lib.sh" servers

src_db=$PGDATABASE
src_port=$PGPORT
q -c "ALTER DATABASE $src_db SET shardid.epoch = '1314220021721'"
# the server remembers the epoch of its ids: start over under this one (and
# back at the end), as a migration would
q -c "SELECT shardid.adopt_epoch()" >/dev/null
trap 'PGPORT=$src_port q -c "SET shardid.epoch = '"'"'2026-01-01 00:00:00+00'"'"'" -c "SELECT shardid.adopt_epoch()" >/dev/null' EXIT
q <<'SQL'
CREATE SCHEMA shard_0001;
CREATE SEQUENCE shard_0001.t_id_seq;
CREATE TABLE shard_0001.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(1, nextval('shard_0001.t_id_seq')), v int);
CREATE SCHEMA shard_0002;
CREATE TABLE shard_0002.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(2), v int);
INSERT INTO shard_0001.t (v) SELECT g FROM generate_series(1, 20000) g;
INSERT INTO shard_0002.t (v) SELECT g FROM generate_series(1, 20000) g;
SELECT shardid.register_shard(1, 'shard_0001'), shardid.register_shard(2, 'shard_0002');
SQL
snapshot() {	# what must survive: defaults, sequence position, epoch, decoded times, routing
	q -c "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid IN ('shard_0001.t'::regclass, 'shard_0002.t'::regclass) ORDER BY adrelid::regclass::text" \
	  -c "SELECT last_value FROM shard_0001.t_id_seq" \
	  -c "SHOW shardid.epoch" \
	  -c "SELECT md5(string_agg(shardid.id_time(id)::text, ',' ORDER BY id)) FROM (SELECT id FROM shard_0001.t UNION ALL SELECT id FROM shard_0002.t) u" \
	  -c "SELECT string_agg(shard || ':' || schema_name, ' ' ORDER BY shard) FROM shardid.shard_registry" \
	  -c "SELECT pg_get_userbyid(nspowner) || ' ' || nspacl::text FROM pg_namespace WHERE nspname = 'shardid'"
}
before=$(snapshot)
"$PG_BIN/pg_dump" -Fc -C -f "$SHARDID_TMP/shards.dump" "$src_db" || fail "pg_dump failed"

# a fresh cluster with shardid preloaded, on its own port
port2=$((PGPORT + 1))
cluster_init restore "$port2" "shared_preload_libraries = 'shardid'" || { fail "initdb failed"; finish; }
cluster_start restore || { fail "second cluster did not start"; finish; }
export PGPORT=$port2
"$PG_BIN/pg_restore" -C -d postgres "$SHARDID_TMP/shards.dump" || fail "pg_restore failed"
after=$(snapshot)
echo "defaults, sequence position, epoch and decoded times before the dump:"
echo "$before" | sed 's/^/    /'
expect "$after" = "$before" "restored defaults, sequence, epoch and decoded times"

# inserts go on after the restore, once the new server's clock has passed
# the newest restored id time: a fresh server has no high-water mark, and
# the source's ids may carry times up to its lead ahead of its clock
read -r max1 max2 <<<"$(q -F' ' -c "SELECT (SELECT max(id) FROM shard_0001.t), (SELECT max(id) FROM shard_0002.t)")"
q -c "SELECT pg_sleep(least(15, greatest(0, extract(epoch FROM shardid.id_time(greatest($max1, $max2)) - clock_timestamp()))))" >/dev/null
q -c "INSERT INTO shard_0001.t (v) SELECT g FROM generate_series(1, 20000) g;
      INSERT INTO shard_0002.t (v) SELECT g FROM generate_series(1, 20000) g;" || fail "inserts after restore failed"
read -r rows distinct later1 later2 <<<"$(q -F' ' -c "
    SELECT count(*), count(DISTINCT id),
           (SELECT min(id) FROM shard_0001.t WHERE id > $max1) IS NOT NULL AND (SELECT count(*) FROM shard_0001.t WHERE id > $max1) = 20000,
           (SELECT count(*) FROM shard_0002.t WHERE id > $max2) = 20000
    FROM (SELECT id FROM shard_0001.t UNION ALL SELECT id FROM shard_0002.t) u")"
echo "after restore: rows=$rows distinct=$distinct new ids sort after the restored ones: $later1 $later2"
expect "$rows" = 80000 "rows after inserts"
expect "$distinct" = 80000 "distinct ids after inserts"
expect "$later1" = t "shard_0001 ids after the restore sort after the restored ones"
expect "$later2" = t "shard_0002 ids after the restore sort after the restored ones"
cluster_stop restore
finish
