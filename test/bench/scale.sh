#!/usr/bin/env bash
# test/bench/scale.sh: shardid at the mission's scale, thousands of logical
# shards of TABLES tables each, beside the same layout with bigserial, in one
# run on a throwaway cluster (make bench-scale).
#
# A benchmark, not a test: it prints figures and writes them to
# test/bench/results-scale-pgNN.md; its exit status never depends on them.
# For each count of SHARDS, two databases of one server (shardid preloaded):
#   shardid    a template schema of TABLES tables (id bigint PRIMARY KEY, a
#              user_id with an index of its own, a payload), provisioned
#              with CALL shardid.add_shards(template, first_shard => 0,
#              last_shard => N - 1), the
#              DEFAULT it makes by default (next_id(shard) in strict mode;
#              release 1.3 before 2026-11-26 made next_id(shard,
#              nextval(...)) with a sequence per table);
#   bigserial  the same tables made by a procedure of the same shape,
#              committing after each shard, id bigserial.
# and, side by side, with ratios shardid / bigserial:
#   provision  seconds to make every shard, in turns of CHUNK shards of
#              each layout (the order swapped at every turn, each turn from
#              a checkpoint with the machine's dirty pages written), so
#              that both share what else the machine does meanwhile; the
#              seconds of CPU the backend spent on it (Linux's /proc: what
#              waits for the disk or for another job leaves out); the
#              turns each layout was the faster in, and the median turn's
#              ratio (the first 8 shards of each, made before the turns, not
#              counted);
#   first id   a fresh connection's first INSERT into one shard, and its
#              first id alone (a SELECT of table 1's DEFAULT: next_id(...)
#              beside nextval()), ms, each the median of FRESH connections;
#   memory     one backend's memory contexts after one row into table 1 of
#              every shard (pg_backend_memory_contexts, MB);
#   pgbench    CLIENTS clients, each transaction one row into table 1 of a
#              random shard, for PGBENCH_SECONDS, transactions/s;
#   churn      the same pgbench while one more connection loops, as fast as
#              it can, CREATE TEMP TABLE; DROP TABLE; ANALYZE of a random
#              shard's table, committing each (the invalidations a busy
#              server sends): transactions/s, their ratio to the quiet
#              figure, and the loop's own rate;
#   pg_dump    seconds for pg_dump -Fc of the whole database (DUMP=0 skips
#              it: an hour and more at thousands of shards);
# and, for shardid alone, doctor(scan_rows => false) and a scan of the
# id_defaults view, seconds.  max_locks_per_transaction is set so that
# pg_dump of the largest count can lock every relation (the README says
# how to size it).
#
#   SHARDS="500 2000 8192" TABLES=5 CHUNK=512 CLIENTS=8 PGBENCH_SECONDS=10 FRESH=5 DUMP=1 test/bench/scale.sh
# A quick run that proves the script (figures of no value):
#   SHARDS=20 PGBENCH_SECONDS=1 FRESH=2 OUT=/tmp test/bench/scale.sh
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh servers

SHARDS=${SHARDS:-500 2000}
TABLES=${TABLES:-5}
CHUNK=${CHUNK:-512}
CLIENTS=${CLIENTS:-8}
PGBENCH_SECONDS=${PGBENCH_SECONDS:-10}
FRESH=${FRESH:-5}
DUMP=${DUMP:-1}
OUT=${OUT:-test/bench}
major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
results="$OUT/results-scale-pg$major.md"
work="$SHARDID_TMP/work"
mkdir -p "$work"
chmod 777 "$work"
port=$SHARDID_PORT_BASE

largest=$(echo "$SHARDS" | tr ' ' '\n' | sort -n | tail -1)
# every table, its two indexes and its sequence, locked by pg_dump at once
locks=$(((largest * TABLES * 4 + 1000) / 40 + 64))
cluster_init scale "$port" "shared_preload_libraries = 'shardid'" "synchronous_commit = off" \
	"max_locks_per_transaction = $locks" "shardid.epoch = '2026-01-01 00:00:00+00'" \
	"autovacuum = off" "checkpoint_timeout = 30min" || exit 1
cluster_start scale || exit 1
use_cluster "$port"

