#!/usr/bin/env bash
# A shard past the lead limit because the clock stepped back, twice: it
# opens one new millisecond per millisecond of the clock and never stalls.
#
# The server's clock steps back 10 s, then 10 s more (libfaketime, an
# offset file).  After each step a session asks for 200,000 ids of one
# shard (about 195 ms of id time).  Past the limit a shard opens a new
# millisecond only at a clock reading other than the last one that opened
# one: the first version of that rule asked for a later reading, so after
# the second step no millisecond opened until the clock caught up with the
# first step's readings, 10 s later (about 10,000 waits for the clock).
# Here the waits stay near the number of milliseconds the ids need, and the
# shard's lead stays at what the steps made it.
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 79))
offset_file="$SHARDID_TMP/faketime.rc"
echo "+0" >"$offset_file"
chmod 666 "$offset_file"
cluster_init steps $port "$strict_conf" || exit 1
# shellcheck disable=SC2046
cluster_start steps $(faketime_env "$offset_file") || { fail "start under libfaketime"; finish; }
use_cluster $port
q -c "CREATE DATABASE app" >/dev/null
q_at $port -c "CREATE EXTENSION shardid" -c "SELECT count(*) FROM shardid.next_ids(20, 10000)" >/dev/null ||
	fail "first ids"
for step in -10 -20; do
	echo "$step" >"$offset_file"
	waits0=$(q_at $port -c "SELECT waits FROM shardid_internal.shard_stamps() WHERE shard = 20")
	q_at $port -c "SELECT count(*) FROM shardid.next_ids(20, 200000)" >/dev/null || fail "ids after the step to $step s"
	read -r waits lead <<<"$(q_at $port -F' ' -c "SELECT waits - $waits0, lead_ms FROM shardid_internal.shard_stamps() WHERE shard = 20")"
	echo "clock at $step s: 200,000 ids of shard 20 waited $waits times for the clock; the shard's lead is now $lead ms"
	expect_le "$waits" 2000 "waits for the clock after the step to $step s"
	expect_le "$lead" 25000 "the shard's lead after the step to $step s"
done
cluster_stop steps fast
finish
