#!/usr/bin/env bash
# test/bench/citus.sh: shardid's ids on Citus beside Citus's own bigserial,
# in the same cluster and the same tenant schema (so on the same worker):
# tenant_7.s takes its ids from the shardid.set_id() trigger
# (citus_use_trigger(), shard 7), tenant_7.b is a bigserial table.  A
# coordinator and two workers on this machine (`. test/lib.sh citus`, which
# builds Citus once and caches it; SHARDID_PG_CACHE says where).
#
# A benchmark, never a test: it prints figures and writes them to
# test/bench/results-citus-pgNN.md; its exit status never depends on them.
# The two tables alternate within each repetition (the one that goes first
# changes every repetition), each is emptied before each run, and the
# tables give the median, min and max of REPS runs and the ratio
# shardid / bigserial of every repetition.
#   - one-row INSERT (pgbench, PGBENCH_SECONDS each): CLIENTS clients
#     through the coordinator; CLIENTS clients through each of the three
#     nodes at once (Citus's query from any node)
#   - bulk: INSERT ... SELECT of ROWS rows from generate_series() through
#     the coordinator (rows pulled to it and sent on), and from a table of
#     the same tenant (pushed down to the worker)
#
#   REPS=5 ROWS=200000 PGBENCH_SECONDS=10 CLIENTS=2 PG_CONFIG=... test/bench/citus.sh
# A quick run that proves the script (figures of no value):
#   REPS=1 ROWS=2000 PGBENCH_SECONDS=1 OUT=/tmp test/bench/citus.sh
. "$(dirname "$0")/../lib.sh" citus

REPS=${REPS:-5}
ROWS=${ROWS:-200000}
PGBENCH_SECONDS=${PGBENCH_SECONDS:-10}
CLIENTS=${CLIENTS:-2}
OUT=${OUT:-test/bench}
major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
results="$OUT/results-citus-pg$major.md"

citus_start || { echo "citus.sh: the Citus cluster did not start" >&2; exit 1; }
at "$COORD" -c "CREATE SCHEMA tenant_7" \
	-c "CREATE TABLE tenant_7.s (id bigint PRIMARY KEY, v int)" \
	-c "SELECT shardid.citus_use_trigger('tenant_7.s', 7)" \
	-c "CREATE TABLE tenant_7.b (id bigserial PRIMARY KEY, v int)" \
	-c "CREATE TABLE tenant_7.src (v int)" \
	-c "INSERT INTO tenant_7.src SELECT generate_series(1, $ROWS)" >/dev/null || exit 1
[ "$(node_of tenant_7)" != "" ] || { echo "citus.sh: tenant_7 is not placed" >&2; exit 1; }
for t in s b; do
	echo "INSERT INTO tenant_7.$t (v) VALUES (1);" >"$SHARDID_TMP/one.$t.sql"
done

