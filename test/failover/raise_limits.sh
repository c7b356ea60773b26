#!/usr/bin/env bash
# raise_high_water() keeps to the clock unless told otherwise: the mark is
# durable and server-wide (every database, after every restart), so a
# moment more than an hour ahead of the clock, or less than a year before
# the sign bit, is refused with what it would do and how to force it.  In
# 1.2 it took any moment: doctor() printed raise_high_water() of a stored
# id's time, and a row 60 ms before the sign bit, applied, moved every shard
# of every database there (every next_id() then failed after a restart).
# Exit 0: both refusals (messages pinned), the mark unchanged by them, and
# force => true raising it, with the next id after it.
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 48))
app_server raise $port || exit 1
q_at $port -c "CREATE EXTENSION shardid" >/dev/null || exit 1

out=$(q_at $port -c "SELECT shardid.raise_high_water((SELECT sign_bit_at FROM shardid.info()) - interval '60 ms')" 2>&1)
echo "60 ms before the sign bit: $out"
expect "$(echo "$out" | head -1)" = "ERROR:  the moment is less than a year before the sign bit of the ids" \
	"raise_high_water() near the sign bit"
out=$(q_at $port -c "SELECT shardid.raise_high_water(clock_timestamp() + interval '2 hours')" 2>&1)
echo "two hours ahead: $out"
echo "$out" | head -1 | grep -Eq "^ERROR:  the moment is 7[12][0-9]{2} s ahead of this server's clock$" ||
	fail "raise_high_water() two hours ahead: $out"
expect "$(q_at $port -c "SELECT coalesce(high_water_mark < clock_timestamp() + interval '1 hour', true) FROM shardid.info()")" = t \
	"the mark after the refused calls"

read -r raised later <<<"$(q_at $port -F' ' -c "
    SELECT shardid.raise_high_water(clock_timestamp() + interval '2 hours', force => true) >= clock_timestamp() + interval '2 hours' - interval '1 s',
           shardid.id_time(shardid.next_id(1, 1)) >= clock_timestamp() + interval '2 hours' - interval '1 s'")"
expect "$raised $later" = "t t" "raise_high_water(two hours ahead, force => true): the mark, and the next id after it"
cluster_stop raise
finish
