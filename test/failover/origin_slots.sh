#!/usr/bin/env bash
# Too few replication origin slots for shardid's two origins, with shardid
# preloaded: the server refuses to start with a FATAL that names shardid
# and the setting, never a PANIC in redo.  On a primary with both origins
# checkpointed, and on a standby.  (1.1: the primary stopped with
# "PANIC: could not find free replication state slot", the standby died in
# redo at the primary's first id.)
. "$(dirname "$0")/../lib.sh" failover

if [ "$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')" -ge 18 ]; then
	setting=max_active_replication_origins
else
	setting=max_replication_slots
fi
primary=$((SHARDID_PORT_BASE + 65))
standby=$((primary + 1))
cluster_init primary $primary "shared_preload_libraries = 'shardid'" || exit 1
cluster_start primary || exit 1
use_cluster $primary
q -c "CREATE DATABASE app" >/dev/null
q_at $primary -c "CREATE EXTENSION shardid" -c "SELECT shardid.next_id(1)" -c "CHECKPOINT" >/dev/null || fail "first id"
standby_copy standby $standby $primary || finish
cluster_conf standby "$setting = 1"
if cluster_start standby >/dev/null 2>&1; then
	fail "the standby started with $setting = 1"
	cluster_stop standby immediate
fi
msg=$(grep -oE "(FATAL|PANIC): .*" "$SHARDID_TMP/standby.log" | head -1)
echo "standby with $setting = 1: $msg"
expect "$msg" = "FATAL:  shardid needs 2 replication origin slots, but $setting is 1" "the standby's message"

cluster_stop primary fast
cluster_conf primary "$setting = 1"
if cluster_start primary >/dev/null 2>&1; then
	fail "the primary started with $setting = 1"
	cluster_stop primary immediate
fi
msg=$(grep -oE "(FATAL|PANIC): .*" "$SHARDID_TMP/primary.log" | head -1)
echo "primary with $setting = 1: $msg"
expect "$msg" = "FATAL:  shardid needs 2 replication origin slots, but $setting is 1" "the primary's message"
expect "$(grep -c PANIC "$SHARDID_TMP/primary.log" "$SHARDID_TMP/standby.log" | awk -F: '{s += $2} END {print s}')" = 0 "no PANIC"
cluster_conf primary "$setting = 10"
cluster_start primary || fail "the primary did not start with $setting = 10"
expect "$(q_at $primary -c "SELECT high_water_origin AND epoch_origin AND origin_slots = 10 FROM shardid.info()")" = t "info()"
expect "$(q_at $primary -c "SELECT high_water_origin AND epoch_origin AND origin_slots = 10 FROM shardid.mark_status()")" = t "mark_status() (deprecated)"
cluster_stop primary
finish
