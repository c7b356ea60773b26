#!/usr/bin/env bash
# pg_restore -j of a whole database with many shards of varied sizes: every
# new id of a shard sorts after its restored ids, with no step.
#
# Server a, its clock 40 s ahead of the real one, holds 100 shards made by
# add_shards() from a template of two tables, each in the shape the README
# and the doctor's fix give:
#   users   PRIMARY KEY (k uuid), CREATE INDEX ON users (id)
#           (id_column_fix()'s statement for a table with a primary key)
#   orders  PRIMARY KEY (tenant_id, id)
# registered while empty (their floors NULL), then filled with 1 to 300
# rows per table (shards differ in size, as tenants do; VACUUM ANALYZE so
# that pg_dump knows the sizes, which order pg_restore -j's work).  Server
# b (right clock, shardid.max_lead_ms = 60000 so that the restored ids lie
# within what strict mode follows) restores pg_dump -Fc with pg_restore -j
# (4, then 2 on a fresh server), then makes one id per shard.  Exit 0:
# every shard's new id sorts after every restored id of the shard.
#
# Found on 108764a: 3 to 11 of the 100 shards' new ids sorted below their
# restored ids, floor NULL or below a table's newest id.  pg_restore -j
# loads the registry's rows (TABLE DATA of shardid.shard_registry, one
# COPY whose BEFORE trigger reads each shard's tables) in one job while
# other jobs load the small shards' tables and build their indexes: the
# registry's trigger reads such a table before its rows or index exist, and
# the index's event trigger (shardid_floor) looks the schema up in the
# registry before that COPY commits, sees no row, and raises nothing.
. "$(dirname "$0")/../lib.sh" failover

port_a=$((SHARDID_PORT_BASE + 141))
app_server -c +40s a "$port_a" || { fail "server a did not start"; finish; }
q_at "$port_a" <<'SQL' >/dev/null || fail "filling server a failed"
CREATE EXTENSION shardid;
CREATE SCHEMA app_template;
CREATE TABLE app_template.users (k uuid PRIMARY KEY DEFAULT gen_random_uuid(), id bigint NOT NULL, v int);
CREATE INDEX ON app_template.users (id);
CREATE TABLE app_template.orders (tenant_id bigint, id bigint NOT NULL, v int, PRIMARY KEY (tenant_id, id));
CALL shardid.add_shards('app_template', first_shard => 1, last_shard => 100);
DO $$
BEGIN
    FOR s IN 1..100 LOOP
        EXECUTE format('INSERT INTO shard_%s.users (v) SELECT g FROM generate_series(1, %s) g',
                       lpad(s::text, 4, '0'), (s * 37) % 300 + 1);
        EXECUTE format('INSERT INTO shard_%s.orders (tenant_id, v) SELECT g %% 7, g FROM generate_series(1, %s) g',
                       lpad(s::text, 4, '0'), (s * 53) % 300 + 1);
    END LOOP;
END
$$;
VACUUM ANALYZE;
SQL
echo "server a: $(q_at "$port_a" -c "SELECT count(*) || ' shards, ' || count(floor_id) || ' floors set' FROM shardid.shard_registry")"
dump=$SHARDID_TMP/app.dump
"$PG_BIN/pg_dump" -h "$SHARDID_TMP" -p "$port_a" -U postgres -Fc -f "$dump" app || fail "pg_dump -Fc failed"
chmod 644 "$dump"
cluster_stop a fast

n=1
for jobs in 4 2; do
	port_b=$((port_a + n))
	cluster_init "b$n" "$port_b" "$strict_conf" "shardid.max_lead_ms = 60000" &&
		cluster_start "b$n" || { fail "server b$n did not start"; n=$((n + 1)); continue; }
	use_cluster "$port_b"
	q -c "CREATE DATABASE app" >/dev/null &&
		"$PG_BIN/pg_restore" -j $jobs -d app "$dump" || fail "pg_restore -j $jobs failed"
	# per shard: its newest restored id, its floor, one new id
	result=$(q_at "$port_b" <<'SQL'
CREATE TEMP TABLE r AS
SELECT s AS shard, NULL::bigint AS newest, NULL::bigint AS floor_id, NULL::bigint AS next
FROM generate_series(1, 100) s;
DO $$
DECLARE
    s integer;
BEGIN
    FOR s IN 1..100 LOOP
        EXECUTE format('UPDATE r SET newest = greatest((SELECT max(id) FROM shard_%1$s.users), (SELECT max(id) FROM shard_%1$s.orders)),
                                     floor_id = (SELECT floor_id FROM shardid.shard_registry WHERE shard = %2$s),
                                     next = shardid.next_id(%2$s)
                        WHERE shard = %2$s', lpad(s::text, 4, '0'), s);
    END LOOP;
END
$$;
SELECT count(*) FILTER (WHERE next <= newest) || ' ' || count(*) FILTER (WHERE floor_id IS NULL OR floor_id < newest) || ' ' ||
       coalesce(string_agg(shard::text, ',' ORDER BY shard) FILTER (WHERE next <= newest), '-')
FROM r;
SQL
)
	read -r below floors_low which <<<"$result"
	echo "pg_restore -j $jobs: shards whose new id sorts at or below their restored ids: $below of 100 (floor below a table's newest: $floors_low; shards: $which)"
	expect "$below" = 0 "pg_restore -j $jobs: every shard's new id after its restored ids"
	cluster_stop "b$n" immediate
	n=$((n + 1))
done
finish