sql() { "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"; }
secs() {	# secs DB SQL: wall seconds of one statement ("failed" on an error)
	local t0 t1
	t0=$(date +%s.%N)
	sql -d "$1" -c "$2" >/dev/null 2>"$work/err" || {
		echo "scale.sh: failed in $1: $2: $(head -3 "$work/err")" >&2
		echo failed
		return
	}
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l | xargs printf '%.2f'
}
# wall_cpu DB SQL: "WALL CPU", the seconds one statement took and the
# seconds of CPU its backend spent meanwhile (user and system, from
# /proc: "-" without it), "failed failed" on an error
tick=$(getconf CLK_TCK)
wall_cpu() {
	local out
	out=$(sql -d "$1" 2>"$work/err" <<SQL
SELECT pg_backend_pid() AS pid \gset
\setenv SCALE_PID :pid
\! awk '{print \$14 + \$15}' /proc/\$SCALE_PID/stat 2>/dev/null || echo -
SELECT extract(epoch FROM clock_timestamp()) AS t0 \gset
$2;
SELECT extract(epoch FROM clock_timestamp()) - :t0;
\! awk '{print \$14 + \$15}' /proc/\$SCALE_PID/stat 2>/dev/null || echo -
SQL
	) || {
		echo "scale.sh: failed in $1: $2: $(head -3 "$work/err")" >&2
		echo failed failed
		return
	}
	echo "$out" | awk -v tick="$tick" 'NR == 1 {c0 = $1} {w = p; p = $1} END {
		printf "%.2f %s\n", w, (c0 == "-" || p == "-") ? "-" : sprintf("%.2f", (p - c0) / tick)}'
}
median() { echo "$1" | tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -g | awk '{a[NR]=$1} END {print NR ? a[int((NR+1)/2)] : "-"}'; }
ratio() {	# ratio A B: A / B, two significant digits below 0.1 (0.0024x)
	local r
	if [[ "$1" =~ ^[0-9.]+$ ]] && [[ "$2" =~ ^[0-9.]+$ ]] && [ "$(echo "$2 > 0" | bc -l)" = 1 ]; then
		r=$(echo "$1 / $2" | bc -l)
		if [ "$(echo "$r < 0.1" | bc -l)" = 1 ]; then printf '%#.2gx' "$r"; else printf '%.2fx' "$r"; fi
	else
		echo -
	fi
}

# the tables of one shard, for both layouts (ID: the id column's type and DEFAULT)
table_sql() {	# table_sql SCHEMA ID
	local t
	for t in $(seq 1 "$TABLES"); do
		echo "CREATE TABLE $1.t$t (id $2, user_id bigint NOT NULL, payload text);"
		echo "CREATE INDEX ON $1.t$t (user_id);"
	done
}

sql -d postgres -c "CREATE DATABASE shardid_db" -c "CREATE DATABASE bigserial_db" || exit 1
sql -d shardid_db -c "CREATE EXTENSION shardid" -c "CREATE SCHEMA app_template" || exit 1
table_sql app_template "bigint PRIMARY KEY" | sql -d shardid_db || exit 1
sql -d bigserial_db >/dev/null <<SQL || exit 1
CREATE PROCEDURE make_shards(first integer, last integer)
LANGUAGE plpgsql AS \$\$
DECLARE
    s integer;
    t integer;
    sch text;
BEGIN
    FOR s IN first..last LOOP
        sch := 'shard_' || lpad(s::text, 4, '0');
        EXECUTE format('CREATE SCHEMA %I', sch);
        FOR t IN 1..$TABLES LOOP
            EXECUTE format('CREATE TABLE %I.%I (id bigserial PRIMARY KEY, user_id bigint NOT NULL, payload text)', sch, 't' || t);
            EXECUTE format('CREATE INDEX ON %I.%I (user_id)', sch, 't' || t);
        END LOOP;
        COMMIT;
    END LOOP;
END \$\$;
SQL
# one row into table 1 of shard S, the same call in both databases; and the
# churn loop, which runs until a row of churn_stop says stop (or an hour
# passed) and returns its iterations and seconds
for db in shardid_db bigserial_db; do
	sql -d "$db" >/dev/null <<SQL || exit 1
CREATE FUNCTION ins(s integer) RETURNS void LANGUAGE plpgsql AS \$\$
BEGIN
    EXECUTE format('INSERT INTO %I.t1 (user_id, payload) VALUES (\$1, \$2)', 'shard_' || lpad(s::text, 4, '0'))
        USING s, 'x';
END \$\$;
CREATE TABLE churn_stop (stop boolean NOT NULL);
CREATE PROCEDURE churn(n integer, INOUT loops bigint DEFAULT 0, INOUT secs numeric DEFAULT 0)
LANGUAGE plpgsql AS \$\$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    WHILE NOT EXISTS (SELECT FROM churn_stop WHERE stop) AND clock_timestamp() < t0 + interval '1 hour' LOOP
        CREATE TEMP TABLE churn_x (a integer);
        DROP TABLE churn_x;
        EXECUTE format('ANALYZE %I.%I', 'shard_' || lpad(floor(random() * n)::integer::text, 4, '0'),
                       't' || (1 + floor(random() * $TABLES)::integer));
        COMMIT;
        loops := loops + 1;
    END LOOP;
    secs := extract(epoch FROM clock_timestamp() - t0);
