#!/usr/bin/env bash
# test/bench/bench.sh: shardid next to the id schemes users would otherwise
# pick, measured side by side in one run on throwaway clusters (make bench).
#
# A benchmark, not a test: it prints figures and writes them to
# test/bench/results-pgNN.md and results-pgNN.png (NN: the server's major
# version); its exit status never depends on them.  Contenders alternate
# within each repetition, and the tables give the median, min and max of
# REPS runs and ratios to bigserial.  On PostgreSQL 18+ the UUIDv7
# contender is the native uuidv7(), before that a UUIDv7 written in SQL;
# shardid.next_ids(shard, n) is measured when the server has it.
#
#   REPS=3 TRIES=3 ROWS=2000000 INSERT_ROWS=1000000 PGBENCH_SECONDS=2 \
#   LOCALITY_ROWS=10000000 LOCALITY_SPAN='1 day' test/bench/bench.sh
# Some sections only (of 1 2 2b 3 4 4b 5 6 7), written elsewhere:
#   SECTIONS=7 OUT=/tmp test/bench/bench.sh
# A quick run that proves the script (figures of no value):
#   REPS=1 TRIES=1 ROWS=20000 INSERT_ROWS=20000 PGBENCH_SECONDS=1 CONC_ROWS=16000 \
#   LOCALITY_ROWS=100000 CALLGRIND_CALLS=1000 OUT=/tmp test/bench/bench.sh
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh servers

REPS=${REPS:-3}
ROWS=${ROWS:-2000000}
INSERT_ROWS=${INSERT_ROWS:-1000000}
PGBENCH_SECONDS=${PGBENCH_SECONDS:-2}
CALLGRIND_CALLS=${CALLGRIND_CALLS:-100000}
# index locality: rows inserted in time order, their times LOCALITY_SPAN apart
LOCALITY_ROWS=${LOCALITY_ROWS:-10000000}
LOCALITY_SPAN=${LOCALITY_SPAN:-1 day}
OUT=${OUT:-test/bench}
# section 1: runs of the loop and of the call per repetition, the least kept
TRIES=${TRIES:-3}
# the sections to run (a partial run is for checking one figure: give OUT)
SECTIONS=${SECTIONS:-1 2 2b 3 4 4b 5 6 7}
want() { case " $SECTIONS " in *" $1 "*) return 0 ;; esac; return 1; }
major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
results="$OUT/results-pg$major"
work="$SHARDID_TMP/work"
mkdir -p "$work"
port=$SHARDID_PORT_BASE

cluster_init bench "$port" "shared_preload_libraries = 'shardid'" "synchronous_commit = off" || exit 1
cluster_start bench || exit 1
use_cluster "$port"

# ---------------------------------------------------------------- helpers
ms() {	# ms SQL [WARM]: wall time of one statement in ms ("failed" on an error),
	# after the untimed statement WARM in the same session if given
	local out
	out=$("$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 ${2:+-c "$2"} -c '\timing on' -c "$1" 2>"$work/err") || {
		echo "bench.sh: failed: $1: $(cat "$work/err")" >&2
		echo failed
		return
	}
	echo "$out" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p'
}
stats() {	# stats "v1 v2 ...": median min max (numbers only, negative ones too)
	echo "$1" | tr ' ' '\n' | grep -E '^-?[0-9.]+$' | sort -g |
		awk '{a[NR]=$1} END {if (NR == 0) print "- - -"; else print a[int((NR+1)/2)], a[1], a[NR]}'
}
least() { stats "$1" | awk '{print $2}'; }	# least "v1 v2 ...": the smallest number
failures() { echo "$1" | tr ' ' '\n' | grep -c failed; }
f1() { awk -v x="$1" 'BEGIN {if (x == "-") print "-"; else printf "%.1f", x}'; }
f0() { awk -v x="$1" 'BEGIN {if (x == "-" || x == "failed" || x == "") print (x == "" ? "-" : x); else printf "%.0f", x}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b}'; }
report() { echo "$*" | tee -a "$work/results.md"; }

# ------------------------------------------------------------- contenders
q >/dev/null <<'SQL'
CREATE EXTENSION shardid;
CREATE SCHEMA bench;
CREATE SEQUENCE bench.loop_seq;
CREATE SEQUENCE bench.s5_seq;
CREATE SEQUENCE bench.t2011_seq;
-- the 2011 PL/pgSQL function, as described in the original write-up: the
-- shard id written in as a constant, the 2011 epoch, seq % 1024
CREATE FUNCTION bench.next_id_2011(OUT result bigint) AS $$
DECLARE
    our_epoch bigint := 1314220021721;
    seq_id bigint;
    now_millis bigint;
    shard_id int := 5;
BEGIN
    SELECT nextval('bench.t2011_seq') % 1024 INTO seq_id;
    SELECT FLOOR(EXTRACT(EPOCH FROM clock_timestamp()) * 1000) INTO now_millis;
    result := (now_millis - our_epoch) << 23;
    result := result | (shard_id << 10);
    result := result | (seq_id);
END;
$$ LANGUAGE plpgsql;
-- a UUIDv7 in SQL, as users write it before PostgreSQL 18's uuidv7()
CREATE FUNCTION bench.uuid_v7() RETURNS uuid AS $$
    SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
                  PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                  FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
