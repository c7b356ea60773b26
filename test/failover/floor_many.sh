#!/usr/bin/env bash
# Raising the floors of many shards in one transaction, as ALTER EXTENSION
# shardid UPDATE from 1.2 and the step after pg_upgrade (SELECT
# shardid.raise_floor(shard) FROM shardid.shard_registry) do, holds no lock
# on the tables it has read: with max_locks_per_transaction = 10 (the lock
# table holds a few hundred locks), 400 shards of two tables each (over
# 1,600 relations to read) are registered in one transaction, then their
# floors raised again in one statement, with every floor right.  Reading
# them under locks held to the end failed with "out of shared memory".
# doctor() reports the lock table too small for pg_dump of 800 tables.
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 75))
app_server many $port "max_locks_per_transaction = 10" "max_connections = 20" || exit 1
q_at $port -c "CREATE EXTENSION shardid" >/dev/null || fail "CREATE EXTENSION"
# one transaction per shard (making the tables holds their locks)
for s in $(seq 400); do
	echo "CREATE SCHEMA m$s;
CREATE TABLE m$s.a (id bigint PRIMARY KEY);
CREATE TABLE m$s.b (id bigint PRIMARY KEY, a bigint);
CREATE INDEX ON m$s.b (a);
INSERT INTO m$s.a VALUES (shardid.make_id($((1000 + s)), $s, 1));
INSERT INTO m$s.b VALUES (shardid.make_id($((2000 + s)), $s, 2), NULL);"
done | q_at $port >/dev/null || fail "setup"
out=$(q_at $port -c "DO \$\$ BEGIN FOR s IN 1..400 LOOP PERFORM shardid.register_shard(s, 'm' || s); END LOOP; END \$\$" 2>&1)
echo "400 shards registered in one transaction: ${out:-ok}"
expect "$out" = "" "registering 400 shards in one transaction"
out=$(q_at $port -c "SELECT count(*) FROM (SELECT shardid.raise_floor(shard) FROM shardid.shard_registry) x" 2>&1)
echo "their floors raised in one statement: $out"
expect "$out" = 400 "raise_floor() of 400 shards in one statement"
wrong=$(q_at $port -c "SELECT count(*) FROM shardid.shard_registry
                       WHERE floor_id IS DISTINCT FROM shardid.make_id(2000 + shard, shard, 2)")
expect "$wrong" = 0 "floors that are not the newest id of their shard"
# and doctor() says that pg_dump, which locks every table at once, cannot
# (800 tables, a lock table of 200)
row=$(q_at $port -c "SELECT problem || ': ' || fix FROM shardid.doctor(scan_rows => false) WHERE object = 'max_locks_per_transaction'")
echo "doctor(): $row"
case "$row" in
"lock table too small for pg_dump: ALTER SYSTEM SET max_locks_per_transaction = "4[89]*"; then restart the server (README, Sizing the lock table).") ;;
*) fail "doctor() on the lock table (want a setting of about 48: 800 tables x 1.2 / 20): $row" ;;
esac
cluster_stop many fast
finish
