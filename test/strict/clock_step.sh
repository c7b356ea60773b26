#!/usr/bin/env bash
# The wall clock steps back between two batches written by different
# sessions (5 ms steps within a batch, then 10 s), with the server running under libfaketime:
# no id repeats, each batch sorts after the one before, no call hangs,
# and shardid.info() reports the step.
. "$(dirname "$0")/../lib.sh" servers

need_faketime

offset_file="$SHARDID_TMP/faketime.rc"
echo "+0" >"$offset_file"
chmod 666 "$offset_file"	# the server writes it too (batch 2)
cluster_stop "$SHARDID_CLUSTER"
# shellcheck disable=SC2046
cluster_start "$SHARDID_CLUSTER" $(faketime_env "$offset_file") || { fail "server did not start under libfaketime"; finish; }

q <<'SQL'
CREATE SCHEMA s4;
CREATE SEQUENCE s4.t_id_seq;
CREATE TABLE s4.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(4, nextval('s4.t_id_seq')),
                   batch int, at timestamptz DEFAULT clock_timestamp());
CREATE TABLE s4.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(4), batch int);
SQL

batch() {	# batch N [STEP]: one session inserts 20,000 rows into each
	# table; with STEP, the session itself sets the clock back by 5 ms three
	# times in the middle of the batch (COPY to libfaketime's file, in the
	# same query string as the inserts that follow), so that the steps fall
	# among the batch's calls however fast or busy the machine is
	local waits0 k sql quarter="INSERT INTO s4.t (batch) SELECT $1 FROM generate_series(1, 5000);
	                           INSERT INTO s4.u (batch) SELECT $1 FROM generate_series(1, 5000);"
	waits0=$(q -c "SELECT clock_waits FROM shardid.info()")
	sql=$quarter
	for k in 1 2 3; do
		[ -n "${2:-}" ] && sql="$sql COPY (SELECT '$(printf -- '-0.%03d' $((5 * k)))') TO '$offset_file';"
		sql="$sql $quarter"
	done
	q -c "$sql" || fail "batch $1 failed"
	# no call hangs: none waited for the clock
	expect "$(($(q -c "SELECT clock_waits FROM shardid.info()") - waits0))" = 0 "batch $1: calls that waited for the clock"
}

behind() { q -c "SELECT clock_behind_calls FROM shardid.info()"; }

batch 1
batch 2 step		# 5 ms back, three times, in the middle of a batch
behind_5ms=$(behind)
echo "ids stamped while the clock was 5 ms behind: $behind_5ms"
expect_ge "$behind_5ms" 1 "clock_behind_calls after 5 ms steps"
echo "-10" >"$offset_file"		# 10 s back, between two sessions
batch 3
# the step the rows' own clock readings show: batch 2's last against
# batch 3's first (each row's at is read just after its id's clock)
seen_ms=$(q -c "SELECT floor(extract(epoch FROM (SELECT max(at) FROM s4.t WHERE batch = 2)
                                         - (SELECT min(at) FROM s4.t WHERE batch = 3)) * 1000)")
echo "server clock of batch 2's end minus batch 3's start: $seen_ms ms"
expect_ge "$seen_ms" 1 "batch 3 began while the 10 s step was in force (within 10 s of batch 2's end)"

for table in s4.t s4.u; do
	read -r rows distinct <<<"$(q -F' ' -c "SELECT count(*), count(DISTINCT id) FROM $table")"
	expect "$rows" = 60000 "$table rows"
	expect "$distinct" = 60000 "$table distinct ids"
	for b in 2 3; do
		after=$(q -c "SELECT (SELECT min(id) FROM $table WHERE batch = $b) >
		                     (SELECT max(id) FROM $table WHERE batch = $((b - 1)))")
		expect "$after" = t "$table: batch $b sorts after batch $((b - 1))"
	done
done
read -r behind step_ms <<<"$(q -F' ' -c "SELECT clock_behind_calls, max_clock_step_back_ms FROM shardid.info()")"
echo "info(): clock_behind_calls=$behind max_clock_step_back_ms=$step_ms"
expect_ge "$behind" 1 "clock_behind_calls"
expect_ge "$step_ms" $((seen_ms - 1)) "max_clock_step_back_ms (at least the step the rows show)"

echo "+0" >"$offset_file"
cluster_stop "$SHARDID_CLUSTER" immediate
cluster_start "$SHARDID_CLUSTER"
finish