$$ LANGUAGE sql VOLATILE;
SQL
# the 2011 packing without any guard, at the speed of an inlined SQL
# function over make_id(): what a plain C port does
q >/dev/null <<SQL
CREATE FUNCTION bench.naive_id(seq bigint) RETURNS bigint AS \$\$
    SELECT shardid.make_id(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint
                           - $(q -c "SELECT epoch_ms FROM shardid.info()"), 5, seq)
\$\$ LANGUAGE sql VOLATILE;
SQL

# a user on PostgreSQL 18+ picks its native uuidv7(); before, one in SQL
has_uuidv7=$(q -c "SELECT to_regprocedure('uuidv7()') IS NOT NULL")
has_next_ids=$(q -c "SELECT to_regprocedure('shardid.next_ids(integer, integer)') IS NOT NULL")
if [ "$has_uuidv7" = t ]; then uuidv7=uuidv7; else uuidv7=uuidv7_sql; fi
names="bigserial next_id_seq next_id_free plpgsql_2011 gen_random_uuid $uuidv7"
declare -A label=(
	[bigserial]="bigserial (nextval)"
	[next_id_seq]="shardid.next_id(shard, nextval(seq))"
	[next_id_free]="shardid.next_id(shard)"
	[plpgsql_2011]="2011 PL/pgSQL next_id()"
	[gen_random_uuid]="gen_random_uuid()"
	[uuidv7_sql]="UUIDv7 in SQL"
	[uuidv7]="uuidv7() (PostgreSQL 18)"
	[next_ids]="shardid.next_ids(shard, 1000), per id"
)
declare -A coltype=(
	[bigserial]="bigserial PRIMARY KEY"
	[next_id_seq]="bigint PRIMARY KEY DEFAULT shardid.next_id(5, nextval('bench.s5_seq'))"
	[next_id_free]="bigint PRIMARY KEY DEFAULT shardid.next_id(6)"
	[plpgsql_2011]="bigint PRIMARY KEY DEFAULT bench.next_id_2011()"
	[gen_random_uuid]="uuid PRIMARY KEY DEFAULT gen_random_uuid()"
	[uuidv7_sql]="uuid PRIMARY KEY DEFAULT bench.uuid_v7()"
	[uuidv7]="uuid PRIMARY KEY DEFAULT uuidv7()"
)

: >"$work/results.md"
report "# shardid benchmark results"
report ""
report "$(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) cores, $(free -g | awk '/^Mem/ {print $2}') GiB; $("$PG_BIN/postgres" --version), assertions $(q -c "SHOW debug_assertions"); \`make bench\` (REPS=$REPS)."
report "Medians of $REPS runs with min and max; ratios are to bigserial. The machine is shared: read ratios, not absolute times."
report ""

