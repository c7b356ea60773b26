#!/usr/bin/env bash
# test/bench/strict.sh: shardid's cost next to what it replaces, measured
# side by side in one run on a throwaway cluster with shardid preloaded.
# A benchmark, not a test: it prints figures (medians of REPS runs, the
# contenders alternating), and its exit status never depends on them.
#
#   make bench                 (or: REPS=5 ROWS=2000000 test/bench/strict.sh)
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh

REPS=${REPS:-3}
ROWS=${ROWS:-2000000}
INSERT_ROWS=${INSERT_ROWS:-1000000}
port=$SHARDID_PORT_BASE
cluster_init bench "$port" "shared_preload_libraries = 'shardid'" "synchronous_commit = off" || exit 1
cluster_start bench || exit 1
use_cluster "$port"

q >/dev/null <<'SQL'
CREATE EXTENSION shardid;
CREATE SCHEMA s5;
CREATE SEQUENCE s5.t_id_seq;
CREATE SEQUENCE s5.loop_seq;
SQL

# ms SQL: wall time of one statement, in ms
ms() {
	"$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -c '\timing on' -c "$1" |
		sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}
median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

echo "shardid benchmark: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, $("$PG_BIN/postgres" --version)"
echo "max_lead_ms = $(q -c 'SHOW shardid.max_lead_ms')"
echo

# 1. per call, tight loop over generate_series, net of the loop itself.
# Below the ceiling: calls go round 64 shards, each shard getting
# consecutive seqs (n / 64), so no shard needs more than 1024 ids in a ms.
# At the ceiling: every call on one shard.
src="FROM (SELECT nextval('s5.loop_seq') AS n FROM generate_series(1, $ROWS)) x"
declare -A calls=(
	[loop]="SELECT count(i) FROM generate_series(1, $ROWS) i"
	[loop64]="SELECT count((i % 64)::int) FROM generate_series(1, $ROWS) i"
	[nextval]="SELECT count((n % 64)::int + n / 64) $src"
	[next_id_seq]="SELECT count(shardid.next_id((n % 64)::int, n / 64)) $src"
	[next_id_free]="SELECT count(shardid.next_id((i % 64)::int)) FROM generate_series(1, $ROWS) i"
	[one_shard]="SELECT count(shardid.next_id(5, nextval('s5.t_id_seq'))) FROM generate_series(1, $ROWS) i"
)
order="loop loop64 nextval next_id_seq next_id_free one_shard"
declare -A t
for r in $(seq "$REPS"); do
	for c in $order; do
		t[$c]="${t[$c]:-} $(ms "${calls[$c]}")"
	done
done
declare -A med
for c in $order; do med[$c]=$(echo "${t[$c]}" | median); done
net() { awk -v m="$1" -v l="$2" -v n="$ROWS" 'BEGIN {printf "%.0f", (m - l) * 1e6 / n}'; }
echo "1. per call: $ROWS calls in one SELECT, median of $REPS runs"
printf '   %-34s %10s %14s\n' "contender" "median ms" "ns/call, net"
printf '   %-34s %10.1f %14s\n' "loop alone" "${med[loop]}" "-"
printf '   %-34s %10.1f %14s\n' "nextval() alone" "${med[nextval]}" "$(net "${med[nextval]}" "${med[loop]}")"
printf '   %-34s %10.1f %14s\n' "next_id(shard, nextval())" "${med[next_id_seq]}" "$(net "${med[next_id_seq]}" "${med[loop]}")"
printf '   %-34s %10.1f %14s\n' "next_id(shard), no sequence" "${med[next_id_free]}" "$(net "${med[next_id_free]}" "${med[loop64]}")"
awk -v a="${med[next_id_seq]}" -v b="${med[nextval]}" \
	'BEGIN {printf "   next_id(shard, nextval()) / nextval() alone: %.2fx\n", a / b}'
awk -v a="${med[nextval]}" -v b="${med[next_id_free]}" -v l="${med[loop]}" -v l64="${med[loop64]}" \
	'BEGIN {printf "   nextval() alone / next_id(shard): %.1fx (net of the loop)\n", (a - l) / (b - l64)}'
awk -v m="${med[one_shard]}" -v n="$ROWS" \
	'BEGIN {printf "   one session on one shard, next_id(5, nextval()): %.0f ids/s = %.1f%% of the 1,024,000 ids/s ceiling\n", n / (m / 1000), 100 * n / (m / 1000) / 1024000}'
echo

# 2. INSERT of INSERT_ROWS rows into logged tables with a primary key
echo "2. INSERT of $INSERT_ROWS rows, logged table, primary key, median of $REPS"
declare -A defaults=(
	[bigserial]="bigserial PRIMARY KEY"
	[next_id_seq]="bigint PRIMARY KEY DEFAULT shardid.next_id(5, nextval('s5.t_id_seq'))"
	[next_id_free]="bigint PRIMARY KEY DEFAULT shardid.next_id(6)"
)
iorder="bigserial next_id_seq next_id_free"
declare -A it
for r in $(seq "$REPS"); do
	for c in $iorder; do
		q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS s5.ins; CREATE TABLE s5.ins (id ${defaults[$c]}, v int); CHECKPOINT"
		it[$c]="${it[$c]:-} $(ms "INSERT INTO s5.ins (v) SELECT g FROM generate_series(1, $INSERT_ROWS) g")"
	done
done
base=$(echo "${it[bigserial]}" | median)
printf '   %-14s %10s %10s %14s\n' "id" "median ms" "vs bigserial" "runs (ms)"
for c in $iorder; do
	med=$(echo "${it[$c]}" | median)
	printf '   %-14s %10.1f %10.2fx  %s\n' "$c" "$med" "$(awk -v a="$med" -v b="$base" 'BEGIN {print a / b}')" "${it[$c]}"
done
echo

# 3. what shardid.max_lead_ms buys: one session stamping one shard
echo "3. one session on one shard, $ROWS x next_id(5, nextval()), by shardid.max_lead_ms (median of $REPS)"
printf '   %-12s %10s %12s %10s\n' "max_lead_ms" "median ms" "ids/s" "ceiling"
for lead in 0 10 100 1000; do
	q -c "ALTER SYSTEM SET shardid.max_lead_ms = $lead" -c "SELECT pg_reload_conf()" >/dev/null
	sleep 0.3
	runs=""
	for r in $(seq "$REPS"); do runs="$runs $(ms "${calls[one_shard]}")"; done
	m=$(echo "$runs" | median)
	awk -v l="$lead" -v m="$m" -v n="$ROWS" \
		'BEGIN {printf "   %-12s %10.1f %12.0f %9.1f%%\n", l, m, n / (m / 1000), 100 * n / (m / 1000) / 1024000}'
done
q -c "ALTER SYSTEM RESET shardid.max_lead_ms" -c "SELECT pg_reload_conf()" >/dev/null
echo
q -c "SELECT 'clock waits: ' || clock_waits || ', ids stamped while the clock was behind: ' || clock_behind_calls FROM shardid.info()"
cluster_stop bench
