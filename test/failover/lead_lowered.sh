#!/usr/bin/env bash
# shardid.max_lead_ms lowered (10000 -> 0, reload) while a shard's ids are
# seconds ahead of the clock: the new setting applies to new borrowing
# only; calls do not wait for the existing lead to drain, so the ids they
# return are still ahead of the clock when they return.  (1.1: a one-row
# INSERT waited the whole lead, 5,948 ms for a lead of 6.6 s.)
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 60))
app_server lead $port "shardid.max_lead_ms = 10000" || exit 1
q_at $port <<'SQL' >/dev/null
CREATE EXTENSION shardid;
CREATE SCHEMA s4;
CREATE TABLE s4.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(4), phase int);
SQL
# borrow until the shard is at least 3 s ahead (SHARDID_DRIVE_LIMIT)
borrow_ahead 4 3000 -p $port -d app || finish
q_at $port -c "ALTER SYSTEM SET shardid.max_lead_ms = 0" >/dev/null
reload_conf -p $port -d app
setting=$(q_at $port -c "SHOW shardid.max_lead_ms")
ahead1=$(q_at $port -c "INSERT INTO s4.t (phase) VALUES (1) RETURNING shardid.id_time(id) > clock_timestamp()")
ahead2=$(q_at $port -c "WITH i AS (INSERT INTO s4.t (phase) SELECT 2 FROM generate_series(1, 5000) RETURNING id)
                        SELECT shardid.id_time(max(id)) > clock_timestamp() FROM i")
echo "max_lead_ms=$setting: one-row INSERT returned an id still ahead of the clock: $ahead1; 5000 rows: $ahead2"
expect "$setting $ahead1 $ahead2" = "0 t t" "ids after lowering max_lead_ms, without waiting for the lead to drain"
expect "$(q_at $port -c "SELECT count(DISTINCT id) FROM s4.t")" = 5001 "distinct ids"
cluster_stop lead
finish