# ------------------------------------------------ 1. per-call cost, tight loop
# Below the ceiling: the shardid calls go round 64 shards, each shard with
# consecutive seqs (n / 64), so no shard needs more than 1024 ids in a ms and
# the figure is the cost of a call, not the layout's ceiling.  A cheap call
# (tens of ns) is a small part of the loop around it (about 100 ns a row),
# so each repetition times the loop and the call TRIES times each, just
# before and after one another, and keeps the least of each: the machine's
# noise only ever adds time.  A net figure below zero stays in the table (it
# says the call costs less than the noise), where it once left a '-'.
if want 1; then
	src="FROM (SELECT nextval('bench.loop_seq') AS n FROM generate_series(1, $ROWS)) x"
	declare -A loopsql=(
		[loop]="SELECT count(i) FROM generate_series(1, $ROWS) i"
		[loop64]="SELECT count((i % 64)::int) FROM generate_series(1, $ROWS) i"
		[bigserial]="SELECT count((n % 64)::int + n / 64) $src"
		[next_id_seq]="SELECT count(shardid.next_id((n % 64)::int, n / 64)) $src"
		[next_id_free]="SELECT count(shardid.next_id((i % 64)::int)) FROM generate_series(1, $ROWS) i"
		[plpgsql_2011]="SELECT count(bench.next_id_2011()) FROM generate_series(1, $ROWS) i"
		[gen_random_uuid]="SELECT count(gen_random_uuid()) FROM generate_series(1, $ROWS) i"
		[uuidv7_sql]="SELECT count(bench.uuid_v7()) FROM generate_series(1, $ROWS) i"
		[uuidv7]="SELECT count(uuidv7()) FROM generate_series(1, $ROWS) i"
		# blocks of 1000 ids, going round 64 shards (below the ceiling), net
		# of the same join over a set function of 1000 rows made per block
		[next_ids]="SELECT count(*) FROM generate_series(1, $((ROWS / 1000))) b, shardid.next_ids((b % 64)::int, 1000)"
		[loopblk]="SELECT count(*) FROM generate_series(1, $((ROWS / 1000))) b, generate_series(b, b + 999)"
	)
	declare -A base=([bigserial]=loop [next_id_seq]=loop [next_id_free]=loop64 [plpgsql_2011]=loop
		[gen_random_uuid]=loop [uuidv7_sql]=loop [uuidv7]=loop [next_ids]=loopblk)
	percall_names=$names
	[ "$has_next_ids" = t ] && percall_names="$names next_ids"
	# Each run is a new session, and a session's first id of a shard reads
	# the shard's tables (ids never below the data), about a million
	# instructions a shard: each run is timed after the same statement over
	# 64 rows (64 shards) in its session, so that only the steady cost counts.
	warm() {
		local sql=${1//"generate_series(1, $ROWS)"/generate_series(1, 64)}
		echo "${sql//"generate_series(1, $((ROWS / 1000)))"/generate_series(1, 64)}"
	}
	declare -A t tl
	echo "1. per call ..." >&2
	for r in $(seq "$REPS"); do
		for c in $percall_names; do
			l="" v=""
			for i in $(seq "$TRIES"); do
				l="$l $(ms "${loopsql[${base[$c]}]}" "$(warm "${loopsql[${base[$c]}]}")")"
				v="$v $(ms "${loopsql[$c]}" "$(warm "${loopsql[$c]}")")"
			done
			if [ "$(failures "$l $v")" -gt 0 ]; then
				t[$c]="${t[$c]:-} failed"
				continue
			fi
			read -r l _ <<<"$(least "$l")"
			read -r v _ <<<"$(least "$v")"
			# net ns per call, and the loop's own ns per row
			t[$c]="${t[$c]:-} $(awk -v m="$v" -v l="$l" -v n="$ROWS" 'BEGIN {printf "%.1f", (m - l) * 1e6 / n}')"
			tl[$c]="${tl[$c]:-} $(awk -v l="$l" -v n="$ROWS" 'BEGIN {printf "%.1f", l * 1e6 / n}')"
		done
	done
	read -r bmed _ _ <<<"$(stats "${t[bigserial]}")"
	report "## 1. Cost per call"
	report ""
	report "\`SELECT count(expr) FROM generate_series(1, $ROWS)\`, ns per call net of the same loop without the call, each run in a new session after the same statement over 64 rows; each of the $REPS repetitions takes the least of $TRIES runs of the loop and of the call. next_ids(): blocks of 1000, net of the same join over \`generate_series(b, b + 999)\`."
	report ""
	report "| contender | median ns | min | max | vs bigserial | failed runs |"
	report "| --- | ---: | ---: | ---: | ---: | ---: |"
	: >"$work/percall.dat"
	for c in $percall_names; do
		read -r med lo hi <<<"$(stats "${t[$c]}")"
		report "| ${label[$c]} | $(f0 "$med") | $(f0 "$lo") | $(f0 "$hi") | $(ratio "$med" "$bmed")x | $(failures "${t[$c]}") |"
		echo "\"${label[$c]}\" $med" >>"$work/percall.dat"
	done
	read -r smed _ _ <<<"$(stats "${t[next_id_seq]}")"
	read -r fmed _ _ <<<"$(stats "${t[next_id_free]}")"
	read -r pmed _ _ <<<"$(stats "${t[plpgsql_2011]}")"
	read -r lmed _ _ <<<"$(stats "${tl[bigserial]}")"
	report ""
	report "- next_id + nextval over nextval alone (total per call, loop included): $(ratio "$(awk -v s="$smed" -v l="$lmed" 'BEGIN {print s + l}')" "$(awk -v s="$bmed" -v l="$lmed" 'BEGIN {print s + l}')")x"
	report "- the 2011 PL/pgSQL function over next_id + nextval: $(ratio "$pmed" "$smed")x"
	report "- nextval alone over the sequence-free next_id(shard): $(ratio "$bmed" "$fmed")x"
	report ""
fi

# --------------------------------------- 2. INSERT of INSERT_ROWS, index size
if want 2; then
	echo "2. INSERT ..." >&2
	declare -A ins size
	for r in $(seq "$REPS"); do
		for kind in logged unlogged; do
			for c in $names; do
				u=""; [ $kind = unlogged ] && u=UNLOGGED
				q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS bench.ins;
				      CREATE $u TABLE bench.ins (id ${coltype[$c]}, v int); CHECKPOINT"
				ins[$kind.$c]="${ins[$kind.$c]:-} $(ms "INSERT INTO bench.ins (v) SELECT g FROM generate_series(1, $INSERT_ROWS) g")"
				size[$c]=$(q -c "SELECT pg_relation_size('bench.ins_pkey')")
			done
		done
	done
	q -c "DROP TABLE bench.ins"
	report "## 2. INSERT of $INSERT_ROWS rows"
	report ""
	report "\`INSERT INTO t (v) SELECT g FROM generate_series(1, $INSERT_ROWS) g\` into a table whose primary key defaults to the contender."
	report ""
	report "| contender | logged ms (min-max) | vs bigserial | unlogged ms (min-max) | vs bigserial | primary key size | failed runs |"
	report "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	read -r blog _ _ <<<"$(stats "${ins[logged.bigserial]}")"
	read -r bunl _ _ <<<"$(stats "${ins[unlogged.bigserial]}")"
	: >"$work/insert.dat"
	for c in $names; do
		read -r lm ll lh <<<"$(stats "${ins[logged.$c]}")"
		read -r um ul uh <<<"$(stats "${ins[unlogged.$c]}")"
		nf=$(($(failures "${ins[logged.$c]}") + $(failures "${ins[unlogged.$c]}")))
		report "| ${label[$c]} | $(f0 "$lm") ($(f0 "$ll")-$(f0 "$lh")) | $(ratio "$lm" "$blog")x | $(f0 "$um") ($(f0 "$ul")-$(f0 "$uh")) | $(ratio "$um" "$bunl")x | $((${size[$c]} / 1048576)) MiB | $nf |"
		echo "\"${label[$c]}\" $(ratio "$lm" "$blog") $(ratio "$um" "$bunl")" >>"$work/insert.dat"
	done
	report ""
fi

# ------------------------- 2b. index locality after inserts in time order
# LOCALITY_ROWS rows whose times run LOCALITY_SPAN up to a fixed moment
# ("the end"), inserted in time order in one statement; then the primary
# key's size and a range scan of the last minute's rows (before the end)
# through it.  The ids are those the contender makes at those times:
# shardid's packed from the time (as next_id() stamps them), UUIDv7's
# 48-bit milliseconds and random bits (as uuidv7() makes them), bigserial's
# in order.  Random UUIDs carry no time: no range scan can find the last
# minute through their key.
if want 2b; then
	echo "2b. index locality ..." >&2
	q >/dev/null <<-'SQL'
	-- a UUIDv7 at a given time (48-bit ms, version and variant bits, random)
	CREATE FUNCTION bench.uuid_v7_at(ts timestamptz) RETURNS uuid AS $$
	    SELECT encode(set_bit(set_bit(overlay(uuid_send(gen_random_uuid())
	                  PLACING substring(int8send(floor(extract(epoch FROM ts) * 1000)::bigint) FROM 3)
	                  FROM 1 FOR 6), 52, 1), 53, 1), 'hex')::uuid
	$$ LANGUAGE sql VOLATILE;
	-- the smallest UUIDv7 at a given time
	CREATE FUNCTION bench.uuid_v7_min(ts timestamptz) RETURNS uuid AS $$
	    SELECT encode(substring(int8send(floor(extract(epoch FROM ts) * 1000)::bigint) FROM 3)
	                  || '\x00000000000000000000'::bytea, 'hex')::uuid
	$$ LANGUAGE sql IMMUTABLE;
	SQL
	loc_end=$(q -c "SELECT now()")
	epoch_ms=$(q -c "SELECT epoch_ms FROM shardid.info()")
	at="'$loc_end'::timestamptz - interval '$LOCALITY_SPAN' * (1 - g::float8 / $LOCALITY_ROWS)"
	since="'$loc_end'::timestamptz - interval '1 minute'"
	loc_names="bigserial next_id $uuidv7 gen_random_uuid"
	label[next_id]="shardid ids (next_id)"
	declare -A loc_col=(
		[bigserial]="bigserial PRIMARY KEY"
		[next_id]="bigint PRIMARY KEY"
		[uuidv7]="uuid PRIMARY KEY"
		[uuidv7_sql]="uuid PRIMARY KEY"
		[gen_random_uuid]="uuid PRIMARY KEY DEFAULT gen_random_uuid()"
	)
	declare -A loc_id=(
		[next_id]="shardid.make_id(floor(extract(epoch FROM a) * 1000)::bigint - $epoch_ms, 5, g % 1024)"
		[uuidv7]="bench.uuid_v7_at(a)"
		[uuidv7_sql]="bench.uuid_v7_at(a)"
	)
	declare -A loc_size loc_rows loc_ms loc_buf loc_ins
	for c in $loc_names; do
		q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS bench.loc;
		      CREATE TABLE bench.loc (id ${loc_col[$c]}, at timestamptz NOT NULL); CHECKPOINT"
		if [ -n "${loc_id[$c]:-}" ]; then
			loc_ins[$c]=$(ms "INSERT INTO bench.loc (id, at) SELECT ${loc_id[$c]}, a
			                  FROM (SELECT g, $at AS a FROM generate_series(1, $LOCALITY_ROWS) g) s")
		else
			loc_ins[$c]=$(ms "INSERT INTO bench.loc (at) SELECT $at FROM generate_series(1, $LOCALITY_ROWS) g")
		fi
		q -c "VACUUM ANALYZE bench.loc"
		loc_size[$c]=$(q -c "SELECT pg_relation_size('bench.loc_pkey')")
		case $c in
		bigserial) scan="SELECT count(*) FROM bench.loc WHERE id >= $(q -c "SELECT min(id) FROM bench.loc WHERE at >= $since")" ;;
		next_id) scan="SELECT count(*) FROM bench.loc WHERE id >= shardid.min_id($since)" ;;
		uuidv7 | uuidv7_sql) scan="SELECT count(*) FROM bench.loc WHERE id >= bench.uuid_v7_min($since)" ;;
		*) scan="" ;;
		esac
		if [ -n "$scan" ]; then
			loc_rows[$c]=$(q -c "$scan")
			runs=""
			for r in $(seq "$REPS"); do runs="$runs $(ms "$scan")"; done
			read -r loc_ms[$c] _ _ <<<"$(stats "$runs")"
			loc_buf[$c]=$(q -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) $scan" |
				awk '/Buffers: shared/ {for (i = 1; i <= NF; i++) if ($i ~ /^(hit|read)=/) {split($i, kv, "="); n += kv[2]}
				     print n; exit}')
		else
			loc_rows[$c]="-" loc_ms[$c]="-" loc_buf[$c]="-"
		fi
	done
	q -c "DROP TABLE bench.loc"
	report "## 2b. Index locality: $LOCALITY_ROWS rows in time order"
	report ""
	report "$LOCALITY_ROWS rows whose times run over $LOCALITY_SPAN, inserted in time order in one statement (VACUUM ANALYZE after), each with the id its contender makes at that time; then \`SELECT count(*) ... WHERE id >= (smallest id of the last minute)\` through the primary key (median of $REPS, warm cache). Buffers: pages the scan touched (EXPLAIN BUFFERS), which does not depend on the machine's speed. Random UUIDs hold no time, so no key range finds the last minute."
	report ""
	report "| contender | primary key size | vs bigserial | rows of the last minute | range scan ms | vs bigserial | buffers | insert ms |"
	report "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for c in $loc_names; do
		report "| ${label[$c]} | $((${loc_size[$c]} / 1048576)) MiB | $(ratio "${loc_size[$c]}" "${loc_size[bigserial]}")x | ${loc_rows[$c]} | $(f1 "${loc_ms[$c]}") | $(ratio "${loc_ms[$c]}" "${loc_ms[bigserial]}")x | ${loc_buf[$c]} | $(f0 "${loc_ins[$c]}") |"
	done
	report ""
