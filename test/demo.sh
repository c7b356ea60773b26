#!/usr/bin/env bash
# test/demo.sh: shardid on a throwaway cluster (run it with `make demo`).
# Starts PostgreSQL with shardid preloaded, lays out four logical shards the
# way Instagram did (one schema each, same tables, one sequence per table),
# routes a few users to their shards, and prints their ids decoded.  The
# cluster is stopped and removed at the end.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

port=$SHARDID_PORT_BASE
cluster_init demo "$port" "shared_preload_libraries = 'shardid'" || exit 1
cluster_start demo || exit 1
use_cluster "$port"

run() {	# show a statement and its result, as psql would
	echo
	echo "demo=# $1"
	"$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -P footer=off -c "$1" || exit 1
}

"$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 <<'SQL' || exit 1
SET client_min_messages = warning;
CREATE EXTENSION shardid;
-- four logical shards: shard_0000 .. shard_0003, the same tables in each,
-- every id DEFAULT naming its own shard and its own sequence
DO $$
BEGIN
    FOR shard IN 0..3 LOOP
        EXECUTE format($f$
            CREATE SCHEMA %1$I;
            CREATE SEQUENCE %1$I.users_id_seq;
            CREATE TABLE %1$I.users (
                id      bigint PRIMARY KEY DEFAULT shardid.next_id(%2$s, nextval('%1$I.users_id_seq')),
                user_id bigint NOT NULL,
                name    text NOT NULL);
            CREATE SEQUENCE %1$I.photos_id_seq;
            CREATE TABLE %1$I.photos (
                id      bigint PRIMARY KEY DEFAULT shardid.next_id(%2$s, nextval('%1$I.photos_id_seq')),
                user_id bigint NOT NULL,
                caption text);
        $f$, format('shard_%s', lpad(shard::text, 4, '0')), shard);
    END LOOP;
END $$;
-- the application routes each user to logical shard user_id % 4
DO $$
DECLARE
    u record;
BEGIN
    FOR u IN SELECT * FROM (VALUES (31341, 'ada'), (4242, 'grace'), (7, 'edsger'), (1002, 'barbara')) v(user_id, name) LOOP
        EXECUTE format('INSERT INTO shard_%s.users (user_id, name) VALUES ($1, $2)', lpad((u.user_id % 4)::text, 4, '0'))
            USING u.user_id, u.name;
        EXECUTE format('INSERT INTO shard_%s.photos (user_id, caption) SELECT $1, $2 || '' photo '' || g FROM generate_series(1, 3) g',
                       lpad((u.user_id % 4)::text, 4, '0'))
            USING u.user_id, u.name;
    END LOOP;
END $$;
-- one bulk statement: 50,000 photos for one user in one shard
INSERT INTO shard_0001.photos (user_id, caption) SELECT 31341, 'bulk ' || g FROM generate_series(1, 50000) g;
SQL

run "SELECT u.user_id, u.name, u.id, d.* FROM (SELECT * FROM shard_0000.users UNION ALL SELECT * FROM shard_0001.users UNION ALL SELECT * FROM shard_0002.users UNION ALL SELECT * FROM shard_0003.users) u, shardid.decode(u.id) d ORDER BY u.id"
run "SELECT p.id, p.caption, shardid.id_time(p.id), shardid.id_shard(p.id), shardid.id_seq(p.id) FROM shard_0001.photos p ORDER BY p.id LIMIT 5"
run "SELECT count(*) AS photos, count(DISTINCT id) AS distinct_ids, min(shardid.id_time(id)) AS first, max(shardid.id_time(id)) AS last FROM shard_0001.photos"
run "SELECT format('shard_%s', lpad(shardid.id_shard(id)::text, 4, '0')) AS schema_of_this_id FROM (VALUES ((SELECT max(id) FROM shard_0002.photos))) v(id)"
run "EXPLAIN (COSTS OFF) SELECT count(*) FROM shard_0001.photos WHERE id >= shardid.min_id(now() - interval '1 minute')"
run "SELECT count(*) AS photos_of_the_last_minute FROM shard_0001.photos WHERE id >= shardid.min_id(now() - interval '1 minute')"
run "SELECT epoch, sign_bit_at, mode, shared_memory, max_lead_ms FROM shardid.info()"
cluster_stop demo
echo
echo "demo cluster stopped and removed"