END \$\$;
SQL
done
echo "\\set s random(0, :n - 1)
SELECT ins(:s);" >"$work/ins.sql"

{
	echo "# shardid at scale: logical shards of $TABLES tables, beside bigserial"
	echo
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GiB;" \
		"$("$PG_BIN/postgres" --version), assertions $(sql -d postgres -c "SHOW debug_assertions");" \
		"\`make bench-scale\` (test/bench/scale.sh:" \
		"TABLES=$TABLES CHUNK=$CHUNK CLIENTS=$CLIENTS PGBENCH_SECONDS=$PGBENCH_SECONDS FRESH=$FRESH DUMP=$DUMP;" \
		"max_locks_per_transaction = $locks). A benchmark on a shared machine: read the ratios."
	echo
	echo "| shards | what | shardid | bigserial | ratio |"
	echo "| ---: | --- | ---: | ---: | ---: |"
} >"$work/results.md"
row() {	# row SHARDS WHAT SHARDID BIGSERIAL [RATIO]: the ratio of the two figures unless given
	echo "| $1 | $2 | $3 | $4 | ${5:-$(ratio "$3" "$4")} |" | tee -a "$work/results.md"
}

# each turn of provisioning starts from a checkpoint, with the machine's
# dirty pages written: neither layout pays for the other's writes (the
# second used to flush the first's, and the figures swung by half)
settle() { sql -d postgres -c CHECKPOINT && sync; }
add() { echo "$1 + $2" | bc -l | xargs printf '%.2f'; }

have=0
turn=0
for n in $(echo "$SHARDS" | tr ' ' '\n' | sort -n); do
	[ "$n" -gt "$have" ] || continue
	echo "--- $n shards"
	# in turns of CHUNK shards of each layout, the first of each turn
	# alternating: a machine whose speed drifts (other jobs, its disk's
	# writeback) slows both alike
	p_id=0
	p_big=0
	c_id=0
	c_big=0
	faster=0
	ratios=""
	# the first statements on a new cluster pay for what both layouts
	# then share (the first turn took twice the second, whichever layout
	# went first): 8 shards of each made first, not counted
	warm=0
	if [ "$have" = 0 ] && [ "$n" -gt 16 ]; then
		warm=8
		settle
		wall_cpu shardid_db "CALL shardid.add_shards('app_template', first_shard => 0, last_shard => $((warm - 1)))" >/dev/null
		settle
		wall_cpu bigserial_db "CALL make_shards(0, $((warm - 1)))" >/dev/null
	fi
	for first in $(seq $((have + warm)) "$CHUNK" $((n - 1))); do
		last=$((first + CHUNK - 1))
		[ "$last" -lt "$n" ] || last=$((n - 1))
		turn=$((turn + 1))
		for layout in $([ $((turn % 2)) = 1 ] && echo "shardid bigserial" || echo "bigserial shardid"); do
			settle
			if [ "$layout" = shardid ]; then
				read -r t_id u_id <<<"$(wall_cpu shardid_db "CALL shardid.add_shards('app_template', first_shard => $first, last_shard => $last)")"
			else
				read -r t_big u_big <<<"$(wall_cpu bigserial_db "CALL make_shards($first, $last)")"
			fi
		done
		echo "shards $first-$last: shardid $t_id s (CPU $u_id s), bigserial $t_big s (CPU $u_big s)"
		if [ "$t_id" = failed ] || [ "$t_big" = failed ]; then
			p_id=failed
			p_big=failed
			break
		fi
		p_id=$(add "$p_id" "$t_id")
		p_big=$(add "$p_big" "$t_big")
		if [ "$u_id" = - ] || [ "$u_big" = - ] || [ "$c_id" = - ]; then
			c_id=-
			c_big=-
		else
			c_id=$(add "$c_id" "$u_id")
			c_big=$(add "$c_big" "$u_big")
		fi
		[ "$(echo "$t_id < $t_big" | bc -l)" = 1 ] && faster=$((faster + 1))
		ratios="$ratios $(ratio "$t_id" "$t_big" | tr -d x)"
	done
	turns=$(echo "$ratios" | wc -w)
	row "$n" "provision (s; the shards added since the last row: $((n - have - warm))$([ "$warm" = 0 ] || echo " after $warm not counted"), in turns of $CHUNK)" "$p_id" "$p_big"
	row "$n" "provision: the CPU its backend spent (s)" "$c_id" "$c_big"
	row "$n" "provision: turns each layout was the faster in; the median turn's ratio" \
		"$faster of $turns" "$((turns - faster)) of $turns" "$(median "$ratios")x"
	have=$n

	f_id=""
	f_big=""
	for i in $(seq 1 "$FRESH"); do
		f_id="$f_id $(sql -d shardid_db -c '\timing on' -c "INSERT INTO shard_0001.t1 (user_id) VALUES ($i)" |
			sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')"
		f_big="$f_big $(sql -d bigserial_db -c '\timing on' -c "INSERT INTO shard_0001.t1 (user_id) VALUES ($i)" |
			sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')"
	done
	row "$n" "first INSERT of a fresh connection (ms, median of $FRESH)" "$(median "$f_id")" "$(median "$f_big")"

	# the first id alone: a fresh connection's SELECT of table 1's DEFAULT
	first_id() {
		local expr i times=""
		expr=$(sql -d "$1" -c "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef
			WHERE adrelid = 'shard_0001.t1'::regclass AND adnum = 1")
		for i in $(seq 1 "$FRESH"); do
			times="$times $(sql -d "$1" -c '\timing on' -c "SELECT $expr" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p')"
		done
		median "$times"
	}
	row "$n" "first id of a fresh connection: SELECT of the DEFAULT, next_id() / nextval() (ms, median of $FRESH)" \
		"$(first_id shardid_db)" "$(first_id bigserial_db)"

	mem_sql="SELECT ins(s) FROM generate_series(0, $((n - 1))) s;
	         SELECT round(sum(total_bytes) / 1048576.0, 1) FROM pg_backend_memory_contexts"
	row "$n" "backend memory after a row into every shard (MB)" \
		"$(sql -d shardid_db -c "$mem_sql" | tail -1)" "$(sql -d bigserial_db -c "$mem_sql" | tail -1)"

	tps() {
		local t
		t=$("$PG_BIN/pgbench" -n -c "$CLIENTS" -j 2 -T "$PGBENCH_SECONDS" -D n="$n" -f "$work/ins.sql" "$1" 2>&1 |
			sed -n 's/^tps = \([0-9.]*\).*/\1/p' | head -1)
		[ -n "$t" ] && printf '%.1f' "$t" || echo failed
	}
	q_id=$(tps shardid_db)
	q_big=$(tps bigserial_db)
	row "$n" "pgbench, $CLIENTS clients, a row into a random shard (tx/s)" "$q_id" "$q_big"

	# the same pgbench beside the churn loop, which stops when pgbench is done
	churn_tps() {	# churn_tps DB: "tx/s loops/s"
		local t l
		sql -d "$1" -c "TRUNCATE churn_stop" || { echo "failed failed"; return; }
		sql -d "$1" -c "CALL churn($n)" >"$work/churn" 2>"$work/churn.err" &
		t=$(tps "$1")
		sql -d "$1" -c "INSERT INTO churn_stop VALUES (true)"
		wait $!
		l=$(awk -F'|' 'NF == 2 && $2 > 0 {printf "%.1f", $1 / $2}' "$work/churn")
		echo "$t ${l:-failed}"
		[ -s "$work/churn.err" ] && echo "scale.sh: churn in $1: $(head -3 "$work/churn.err")" >&2
	}
	read -r c_id l_id <<<"$(churn_tps shardid_db)"
	read -r c_big l_big <<<"$(churn_tps bigserial_db)"
	row "$n" "pgbench as above, beside a loop of temp-table DDL and ANALYZE (tx/s)" "$c_id" "$c_big"
	row "$n" "pgbench beside the loop / quiet pgbench" "$(ratio "$c_id" "$q_id" | tr -d x)" "$(ratio "$c_big" "$q_big" | tr -d x)"
	row "$n" "the loop's own rate beside pgbench (iterations/s)" "$l_id" "$l_big"

	dump() {
		local t0 t1
		t0=$(date +%s.%N)
		"$PG_BIN/pg_dump" -Fc --no-sync -f "$work/dump" "$1" 2>"$work/dump.err" || {
			echo failed
			head -2 "$work/dump.err" >&2
			return
		}
		t1=$(date +%s.%N)
		rm -f "$work/dump"
		echo "$t1 - $t0" | bc -l | xargs printf '%.2f'
	}
	[ "$DUMP" != 0 ] && row "$n" "pg_dump -Fc (s)" "$(dump shardid_db)" "$(dump bigserial_db)"
	row "$n" "doctor(scan_rows => false) (s)" "$(secs shardid_db "SELECT count(*) FROM shardid.doctor(scan_rows => false)")" "-"
	row "$n" "SELECT count(*) FROM shardid.id_defaults (s)" "$(secs shardid_db "SELECT count(*) FROM shardid.id_defaults")" "-"
done
cluster_stop scale
mkdir -p "$OUT"
cp "$work/results.md" "$results"
echo "written: $results"
