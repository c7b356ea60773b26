#!/usr/bin/env bash
# tools/demo.sh: shardid on a throwaway cluster (run it with `make demo`).
# Starts PostgreSQL with shardid preloaded, lays out four logical shards the
# way Instagram did (one schema each, same tables, one sequence per table),
# routes a few users to their shards, and prints their ids decoded: every
# statement as psql shows it, with its output.  The cluster is stopped and
# removed at the end.  README's Getting started shows part of this output;
# test/tools/readme_demo.sh checks that it is what this prints.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh servers
echo "starting a throwaway PostgreSQL $("$PG_CONFIG" --version | sed 's/^PostgreSQL //') with shardid preloaded"

port=$SHARDID_PORT_BASE
cluster_init demo "$port" "shared_preload_libraries = 'shardid'" || exit 1
cluster_start demo || exit 1
use_cluster "$port"

run() {	# show a statement and its result, as psql would
	echo
	echo "demo=# $1"
	"$PG_BIN/psql" -X -v ON_ERROR_STOP=1 -P footer=off -c "$1" || exit 1
}

run "CREATE EXTENSION shardid"
echo
echo "-- the epoch ids count from, set once on every server before the first id (README: Setup)"
run "ALTER SYSTEM SET shardid.epoch = '2026-01-01 00:00:00+00'"
run "SELECT pg_reload_conf()"
echo
echo "-- the tables, designed once in a template schema"
run "CREATE SCHEMA app_template"
run "CREATE TABLE app_template.users (id bigint PRIMARY KEY, user_id bigint NOT NULL UNIQUE, name text NOT NULL)"
run "CREATE TABLE app_template.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL REFERENCES app_template.users (user_id), caption text)"
echo
echo "-- four logical shards made from it, registered"
run "CALL shardid.add_shards('app_template', '{0, 1, 2, 3}')"
run "SELECT * FROM shardid.shards ORDER BY shard"
echo
echo "-- the application routes each user to logical shard user_id % 4"
for u in "31341 ada" "4242 grace" "7 edsger" "1002 barbara"; do
	set -- $u
	schema=$("$PG_BIN/psql" -X -q -At -c "SELECT shardid.shard_schema($1 % 4)") || exit 1
	run "INSERT INTO $schema.users (user_id, name) VALUES ($1, '$2')"
	run "INSERT INTO $schema.photos (user_id, caption) SELECT $1, '$2 photo ' || g FROM generate_series(1, 3) g"
done
echo
echo "-- one bulk statement: 50,000 photos for one user in one shard"
run "INSERT INTO shard_0001.photos (user_id, caption) SELECT 31341, 'bulk ' || g FROM generate_series(1, 50000) g"

run "SELECT u.user_id, u.name, u.id, d.* FROM (SELECT * FROM shard_0000.users UNION ALL SELECT * FROM shard_0001.users UNION ALL SELECT * FROM shard_0002.users UNION ALL SELECT * FROM shard_0003.users) u, shardid.decode(u.id) d ORDER BY u.id"
run "SELECT p.id, p.caption, shardid.id_time(p.id), shardid.id_shard(p.id), shardid.id_seq(p.id) FROM shard_0001.photos p ORDER BY p.id LIMIT 5"
run "SELECT count(*) AS photos, count(DISTINCT id) AS distinct_ids, min(shardid.id_time(id)) AS first, max(shardid.id_time(id)) AS last FROM shard_0001.photos"
# routing: the application keeps a map of logical shard -> server (here all
# four live on this one server; in production, a few shards per server)
"$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -c "CREATE TABLE shard_map (shard int PRIMARY KEY, server text NOT NULL);
    INSERT INTO shard_map SELECT s, format('db%s.example.internal', s % 2 + 1) FROM generate_series(0, 3) s" || exit 1
run "SELECT u.user_id, u.user_id % 4 AS shard, m.server, shardid.shard_schema(u.user_id % 4) AS schema FROM (VALUES (31341), (4242)) u(user_id) JOIN shard_map m ON m.shard = u.user_id % 4"
run "SELECT p.id, shardid.id_shard(p.id) AS shard, m.server, shardid.id_schema(p.id) AS schema FROM (SELECT max(id) AS id FROM shard_0002.photos) p JOIN shard_map m ON m.shard = shardid.id_shard(p.id)"
run "SELECT * FROM shardid.doctor()"
run "EXPLAIN (COSTS OFF) SELECT count(*) FROM shard_0001.photos WHERE id >= shardid.min_id(now() - interval '1 minute')"
run "SELECT count(*) AS photos_of_the_last_minute FROM shard_0001.photos WHERE id >= shardid.min_id(now() - interval '1 minute')"
run "SELECT epoch, sign_bit_at, mode, shared_memory, max_lead_ms FROM shardid.info()"
cluster_stop demo
echo
echo "demo cluster stopped and removed"