# tps T PORT...: one-row INSERTs into tenant_7.T, CLIENTS clients through
# each PORT at once for PGBENCH_SECONDS; the sum of their rows per second
tps() {
	local t=$1 port pids=() sum=0 n
	shift
	at "$COORD" -c "TRUNCATE tenant_7.$t" >/dev/null
	for port in "$@"; do
		PGHOST=$SHARDID_TMP PGPORT=$port PGUSER=postgres PGDATABASE=app \
			"$PG_BIN/pgbench" -n -c "$CLIENTS" -T "$PGBENCH_SECONDS" -f "$SHARDID_TMP/one.$t.sql" \
			>"$SHARDID_TMP/pgbench.$t.$port.log" 2>&1 &
		pids+=($!)
	done
	wait "${pids[@]}"
	for port in "$@"; do
		n=$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$SHARDID_TMP/pgbench.$t.$port.log")
		[ -n "$n" ] || { echo "citus.sh: pgbench failed: $(tail -3 "$SHARDID_TMP/pgbench.$t.$port.log")" >&2; echo failed; return; }
		sum=$(awk -v a="$sum" -v b="$n" 'BEGIN { printf "%.0f", a + b }')
	done
	echo "$sum"
}
# bulk T FROM: ms of one INSERT ... SELECT of ROWS rows into tenant_7.T
bulk() {
	local out
	at "$COORD" -c "TRUNCATE tenant_7.$1" >/dev/null
	out=$(PGHOST=$SHARDID_TMP PGPORT=$COORD PGUSER=postgres PGDATABASE=app "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 \
		-c '\timing on' -c "INSERT INTO tenant_7.$1 (v) $2" 2>&1) || { echo "citus.sh: $out" >&2; echo failed; return; }
	echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | awk '{ printf "%.0f", $1 }'
}
stats() {	# stats "v1 v2 ...": median min max
	echo "$1" | tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -g |
		awk '{a[NR]=$1} END {if (NR == 0) print "- - -"; else print a[int((NR+1)/2)], a[1], a[NR]}'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "-" }'; }

declare -A val=()
cases="coord all gs push"
for rep in $(seq "$REPS"); do
	if [ $((rep % 2)) = 1 ]; then order="s b"; else order="b s"; fi
	for t in $order; do
		val[coord.$t]+=" $(tps "$t" "$COORD")"
		val[all.$t]+=" $(tps "$t" "$COORD" "$W1" "$W2")"
		val[gs.$t]+=" $(bulk "$t" "SELECT generate_series(1, $ROWS)")"
		val[push.$t]+=" $(bulk "$t" "SELECT v FROM tenant_7.src")"
	done
	for c in $cases; do
		s=$(echo "${val[$c.s]}" | awk '{ print $NF }')
		b=$(echo "${val[$c.b]}" | awk '{ print $NF }')
		val[$c.r]+=" $(ratio "$s" "$b")"
	done
	echo "repetition $rep of $REPS: $(for c in $cases; do printf '%s %s/%s  ' "$c" "$(echo "${val[$c.s]}" | awk '{ print $NF }')" "$(echo "${val[$c.b]}" | awk '{ print $NF }')"; done)"
done

# the same rows in both tables at the end: ids distinct and of shard 7
check=$(at "$COORD" -c "SELECT count(*) = count(DISTINCT id) AND bool_and(shardid.id_shard(id) = 7) FROM tenant_7.s")

cassert=off
"$PG_CONFIG" --configure | grep -q enable-cassert && cassert=on
citus_version=$(at "$COORD" -c "SELECT citus_version()" | sed 's/ on .*//')
label() {
	case $1 in
	coord) echo "one-row INSERT, $CLIENTS clients through the coordinator (rows/s)" ;;
	all) echo "one-row INSERT, $CLIENTS clients through each of the 3 nodes at once (rows/s)" ;;
	gs) echo "INSERT ... SELECT generate_series(1, $ROWS) through the coordinator (ms)" ;;
	push) echo "INSERT ... SELECT of $ROWS rows from a table of the same tenant (ms)" ;;
	esac
}
{
	echo "# shardid on Citus beside bigserial"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(awk '/MemTotal/ { printf "%d GiB", $2 / 1048576 }' /proc/meminfo);" \
		"PostgreSQL $("$PG_CONFIG" --version | awk '{ print $2 }'), assertions $cassert; $citus_version; a coordinator and two workers on this machine;" \
		"\`REPS=$REPS ROWS=$ROWS PGBENCH_SECONDS=$PGBENCH_SECONDS CLIENTS=$CLIENTS test/bench/citus.sh\`."
	echo
	echo "One tenant schema, so one worker: \`tenant_7.s\` (ids from the \`shardid.set_id()\` trigger of shard 7, made on the"
	echo "worker) and \`tenant_7.b\` (\`bigserial\`, Citus's sequence, evaluated on the node that received the statement)."
	echo "Medians of $REPS runs with min and max; the last column is shardid / bigserial per repetition (rows/s: above 1 is"
	echo "faster; ms: below 1 is faster). The machine is shared: read ratios, not absolute figures. Ids of \`tenant_7.s\`"
	echo "at the end: distinct and of shard 7: $check."
	echo
	echo "| measure | shardid set_id() | bigserial | shardid / bigserial, median | per repetition |"
	echo "| --- | ---: | ---: | ---: | --- |"
	for c in $cases; do
		read -r sm smin smax <<<"$(stats "${val[$c.s]}")"
		read -r bm bmin bmax <<<"$(stats "${val[$c.b]}")"
		read -r rm _ _ <<<"$(stats "${val[$c.r]}")"
		echo "| $(label "$c") | $sm ($smin-$smax) | $bm ($bmin-$bmax) | $rm | $(echo "${val[$c.r]}" | sed 's/^ //; s/ /, /g') |"
	done
} >"$results"
cat "$results"
exit 0