fi

# --------------------------- 3. pgbench single-row INSERT, 1 and 8 shard tables
if want 3; then
	echo "3. pgbench ..." >&2
	pg_names="bigserial next_id_seq next_id_free plpgsql_2011"
	for c in $pg_names; do
		for s in 0 1 2 3 4 5 6 7; do
			case $c in
			bigserial) col="bigserial PRIMARY KEY" ;;
			next_id_seq) col="bigint PRIMARY KEY DEFAULT shardid.next_id($s, nextval('bench.pb_${c}_${s}_seq'))" ;;
			next_id_free) col="bigint PRIMARY KEY DEFAULT shardid.next_id($s)" ;;
			plpgsql_2011) col="bigint PRIMARY KEY DEFAULT bench.next_id_2011()" ;;
			esac
			q -c "CREATE SEQUENCE bench.pb_${c}_${s}_seq; CREATE TABLE bench.pb_${c}_${s} (id $col, v int)"
		done
		echo "INSERT INTO bench.pb_${c}_0 (v) VALUES (1);" >"$work/pb_${c}_1.sql"
		printf '\\set s random(0, 7)\nINSERT INTO bench.pb_%s_:s (v) VALUES (1);\n' "$c" >"$work/pb_${c}_8.sql"
	done
	declare -A tps dup
	for r in $(seq "$REPS"); do
		for tables in 1 8; do
			for clients in 1 2 4 8; do
				for c in $pg_names; do
					"$PG_BIN/pgbench" -n -c "$clients" -j "$(( clients < 2 ? 1 : 2 ))" -T "$PGBENCH_SECONDS" \
						-f "$work/pb_${c}_${tables}.sql" >"$work/pb.log" 2>&1
					tps[$tables.$clients.$c]="${tps[$tables.$clients.$c]:-} $(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$work/pb.log")"
					dup[$c]=$(( ${dup[$c]:-0} + $(grep -c "duplicate key" "$work/pb.log") ))
				done
			done
		done
	done
	report "## 3. pgbench: single-row INSERT throughput"
	report ""
	report "\`INSERT INTO t (v) VALUES (1)\`, ${PGBENCH_SECONDS} s per run, transactions per second (median of $REPS); one shard table, or 8 shard tables picked at random."
	report ""
	report "| tables | clients | $(for c in $pg_names; do printf '%s | ' "${label[$c]}"; done)"
	report "| --- | ---: |$(for c in $pg_names; do printf ' ---: |'; done)"
	: >"$work/pgbench.dat"
	for tables in 1 8; do
		for clients in 1 2 4 8; do
			row="| $tables | $clients |"
			dat="$tables $clients"
			for c in $pg_names; do
				read -r m _ _ <<<"$(stats "${tps[$tables.$clients.$c]}")"
				row="$row $(f0 "$m") |"
				dat="$dat $m"
			done
			report "$row"
			echo "$dat" >>"$work/pgbench.dat"
		done
	done
	report ""
	report "Duplicate-key errors over all pgbench runs: $(for c in $pg_names; do printf '%s %s; ' "${label[$c]}" "${dup[$c]}"; done)"
	report ""
