#!/usr/bin/env bash
# Past the lead limit a shard opens at most one new millisecond per
# millisecond of the clock, whoever asks.
#
# 1. A superuser raises the durable mark 30 s ahead of the clock
#    (raise_high_water(clock + 30 s)); then a role that may only connect
#    runs shardid.next_ids(3, 1000000) in a loop for about 3 s, in 4
#    sessions at once.  The newest id's time must stay within the raised
#    moment + shardid.max_lead_ms + the wall time that passed + 500 ms.
#    (1.2 went about 27 s past the raise: every call past the limit took
#    the next 977 ms of ids without waiting.)
# 2. The server's clock steps back 30 s (libfaketime's file, an NTP-like
#    step) while shard 4's ids are at the clock; the same loop must stay
#    within the ids' time before the step + max_lead_ms + the wall time that
#    passed + 500 ms.
# Exit 0: both loops made ids and stayed within those bounds.
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 106))
clock_file="$SHARDID_TMP/lead_behind.clock"
echo "+0" >"$clock_file"
chmod 666 "$clock_file"
app_server -c "$clock_file" lead $port || exit 1
q_at $port -c "CREATE EXTENSION shardid" -c "CREATE ROLE conn LOGIN" >/dev/null ||
	{ fail "setup"; finish; }
max_lead=$(q_at $port -c "SELECT max_lead_ms FROM shardid.info()")
now_ms() { date +%s%3N; }
clock_real() {	# the server's clock reads within a second of the real one
	local d
	d=$(q_at $port -c "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $(now_ms)")
	[ "${d#-}" -lt 1000 ]
}

# burst SHARD LABEL: 4 sessions of conn call next_ids(SHARD, 1000000) for
# about 3 s; prints the newest id's time (ms since 1970) and the calls made
burst() {
	local shard=$1 k end
	end=$(($(now_ms) + 3000))
	for k in 1 2 3 4; do
		(
			while [ "$(now_ms)" -lt "$end" ]; do
				q_at $port -U conn -c "SELECT min(id), max(id), count(*) FROM shardid.next_ids($shard, 1000000) id" \
					>>"$SHARDID_TMP/burst.$shard.$k" 2>>"$SHARDID_TMP/burst.$shard.err"
			done
		) &
	done
	wait
	cat "$SHARDID_TMP"/burst."$shard".[1-4] | tr '|' ' ' >"$SHARDID_TMP/burst.$shard"
	[ -s "$SHARDID_TMP/burst.$shard.err" ] && echo "$2: errors: $(sort "$SHARDID_TMP/burst.$shard.err" | uniq -c | head -3)"
	return 0
}
# check_burst SHARD LABEL START_MS SINCE_MS: the newest id of the burst is
# within START_MS + max_lead_ms + (now - SINCE_MS) + 500 ms
check_burst() {
	local shard=$1 label=$2 start=$3 since=$4 calls newest bound elapsed
	elapsed=$(($(now_ms) - since))
	calls=$(wc -l <"$SHARDID_TMP/burst.$shard")
	[ "$calls" -ge 1 ] || { fail "$label: no call of next_ids() made ids"; return 1; }
	newest=$(q_at $port -c "SELECT (extract(epoch FROM shardid.id_time($(sort -k2 -n "$SHARDID_TMP/burst.$shard" | tail -1 | cut -d' ' -f2))) * 1000)::bigint")
	bound=$((start + max_lead + elapsed + 500))
	echo "$label: $calls calls in $elapsed ms; newest id $((newest - start)) ms past the start, bound $((bound - start)) ms"
	expect_le "$newest" "$bound" "$label: the newest id's time (ms since 1970) within start + max_lead_ms + elapsed + 500 ms"
}

# 2, first (the raise of 1 holds every shard 30 s ahead): the clock steps
# back 30 s while shard 4's ids are at the clock
before=$(q_at $port -c "SELECT (extract(epoch FROM shardid.id_time(max(id))) * 1000)::bigint FROM shardid.next_ids(4, 1000) id")
since=$(now_ms)
echo "-30" >"$clock_file"
echo "clock stepped back: the server reads $(q_at $port -c "SELECT round(extract(epoch FROM clock_timestamp()) * 1000)::bigint - $since") ms from the real time"
burst 4 "clock 30 s back"
check_burst 4 "clock 30 s back, conn's 4 sessions of next_ids(4, 1000000)" "$(( before > since ? before : since ))" "$since"
echo "+0" >"$clock_file"
wait_until "the server's clock back to the real one" clock_real

# 1. the mark raised 30 s ahead
read -r raised since <<<"$(q_at $port -F' ' -c "
    SELECT (extract(epoch FROM shardid.raise_high_water(clock_timestamp() + interval '30 s')) * 1000)::bigint,
           (extract(epoch FROM clock_timestamp()) * 1000)::bigint")"
echo "mark raised to $((raised - since)) ms ahead of the clock (max_lead_ms = $max_lead)"
burst 3 "raised 30 s"
check_burst 3 "raised 30 s, conn's 4 sessions of next_ids(3, 1000000)" "$raised" "$since"
cluster_stop lead
finish
