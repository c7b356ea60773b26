#!/usr/bin/env bash
# The origins shardid_floors_<database oid> across many databases.
#
# Every CREATE EXTENSION shardid (and apply_floors()) makes one origin per
# database.  A server with max_replication_slots = 2 (what shardid's own
# two origins need) holds shardid in 6 databases:
#   - it restarts (crash and clean): these origins are never advanced, so
#     they take no origin slot, and doctor() does not count them;
#   - 4 of the databases are dropped (and shardid dropped in a 5th); the
#     next CREATE EXTENSION shardid leaves no shardid_floors_ origin of a
#     database that no longer exists.  Found on 108764a: the 4 stay for
#     good.  Replication origin ids are 16 bits: a server where test or CI
#     databases with shardid come and go runs out after 65,535, and then
#     CREATE SUBSCRIPTION, CREATE EXTENSION shardid and apply_floors() fail
#     ("could not find free replication origin ID"); an origin left for an
#     oid that a new database gets again (CREATE DATABASE ... OID, or the
#     oid counter wrapping) says that the floors of a database this server
#     never saw are applied.
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 181))
app_server origins $port "max_replication_slots = 2" "max_wal_senders = 0" || { fail "server did not start"; finish; }
for i in 1 2 3 4 5 6; do
	q -c "CREATE DATABASE d$i" >/dev/null && PGDATABASE=d$i q -c "CREATE EXTENSION shardid" >/dev/null ||
		fail "shardid in database d$i"
done
floors() { q -c "SELECT count(*) FROM pg_replication_origin WHERE roname LIKE 'shardid\_floors\_%'"; }
echo "6 databases with shardid: $(floors) shardid_floors_ origins"
cluster_stop origins immediate && cluster_start origins && ready $port || fail "restart after a crash"
cluster_stop origins fast && cluster_start origins && ready $port || fail "clean restart"
expect "$(PGDATABASE=d1 q -c "SELECT count(*) FROM shardid.doctor() WHERE problem = 'too few replication origin slots'")" = 0 \
	"doctor(): the floors origins counted as slots"
expect "$(PGDATABASE=d1 q -c "SELECT shardid.next_id(1) > 0")" = t "an id after the restarts"

for i in 1 2 3 4; do q -c "DROP DATABASE d$i" >/dev/null || fail "DROP DATABASE d$i"; done
PGDATABASE=d5 q -c "DROP EXTENSION shardid" >/dev/null || fail "DROP EXTENSION in d5"
q -c "CREATE DATABASE d7" >/dev/null && PGDATABASE=d7 q -c "CREATE EXTENSION shardid" >/dev/null || fail "shardid in d7"
stale=$(q -c "SELECT count(*) FROM pg_replication_origin o
              WHERE o.roname LIKE 'shardid\_floors\_%'
                AND NOT EXISTS (SELECT FROM pg_database d WHERE o.roname = 'shardid_floors_' || d.oid)")
echo "4 databases dropped, shardid dropped in one, then CREATE EXTENSION shardid: $(floors) shardid_floors_ origins, $stale of databases that no longer exist"
expect "$stale" = 0 "shardid_floors_ origins of dropped databases"
cluster_stop origins fast
finish