fi

# ------------------------------- 4. one session, one shard, against the ceiling
if want 4; then
	echo "4. ceiling ..." >&2
	declare -A idsql=(
		[next_id_seq]="shardid.next_id(5, nextval('bench.s5_seq'))"
		[next_id_free]="shardid.next_id(5)"
		[naive_port]="bench.naive_id(nextval('bench.s5_seq'))"
		[plpgsql_2011]="bench.next_id_2011()"
	)
	label[naive_port]="2011 packing at SQL speed, no guard"
	c_names="next_id_seq next_id_free naive_port plpgsql_2011"
	declare -A rate dups
	for r in $(seq "$REPS"); do
		for c in $c_names; do
			v=$(ms "SELECT count(${idsql[$c]}) FROM generate_series(1, $ROWS)")
			rate[$c]="${rate[$c]:-} $(awk -v m="$v" -v n="$ROWS" 'BEGIN {printf "%.0f", n / (m / 1000)}')"
			# the same run again, its ids kept, to count duplicates
			q -c "DROP TABLE IF EXISTS bench.ids" \
				-c "CREATE UNLOGGED TABLE bench.ids AS SELECT ${idsql[$c]} AS id FROM generate_series(1, $ROWS)"
			dups[$c]="${dups[$c]:-} $(q -c "SELECT count(*) - count(DISTINCT id) FROM bench.ids")"
		done
	done
	q -c "DROP TABLE IF EXISTS bench.ids"
	report "## 4. One session, one shard, against the layout's ceiling"
	report ""
	report "Rate from \`SELECT count(expr) FROM generate_series(1, $ROWS)\`; after each timed run the same statement runs again into \`CREATE UNLOGGED TABLE ids AS ...\` and its duplicate ids are counted. The layout holds 1,024,000 ids/s per shard; shardid.max_lead_ms = $(q -c "SHOW shardid.max_lead_ms")."
	report ""
	report "| contender | ids/s (median) | of the ceiling | duplicate ids per run |"
	report "| --- | ---: | ---: | --- |"
	for c in $c_names; do
		read -r m _ _ <<<"$(stats "${rate[$c]}")"
		report "| ${label[$c]} | $(f0 "$m") | $(awk -v m="$m" 'BEGIN {printf "%.1f%%", 100 * m / 1024000}') | $(echo ${dups[$c]}) |"
	done
	report ""

	# what shardid.max_lead_ms buys: the one-shard rate by setting
	report "### By shardid.max_lead_ms"
	report ""
	report "One session, one shard, \`SELECT count(shardid.next_id(5, nextval(seq))) FROM generate_series(1, $ROWS)\`, median of $REPS."
	report ""
	report "| max_lead_ms | ids/s | of the ceiling | lead waits |"
	report "| ---: | ---: | ---: | ---: |"
	for lead in 0 10 100 1000; do
		q -c "ALTER SYSTEM SET shardid.max_lead_ms = $lead" -c "SELECT pg_reload_conf()" >/dev/null
		sleep 0.5
		w0=$(q -c "SELECT clock_waits FROM shardid.info()")
		runs=""
		for r in $(seq "$REPS"); do
			v=$(ms "SELECT count(${idsql[next_id_seq]}) FROM generate_series(1, $ROWS)")
			runs="$runs $(awk -v m="$v" -v n="$ROWS" 'BEGIN {printf "%.0f", n / (m / 1000)}')"
		done
		read -r m _ _ <<<"$(stats "$runs")"
		report "| $lead | $(f0 "$m") | $(awk -v m="$m" 'BEGIN {printf "%.1f%%", 100 * m / 1024000}') | $(( $(q -c "SELECT clock_waits FROM shardid.info()") - w0 )) |"
	done
	q -c "ALTER SYSTEM RESET shardid.max_lead_ms" -c "SELECT pg_reload_conf()" >/dev/null
	report ""
