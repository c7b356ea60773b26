#!/usr/bin/env bash
# The registry's writers are checked however rows arrive, logical
# replication included.
#
# registry_guard is an ordinary BEFORE trigger, and PUBLIC has INSERT and
# DELETE on shardid.shard_registry.  Logical replication applies rows with
# session_replication_role = replica, where ordinary triggers do not fire.
# On PostgreSQL 16+, mallory, who holds pg_create_subscription and CREATE
# on the database (no superuser, not the database's owner, no grant on the
# registry), subscribes with run_as_owner = true to a publication of a
# table shardid.shard_registry on a server of hers (here another database
# of the same server, published by her role alice) holding the row
# (77, 'pg_catalog', '2020-01-01', 'postgres').  The initial copy writes it
# into the registry past the guard: shard 77 is routed to pg_catalog, and
# registered_by names a superuser.  Deletes replicate the same way.
# Exit 0: the row did not arrive.
SHARDID_TMP=""		# a server of its own: wal_level = logical, passwords
. "$(dirname "$0")/../lib.sh" servers
chmod 777 "$SHARDID_TMP"
if [ "$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')" -lt 16 ]; then
	echo "skipped: pg_create_subscription and run_as_owner are PostgreSQL 16+"
	exit 77
fi

port=$((SHARDID_PORT_BASE + 64))
cluster_init subs $port "wal_level = logical" || exit 1
sed -i '1i host all alice 127.0.0.1/32 scram-sha-256' "$SHARDID_TMP/subs/pg_hba.conf"
cluster_start subs || exit 1
use_cluster $port
q >/dev/null <<'SQL'
CREATE ROLE alice LOGIN REPLICATION PASSWORD 'alice-pw';
CREATE ROLE mallory LOGIN;
CREATE DATABASE pub;
CREATE DATABASE app;
SQL
# her publisher (in real life a server of her own)
q -d pub >/dev/null <<'SQL'
CREATE SCHEMA shardid AUTHORIZATION alice;
SET ROLE alice;
CREATE TABLE shardid.shard_registry (shard integer PRIMARY KEY, schema_name name NOT NULL UNIQUE,
    registered_at timestamptz NOT NULL, registered_by name NOT NULL);
INSERT INTO shardid.shard_registry VALUES (77, 'pg_catalog', '2020-01-01', 'postgres');
RESET ROLE;
CREATE PUBLICATION pub FOR TABLE shardid.shard_registry;
SELECT pg_create_logical_replication_slot('msub', 'pgoutput');
SQL
q -d app >/dev/null <<'SQL'
CREATE EXTENSION shardid;
GRANT pg_create_subscription TO mallory;
GRANT CREATE ON DATABASE app TO mallory;
SQL
out=$(q -d app -U mallory -c "CREATE SUBSCRIPTION msub
    CONNECTION 'host=127.0.0.1 port=$port dbname=pub user=alice password=alice-pw'
    PUBLICATION pub WITH (run_as_owner = true, create_slot = false, copy_data = true)" 2>&1)
echo "mallory's subscription: ${out:-created}"
arrived() { [ -n "$(q -d app -c "SELECT 1 FROM shardid.shard_registry WHERE shard = 77")" ]; }
# the initial copy takes a moment; give it 30 s
for i in $(seq 300); do
	arrived && break
	sleep 0.1
done
if arrived; then
	fail "mallory's subscription wrote the registry: $(q -d app -c "SELECT * FROM shardid.shard_registry WHERE shard = 77")"
fi
q -d app -c "DROP SUBSCRIPTION IF EXISTS msub" >/dev/null 2>&1
finish