fi

# ------------------------ 4b. several sessions inserting into one shard
# Each pgbench client runs 500-row INSERTs into the same shard table; the
# total is CONC_ROWS rows whatever the number of clients.  Id time used is
# the span of the ids' times; per second of wall time it is 1 while the
# shard keeps up with the clock, more when ids borrow ahead of it.
if want 4b; then
	echo "4b. concurrency ..." >&2
	CONC_ROWS=${CONC_ROWS:-640000}
	conc_names="bigserial next_id_seq next_id_free"
	declare -A conc_col=(
		[bigserial]="bigserial PRIMARY KEY"
		[next_id_seq]="bigint PRIMARY KEY DEFAULT shardid.next_id(9, nextval('bench.conc_seq'))"
		[next_id_free]="bigint PRIMARY KEY DEFAULT shardid.next_id(9)"
	)
	q -c "CREATE SEQUENCE bench.conc_seq"
	echo "INSERT INTO bench.conc (v) SELECT g FROM generate_series(1, 500) g;" >"$work/conc.sql"
	report "### Several sessions on one shard"
	report ""
	report "pgbench clients each running \`INSERT INTO t (v) SELECT g FROM generate_series(1, 500) g\` into one shard table, $CONC_ROWS rows in all per run. Id time per wall second: (largest id time - smallest id time) / wall time; 1.00 means the shard kept pace with the clock, more means ids borrowed ahead of it. Lead: the largest id time minus the clock at the end. Clock waits from \`shardid.info()\`."
	report ""
	report "| clients | contender | rows/s | id time per wall second | lead at the end (ms) | clock waits | duplicates |"
	report "| ---: | --- | ---: | ---: | ---: | ---: | ---: |"
	declare -A conc_idt
	for clients in 1 2 8 32; do
		for c in $conc_names; do
			q -c "SET client_min_messages = warning; DROP TABLE IF EXISTS bench.conc;
			      CREATE TABLE bench.conc (id ${conc_col[$c]}, v int); CHECKPOINT"
			w0=$(q -c "SELECT clock_waits FROM shardid.info()")
			t0=$(date +%s%3N)
			"$PG_BIN/pgbench" -n -c "$clients" -j "$(( clients < 2 ? 1 : 2 ))" -t $((CONC_ROWS / 500 / clients)) \
				-f "$work/conc.sql" >"$work/conc.log" 2>&1
			t1=$(date +%s%3N)
			read -r rows idt lead dups <<<"$(q -F' ' -c "
			    SELECT count(*),
			           CASE WHEN '$c' = 'bigserial' THEN '-' ELSE
			               round((max(shardid.id_millis(id)) - min(shardid.id_millis(id)))::numeric / ($t1 - $t0), 2)::text END,
			           CASE WHEN '$c' = 'bigserial' THEN '-' ELSE
			               round(extract(epoch FROM shardid.id_time(max(id)) - clock_timestamp()) * 1000)::text END,
			           count(*) - count(DISTINCT id)
			    FROM bench.conc")"
			dups=$((dups + $(grep -c "duplicate key" "$work/conc.log")))
			waits=$(( $(q -c "SELECT clock_waits FROM shardid.info()") - w0 ))
			[ "$c" = bigserial ] && waits="-"
			conc_idt[$clients.$c]=$idt
			report "| $clients | ${label[$c]} | $(awk -v r="$rows" -v ms="$((t1 - t0))" 'BEGIN {printf "%.0f", r / (ms / 1000)}') | $idt | $lead | $waits | $dups |"
		done
	done
	q -c "DROP TABLE bench.conc"
	report ""
	report "- id time of the sequence form over the sequence-free form: 8 clients $(ratio "${conc_idt[8.next_id_seq]}" "${conc_idt[8.next_id_free]}")x, 32 clients $(ratio "${conc_idt[32.next_id_seq]}" "${conc_idt[32.next_id_free]}")x."
	report ""
fi

# -------------------------------------------- provisioning 2000 logical shards
if want 5; then
	echo "provisioning ..." >&2
	q >/dev/null <<-'SQL'
	CREATE SCHEMA app_template;
	CREATE TABLE app_template.users (id bigint PRIMARY KEY, user_id bigint NOT NULL UNIQUE, name text);
	CREATE TABLE app_template.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL REFERENCES app_template.users (user_id),
	                                  caption text, created_at timestamptz DEFAULT now());
	CREATE INDEX ON app_template.photos (user_id);
	CREATE TABLE app_template.likes (id bigint PRIMARY KEY, photo_id bigint NOT NULL, user_id bigint NOT NULL);
	SQL
	prov=$(ms "CALL shardid.add_shards('app_template', first_shard => 0, last_shard => 1999)")
	rerun=$(ms "CALL shardid.add_shards('app_template', first_shard => 0, last_shard => 1999)")
	view=$(ms "SELECT count(*) FROM shardid.shards")
	doctor=$(ms "SELECT count(*) FROM shardid.doctor()")
	report "## 5. Provisioning logical shards"
	report ""
	report "\`CALL shardid.add_shards()\` of 2000 shards from a template of 3 tables (5 indexes, a foreign key): 2000 schemas, 6000 tables, 6000 sequences, one transaction per shard."
	report ""
	report "| step | ms |"
	report "| --- | ---: |"
	report "| create 2000 shards x 3 tables | $(f0 "$prov") |"
	report "| run it again (everything exists) | $(f0 "$rerun") |"
	report "| \`SELECT count(*) FROM shardid.shards\` | $(f0 "$view") |"
	report "| \`shardid.doctor()\` over 6000 tables (empty) | $(f0 "$doctor") |"
	report ""
fi

# ------------------------------------------------------------------ 6. memory
# Then the same server without shardid in shared_preload_libraries: session
# mode before PostgreSQL 17; from 17 on, strict mode in a segment of the
# dynamic shared memory registry (there is no session mode there), and the
# lines say which one the server ran.
if want 6; then
	shm=$(q -c "SELECT size FROM pg_shmem_allocations WHERE name = 'shardid'")
	cluster_stop bench
	sed -i "s/^shared_preload_libraries = 'shardid'/#&/" "$SHARDID_TMP/bench/postgresql.conf"
	cluster_start bench
	np_mode=$(q -c "SELECT mode FROM shardid.info()")
	if [ "$np_mode" = session ]; then
		guard() {	# guard SHARDS: bytes of the session guard after stamping SHARDS shards
			q -c "SELECT count(shardid.next_id((i % $1)::int, i)) FROM generate_series(0, 9999) i" \
				-c "SELECT total_bytes FROM pg_backend_memory_contexts WHERE name = 'shardid session guard'" | tail -1
		}
		g1=$(guard 1)
		g64=$(guard 64)
		g8192=$(guard 8192)
	else
		q -c "SELECT shardid.next_id(5, 1)" >/dev/null
		# pg_dsm_registry_allocations is PostgreSQL 18's
		dsm=$(q -c "SELECT size FROM pg_dsm_registry_allocations WHERE name = 'shardid'" 2>/dev/null)
	fi
	np_rate=$(ms "SELECT count(shardid.next_id(5, nextval('bench.s5_seq'))) FROM generate_series(1, $ROWS)")
	np_rate=$(awk -v m="$np_rate" -v n="$ROWS" 'BEGIN {printf "%.0f ids/s (%.1f%% of the ceiling", n / (m / 1000), 100 * n / (m / 1000) / 1024000}')
	cluster_stop bench
	report "## 6. Memory"
	report ""
	report "- strict mode, shared memory: $shm bytes ($(awk -v b="$shm" 'BEGIN {printf "%.0f", b / 1024}') KiB: 8192 shards x 64-byte slots and counters), requested once at server start."
	if [ "$np_mode" = session ]; then
		report "- session mode (not preloaded), per backend that calls next_id(): $g1 bytes after stamping 1 shard, $g64 after 64 shards, $g8192 after all 8192: a 64 KiB table of per-shard windows plus $(( (g8192 - g1) / 8191 )) bytes per shard used (a 136-byte window and its allocation overhead), in memory context \"shardid session guard\"."
		report "- session mode, one session on one shard: $np_rate; it waits for the clock rather than stamp ahead of it)."
	else
		report "- not preloaded (PostgreSQL 17+): strict mode all the same, its state in a segment of the dynamic shared memory registry${dsm:+ ($dsm bytes)}, created by the first backend that needs it; there is no session mode."
		report "- not preloaded, strict mode through dynamic shared memory, one session on one shard: $np_rate)."
	fi
	report ""
fi

# --------------------------------------------------- 7. instructions per call
if want 7; then
	echo "7. callgrind ..." >&2
	# a single-user backend needs the server stopped (section 6 stops it)
	as_pg "$PG_BIN/pg_ctl" -D "$SHARDID_TMP/bench" status >/dev/null && cluster_stop bench
	sed -i "s/^#\(shared_preload_libraries = 'shardid'\)/\1/" "$SHARDID_TMP/bench/postgresql.conf"
	cg() {	# cg NAME SQL: instructions per call of the functions of interest
		(cd "$work" && echo "$2" | as_pg valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1" \
			"$PG_BIN/postgres" --single -D "$SHARDID_TMP/bench" postgres >/dev/null 2>&1)
		callgrind_annotate --inclusive=yes --threshold=100 "$work/cg.$1" 2>/dev/null >"$work/cg.$1.txt"
	}
	chmod 777 "$work"
	# Each statement runs with n and with 2n calls, and a call costs the
	# difference over n: what a backend does once (its first id of each shard
	# reads the shard's tables, the catalog caches fill) cancels out.
	n=$CALLGRIND_CALLS
	for k in 1 2; do
		m=$((k * n))
		cg seq$k "SELECT count(shardid.next_id((n % 64)::int, n / 64)) FROM (SELECT nextval('bench.loop_seq') AS n FROM generate_series(1, $m)) x"
		cg free$k "SELECT count(shardid.next_id((i % 64)::int)) FROM generate_series(1, $m) i"
		cg plpgsql$k "SELECT count(bench.next_id_2011()) FROM generate_series(1, $m) i"
		[ "$has_next_ids" = t ] &&
			cg ids$k "SELECT count(*) FROM generate_series(1, $((m / 1000))) b, shardid.next_ids((b % 64)::int, 1000)"
	done
	per() {	# per NAME SYMBOL: inclusive instructions per call, steady state
		local one two
		one=$(awk -v s="$2" '$0 ~ s {gsub(",", "", $1); print $1; exit}' "$work/cg.${1}1.txt")
		two=$(awk -v s="$2" '$0 ~ s {gsub(",", "", $1); print $1; exit}' "$work/cg.${1}2.txt")
		awk -v a="$one" -v b="$two" -v n="$n" 'BEGIN {printf "%.0f", (b - a) / n}'
	}
	report "## 7. Instructions per call (valgrind --tool=callgrind)"
	report ""
	report "Single-user backend, inclusive instruction counts of $((2 * n)) calls less those of $n calls, over $n: the steady cost of a call, without what a backend does once (a shard's first id reads its tables). Instruction counts repeat from run to run, unlike times on a shared machine."
	report ""
	report "| function | instructions per call |"
	report "| --- | ---: |"
	report "| shardid.next_id(shard, seq), strict mode | $(per seq ':shardid_next_id \[') |"
	report "| &nbsp;&nbsp;of which the clock (GetCurrentTimestamp) | $(per seq ':GetCurrentTimestamp \[') |"
	report "| &nbsp;&nbsp;of which shared-state stamping (shardid_strict_stamp) | $(per seq ':shardid_strict_stamp \[') |"
	report "| shardid.next_id(shard), strict mode | $(per free ':shardid_next_id_counter \[') |"
	report "| nextval() (what bigserial calls) | $(per seq ':nextval_oid \[') |"
	[ "$has_next_ids" = t ] &&
		report "| shardid.next_ids(shard, 1000), strict mode, per id (the set's tuplestore not included) | $(per ids ':shardid_next_ids \[') |"
	report "| 2011 PL/pgSQL next_id() (its nextval included) | $(per plpgsql ':plpgsql_call_handler \[') |"
	report ""
	i_seq=$(per seq ':shardid_next_id \[')
	i_free=$(per free ':shardid_next_id_counter \[')
	i_nv=$(per seq ':nextval_oid \[')
	i_pl=$(per plpgsql ':plpgsql_call_handler \[')
	report "- next_id(shard, nextval()) over nextval() alone: $(ratio $((i_seq + i_nv)) "$i_nv")x"
	report "- 2011 PL/pgSQL next_id() over next_id(shard, nextval()): $(ratio "$i_pl" $((i_seq + i_nv)))x; over next_id(shard): $(ratio "$i_pl" "$i_free")x; what PL/pgSQL adds to nextval() over what shardid adds: $(ratio $((i_pl - i_nv)) "$i_seq")x"
	report "- nextval() over next_id(shard): $(ratio "$i_nv" "$i_free")x"
	report ""
fi

cp "$work/results.md" "$results.md"

# -------------------------------------------------------------------- plot
if want 1 && want 2 && command -v gnuplot >/dev/null; then
	gnuplot <<EOF
set terminal pngcairo size 1100,460 font "DejaVu Sans,10" noenhanced
set output "$results.png"
set bmargin 9
set multiplot layout 1,2 title "shardid vs the alternatives ($(date -u +%Y-%m-%d), $(nproc) cores, PostgreSQL $("$PG_CONFIG" --version | awk '{print $2}'))"
set style data histograms
set style fill solid 0.8 border -1
set boxwidth 0.8
set grid ytics
set xtics rotate by -30 scale 0 font ",9"
set key off
set title "ns per call, net of the loop, log scale (lower is better)"
set logscale y
set yrange [1:*]
plot "$work/percall.dat" using 2:xtic(1) linecolor rgb "#3572a5"
unset logscale y
set yrange [0:*]
set key top left
set title "INSERT of $INSERT_ROWS rows, time vs bigserial (lower is better)"
plot "$work/insert.dat" using 2:xtic(1) title "logged" linecolor rgb "#3572a5", \
     "" using 3 title "unlogged" linecolor rgb "#e39b3a", 1 with lines dashtype 2 linecolor rgb "black" notitle
unset multiplot
EOF
fi
echo
cat "$results.md"
