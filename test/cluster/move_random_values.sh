#!/usr/bin/env bash
# test/cluster/move_random_values.sh: a seeded random walk of shardid-move
# over column types, the settings that change a value's text, and offline
# and online moves; every move that ends "verified" carried every value, and
# a value changed on the copy, by a difference that equality or a lossy
# text would miss, is found.
#
# MOVE_SEED=N replays a walk (the seed is printed first); MOVE_ROUNDS=N
# (default 4) sets its length.  Each round:
#   - gives each server random defaults, for database app, for the move's
#     role postgres (also IN DATABASE app) and for the tables' owner, of the
#     settings that the types' input and output read (DateStyle,
#     IntervalStyle, TimeZone, extra_float_digits, bytea_output,
#     array_nulls, xmloption, standard_conforming_strings,
#     quote_all_identifiers, timezone_abbreviations);
#   - writes random rows of tricky values (-0, NaN, 1.0 and 1.00, '' and
#     NULL, '{NULL}' and '{"NULL"}', json keys in their order, '1 mon' and
#     '30 days', LMT offsets, ...) into a table of randomly chosen column
#     types and into a table without a key holding duplicate rows, under
#     each server's own defaults; online, once the move hashed the rows
#     before the freeze (pause point hashed), it updates, inserts, deletes,
#     rewrites (VACUUM FULL) and locks then updates in a subtransaction
#     (a MultiXactId) rows of the --from server, then goes on racing the
#     freeze until it refuses the writes;
#   - moves the shard (round 1 offline, round 2 online, then at random),
#     its materialized views populated on the --to server as on the --from
#     server (an online move left them unpopulated before this release), and
#     compares the two servers' rows read by this script alike on both
#     (to_jsonb(), which names a composite's attributes, and the row's text,
#     under settings of its own that differ from those the move pins),
#     then drops the source.
# In one round (at random) the move is first paused before its
# verification and one value of the copy changed to its twin (or one of
# two identical rows of the table without a key to the other row): the move
# must fail with the error that names the table, undone.
# Then, online, a TRUNCATE on the --from server after the hashes before
# the freeze: into PostgreSQL 16+ not carried (see below), the move must
# end undone at the verification (shardid-move before this release froze
# the shard until --timeout).
# Then, online, a table of REPLICA IDENTITY FULL with a json column, whose
# updates the subscription's apply cannot find (no equality operator): the
# move must be refused up front (shardid-move before this release froze
# the shard, then gave up when the --to server did not catch up within
# --timeout).
# Last, a composite type outside the schema whose attributes are in
# another order on the --to server (the same text, other values): the move
# must fail naming both definitions (shardid-move before this release
# verified it: the copy's rows read the same text into the other
# attributes).
. "$(dirname "$0")/../lib.sh" cluster

seed=${MOVE_SEED:-$(( ($(date +%s%N) / 1000) % 1000000 ))}
rounds=${MOVE_ROUNDS:-4}
echo "MOVE_SEED=$seed MOVE_ROUNDS=$rounds (replay: MOVE_SEED=$seed)"
# an own generator: bash reseeds RANDOM in every subshell
rng_state=$seed
rnd() { rng_state=$(((rng_state * 1103515245 + 12345) % 2147483648)); R=$((rng_state / 65536)); }
pick() { rnd; shift $((R % $#)); REPLY=$1; }	# REPLY: one of the arguments
set -f	# the literals are words, never patterns

# this script's own reading and writing: the same on both servers, and not
# the settings the move pins
mine="-c datestyle=ISO,DMY -c intervalstyle=iso_8601 -c timezone=Asia/Kathmandu -c extra_float_digits=3"
mine+=" -c bytea_output=escape -c array_nulls=on -c lc_monetary=C -c xmloption=content"
mine+=" -c standard_conforming_strings=on -c quote_all_identifiers=off -c search_path=public"
pon() { local p=$1; shift; PGOPTIONS="$mine" q -d "$(conn "$p")" "$@"; }

move_servers 510 2 "${LOGICAL[@]}" || exit 1
for p in $a $b; do
	on "$p" >/dev/null <<'SQL' || exit 1
CREATE EXTENSION shardid;
CREATE ROLE app_owner LOGIN;
ALTER DATABASE app OWNER TO app_owner;
CREATE TYPE public.pt AS (x float8, y text, z numeric);
CREATE TYPE public.mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN public.amount AS numeric(12, 2);
SQL
done
# the enum's labels in another order on b: the same values, held
on "$b" -c "ALTER TYPE public.mood ADD VALUE 'meh' BEFORE 'sad'" || exit 1

# types: NAME SQLTYPE, their values (SQL literals, with this script's
# settings), and two twins: values that differ but that '=' (or a lossy
# text) may take for the same
declare -A vals twin_a twin_b sqltype
addtype() {
	local n=$1 IFS=$'\n'
	sqltype[$n]=$2 twin_a[$n]=$3 twin_b[$n]=$4
	shift 4
	vals[$n]="$*"
}
addtype f8 float8 "'0'" "'-0'" "'NaN'" "'Infinity'" "'-Infinity'" "'0.1'" "'1e-310'" "'1.7976931348623157e308'" "'0.30000000000000004'" "'-0'" "NULL"
addtype f4 float4 "'1.1'" "'1.1000001'" "'-0'" "'NaN'" "'3.4028235e38'" "'1e-45'" "'0.1'"
addtype num numeric "'1.0'" "'1.00'" "'-0.0'" "'NaN'" "'1e-20'" "'123456789012345678901234567890.123'" "'0'" "NULL"
addtype txt text "''" "NULL" "'NULL'" "\$\$a,b\$\$" "'(x)'" "\$\$\"q\"\$\$" "\$\$back\\slash\$\$" "E'tab\\there'" "E'new\\nline'" "'ünï'" "'\\N'"
addtype by bytea "'\\x00'" "'\\x0000'" "'\\x'" "'\\x00ff5c78'" "'\\x5c'" "NULL"
addtype js json "\$\${\"a\":2,\"b\":1}\$\$" "\$\${\"b\":1,\"a\":2}\$\$" "\$\${\"a\":1,\"a\":2}\$\$" "'[1.0,1.00]'" "\$\$\"x\"\$\$" "'null'"
addtype jb jsonb "'1.0'" "'1.00'" "\$\${\"b\":1,\"a\":[1,2]}\$\$" "'{}'" "'-0'" "'1e2'"
addtype tz timestamptz "'2026-01-01T00:00:00+00'" "'2026-01-01T00:00:00.000001+00'" "'1900-01-01T00:00:00+00'" "'infinity'" "'0044-03-15T12:00:00+00BC'" "'2000-01-01T00:00:00.123456+05:45'" "'2026-03-08T02:30:00+00'"
addtype ts timestamp "'2026-01-02T03:04:05.678901'" "'2026-01-02T03:04:05.6789'" "'-infinity'" "'1999-12-31T23:59:59'" "'0001-01-01T00:00:00BC'"
addtype dt date "'2026-01-02'" "'2026-02-01'" "'0001-01-01BC'" "'infinity'" "'1970-01-01'"
addtype tm timetz "'12:00:00+05:45'" "'06:15:00+00'" "'00:00:00-15:59'" "'24:00:00+00'"
addtype iv interval "'P1M'" "'P30D'" "'P-1DT1H'" "'P1M-1D'" "'PT-1S'" "'P1Y2M3DT4H5M6.7S'" "'P-1Y1M'" "'PT0S'"
addtype arr "text[]" "'{NULL}'" "\$\${\"NULL\"}\$\$" "'{a,NULL,b}'" "'{}'" "\$\${\"\",\"\"}\$\$" "'{{a,b},{c,d}}'" "'[0:1]={x,y}'" "NULL"
addtype mon money "'0.01'" "'0.00'" "'12.34'" "'-0.01'" "'92233720368547758.07'"
addtype xm xml "'<a>1</a>'" "'<a>1</a><b/>'" "'text only'" "'<a/><b/>'" "'<r/>'"
addtype comp pt "\$\$(0,\"\",1)\$\$" "\$\$(0,,1)\$\$" "\$\$(-0,x,1.0)\$\$" "\$\$(NaN,\"a,b\",1.00)\$\$" "'(,,)'" "NULL"
addtype rng numrange "'[1.0,2.00]'" "'[1.00,2.00]'" "'empty'" "'(,)'" "'[1,3)'"
addtype tsv tsvector "'a'" "'a:1'" "'a:1A b:2'" "\$\$'x y':3\$\$" "''"
addtype ine inet "'10.0.0.1/8'" "'10.0.0.1'" "'::ffff:1.2.3.4'" "'10.0.0.0/8'"
addtype pnt point "'(0,0)'" "'(-0,0)'" "'(NaN,1e-310)'" "'(1.5,2)'"
addtype md mood "'sad'" "'ok'" "'happy'" "NULL"
addtype amt amount "'1.5'" "'1.49'" "'0'" "'-0.001'" "'99.999'"
addtype bits "bit varying" "B'101'" "B'1010'" "B''" "B'0'"
names=(f8 f4 num txt by js jb tz ts dt tm iv arr mon comp rng tsv ine pnt md amt bits)
# xml where the servers have it (built with libxml)
on "$a" -c "SELECT '<a/>'::xml" >/dev/null 2>&1 && names+=(xm)

# every literal read (test of the test)
for t in "${names[@]}"; do
	IFS=$'\n'
	for l in ${vals[$t]} "${twin_a[$t]}" "${twin_b[$t]}"; do echo "SELECT $l::${sqltype[$t]};"; done
	unset IFS
done >"$SHARDID_TMP/literals.sql"
pon "$a" -f "$SHARDID_TMP/literals.sql" >/dev/null || fail "the literals of the types (test of the test)"

# the table: id and 6 to 9 columns of random types (repeats allowed)
rnd
ncols=$((6 + R % 4))
cols=()
defs="id bigint PRIMARY KEY"
for ((i = 1; i <= ncols; i++)); do
	pick "${names[@]}"
	t=$REPLY
	cols+=("$t")
	defs+=", c$i ${sqltype[$t]}"
done
echo "the table: $defs"
# dups has no key: REPLICA IDENTITY FULL for the online moves, whose apply
# finds the old row of an update by '=' (its rows are never '=' while
# their text differs, as 0 and -0 are: the apply could update the other
# one, which the verification would then refuse, rightly)
pon "$a" >/dev/null <<SQL || exit 1
CREATE SCHEMA app_template;
CREATE TABLE app_template.vals ($defs);
CREATE TABLE app_template.dups (v text, f float8, a text[]);
SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[5]);
ALTER TABLE shard_0005.dups REPLICA IDENTITY FULL;
CREATE MATERIALIZED VIEW shard_0005.mv AS SELECT v, pg_catalog.count(*) AS n FROM shard_0005.dups GROUP BY v;
CREATE MATERIALIZED VIEW shard_0005.mv_unread AS SELECT 1 AS one WITH NO DATA;
SQL

# REPLY: a random literal of column i (1-based)
lit() { local t=${cols[$(($1 - 1))]} IFS=$'\n'; pick ${vals[$t]} "${twin_a[$t]}" "${twin_b[$t]}"; }
# SQL that writes N random rows on a server, under its defaults
rows_sql() {
	local n=$1 i r list
	for ((r = 0; r < n; r++)); do
		list=""
		for ((i = 1; i <= ncols; i++)); do lit "$i"; list+="${list:+, }$REPLY"; done
		echo "INSERT INTO shard_0005.vals (c$(seq -s ', c' 1 "$ncols")) VALUES ($list);"
	done
	# duplicates: each row twice or thrice
	for ((r = 0; r < 3; r++)); do
		local v f k
		pick "''" "'x'" "NULL" "'NULL'"
		v=$REPLY
		pick "'0'" "'NaN'" "NULL" "'0.1'"	# no -0: 0 = -0 (below)
		f=$REPLY
		pick "'{NULL}'" "'{\"NULL\"}'" "NULL" "'{}'"
		rnd
		for ((k = 0; k < 2 + R % 2; k++)); do
			echo "INSERT INTO shard_0005.dups VALUES ($v, $f, $REPLY);"
		done
	done
}
# SQL that changes random rows, a pause between statements: the writer of
# an online move, which stops at the first error (the freeze)
writes_sql() {
	local n=$1 r i j list
	for ((r = 0; r < n; r++)); do
		rnd
		i=$((1 + R % ncols))
		rnd
		j=$((R % 8))
		rnd
		[ $((R % 15)) = 14 ] && R=5	# now and then a new file: hashed again in full in the freeze
		[ $((R % 7)) = 6 ] && R=6	# a row locked, then updated in a subtransaction: a MultiXactId
		case $((R % 7)) in
		0)
			list=""
			for ((k = 1; k <= ncols; k++)); do lit "$k"; list+="${list:+, }$REPLY"; done
			echo "INSERT INTO shard_0005.vals (c$(seq -s ', c' 1 "$ncols")) VALUES ($list);" ;;
		1) echo "DELETE FROM shard_0005.vals WHERE id = (SELECT id FROM shard_0005.vals ORDER BY id OFFSET $j LIMIT 1);" ;;
		2)
			pick "'0'" "'NaN'" "'1e-310'"
			echo "UPDATE shard_0005.dups SET f = $REPLY WHERE ctid = (SELECT ctid FROM shard_0005.dups ORDER BY ctid OFFSET $((j % 6)) LIMIT 1);" ;;
		5) echo "VACUUM FULL shard_0005.dups;" ;;
		6)
			lit "$i"
			echo "BEGIN; SELECT FROM shard_0005.vals WHERE id = (SELECT id FROM shard_0005.vals ORDER BY id OFFSET $j LIMIT 1) FOR SHARE;"
			echo "SAVEPOINT s; UPDATE shard_0005.vals SET c$i = $REPLY WHERE id = (SELECT id FROM shard_0005.vals ORDER BY id OFFSET $j LIMIT 1);"
			pick "RELEASE s;" "ROLLBACK TO s;"
			echo "$REPLY COMMIT;" ;;
		*)
			lit "$i"
			echo "UPDATE shard_0005.vals SET c$i = $REPLY WHERE id = (SELECT id FROM shard_0005.vals ORDER BY id OFFSET $j LIMIT 1);" ;;
		esac
		echo "SELECT pg_catalog.pg_sleep(0.01);"
	done
}

# what a server holds, read alike on both
content() {
	pon "$1" -c "COPY (SELECT pg_catalog.to_jsonb(t)::text || ' ' || t::text FROM shard_0005.vals t ORDER BY 1) TO STDOUT" &&
		pon "$1" -c "COPY (SELECT pg_catalog.to_jsonb(t)::text || ' ' || t::text FROM shard_0005.dups t ORDER BY 1) TO STDOUT"
}

settings=(
	"datestyle|'SQL, DMY'|'Postgres, YMD'|'German'|'ISO, DMY'"
	"intervalstyle|sql_standard|iso_8601|postgres_verbose"
	"timezone|'America/St_Johns'|'Asia/Kathmandu'|'Pacific/Chatham'|'Europe/Amsterdam'"
	"extra_float_digits|-15|0|1|2"
	"bytea_output|escape"
	"array_nulls|off"
	"xmloption|document"
	"standard_conforming_strings|off"
	"quote_all_identifiers|on"
	"timezone_abbreviations|'India'|'Australia'"
)
# random defaults on server p, at random levels; printed
set_defaults() {
	local p=$1 n k s name v level sql="" said=""
	sql="ALTER DATABASE app RESET ALL; ALTER ROLE postgres RESET ALL; ALTER ROLE postgres IN DATABASE app RESET ALL; ALTER ROLE app_owner RESET ALL;"
	rnd
	n=$((2 + R % 4))
	for ((k = 0; k < n; k++)); do
		pick "${settings[@]}"
		s=$REPLY
		name=${s%%|*}
		IFS='|' read -r -a v <<<"${s#*|}"
		pick "${v[@]}"
		v=$REPLY
		pick "DATABASE app" "ROLE postgres" "ROLE postgres IN DATABASE app" "ROLE app_owner"
		level=$REPLY
		sql+=" ALTER $level SET $name = $v;"
		said+=" [$level] $name=$v"
	done
	echo "  defaults on $p:$said"
	pon "$p" -c "$sql" >/dev/null
}

# the exact error of a detected difference
differ_msg() {
	echo "shardid-move: error: the rows of table \"shard_0005\".\"$1\" differ between the --from server and the --to server: $2 rows on each, but the hashes of their contents differ"
}

from=$a
to=$b
rnd
detect_round=$((1 + R % rounds))
for ((round = 1; round <= rounds; round++)); do
	case $round in
	1) mode=offline ;;
	2) mode=online ;;
	*) pick offline online; mode=$REPLY ;;
	esac
	echo "round $round: $mode $from -> $to"
	set_defaults "$from" && set_defaults "$to" || fail "round $round: the defaults"
	# rows written under the --from server's own defaults, but for
	# this script's literals: the text a client sends
	rnd
	rows_sql $((3 + R % 4)) >"$SHARDID_TMP/rows$round.sql"
	pon "$from" -f "$SHARDID_TMP/rows$round.sql" >/dev/null || fail "round $round: the rows"
	opts=(--shard 5 --from "$(conn "$from")" --to "$(conn "$to")")
	# a catch-up of these few rows takes a second: --timeout bounds a stuck one
	[ "$mode" = online ] && opts+=(--online --timeout 60)
	log="$SHARDID_TMP/round$round.move"

	if [ "$round" = "$detect_round" ]; then
		# a twin on the copy: one value, or a duplicate row of dups
		rnd
		if [ $((R % 3)) = 0 ]; then
			table=dups
			change="UPDATE shard_0005.dups SET v = 'twin' WHERE ctid = (SELECT ctid FROM shard_0005.dups ORDER BY ctid LIMIT 1)"
			pon "$from" -c "INSERT INTO shard_0005.dups SELECT 'twin', f, a FROM shard_0005.dups ORDER BY ctid LIMIT 1" >/dev/null
		else
			table=vals
			rnd
			i=$((1 + R % ncols))
			t=${cols[$((i - 1))]}
			pon "$from" -c "UPDATE shard_0005.vals SET c$i = ${twin_a[$t]} WHERE id = (SELECT min(id) FROM shard_0005.vals)" >/dev/null
			change="UPDATE shard_0005.vals SET c$i = ${twin_b[$t]} WHERE id = (SELECT min(id) FROM shard_0005.vals)"
			echo "  the copy's c$i ($t): ${twin_a[$t]} -> ${twin_b[$t]}"
		fi
		n=$(pon "$from" -c "SELECT count(*) FROM shard_0005.$table")
		move_paused "round $round, a twin on the copy" verify "$log" "${opts[@]}" &&
			pon "$to" -c "SET session_replication_role = replica; $change" >/dev/null
		move_go
		status=$?
		sed 's/^/  | /' "$log"
		expect "$status" = 1 "round $round ($mode), a twin on the copy: exit status"
		grep -qxF "$(differ_msg "$table" "$n")" "$log" ||
			fail "round $round ($mode), a twin on the copy: not reported as a difference of table $table (seed $seed)"
		expect "$(pon "$to" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 \
			"round $round, a twin on the copy: the copy left on the --to server"
		expect "$(pon "$from" -c "SELECT shardid.shard_schema(5)")" = shard_0005 \
			"round $round, a twin on the copy: shard 5 registered on the --from server"
	fi

	# the move that carries every value
	writer=""
	if [ "$mode" = online ]; then
		# changes after the hashes before the freeze, which the freeze
		# hashes alone; then more, racing the freeze
		move_paused "round $round" hashed "$log" "${opts[@]}" || continue
		writes_sql 30 >"$SHARDID_TMP/changes$round.sql"
		pon "$from" -f "$SHARDID_TMP/changes$round.sql" >/dev/null ||
			fail "round $round: the changes after the hashes before the freeze"
		writes_sql 300 >"$SHARDID_TMP/writes$round.sql"
		PGOPTIONS="$mine" "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$(conn "$from")" \
			-f "$SHARDID_TMP/writes$round.sql" >"$SHARDID_TMP/writes$round.out" 2>&1 &
		writer=$!
		move_go
		status=$?
		wait "$writer"
		echo "  writer: $(grep -c . "$SHARDID_TMP/writes$round.out") lines; $(grep -m1 ERROR "$SHARDID_TMP/writes$round.out")"
	else
		"$move" "${opts[@]}" >"$log" 2>&1
		status=$?
	fi
	sed 's/^/  | /' "$log"
	[ "$status" = 0 ] || grep -h -A3 "ERROR" "$SHARDID_TMP"/s0.log "$SHARDID_TMP"/s1.log | tail -8
	expect "$status" = 0 "round $round ($mode $from -> $to): exit status (seed $seed)"
	grep -q "^shardid-move: verified: the rows of 2 tables" "$log" ||
		fail "round $round: the verification not reported (seed $seed)"
	if [ "$status" = 0 ]; then
		content "$from" >"$SHARDID_TMP/from$round.txt"
		content "$to" >"$SHARDID_TMP/to$round.txt"
		if ! diff "$SHARDID_TMP/from$round.txt" "$SHARDID_TMP/to$round.txt" >"$SHARDID_TMP/diff$round.txt"; then
			fail "round $round ($mode $from -> $to): verified, but the rows differ (seed $seed): $(head -20 "$SHARDID_TMP/diff$round.txt")"
		fi
		echo "  $(wc -l <"$SHARDID_TMP/from$round.txt") rows alike on both servers"
		# the materialized views populated as on the --from server (an
		# online copy's definitions made them WITH NO DATA)
		expect "$(pon "$to" -c "SELECT string_agg(relname || ' ' || relispopulated, ', ' ORDER BY relname) FROM pg_class
		    WHERE relnamespace = 'shard_0005'::regnamespace AND relkind = 'm'")" = "mv true, mv_unread false" \
			"round $round ($mode): the materialized views on the --to server"
		"$move" --shard 5 --from "$(conn "$from")" --to "$(conn "$to")" --drop-source --yes >/dev/null ||
			fail "round $round: --drop-source"
		x=$from; from=$to; to=$x
	fi
done

# online, a TRUNCATE on the --from server after the hashes before the
# freeze: into PostgreSQL 16+ it is not published (its apply checks the
# subscription owner's own TRUNCATE privilege, which the move's role has
# not), and the verification ends the move undone; shardid-move before this
# release froze the shard and gave up at --timeout, the apply failing at
# each retry ("permission denied for table dups").  Into 15 it is carried.
n=$(pon "$from" -c "SELECT count(*) FROM shard_0005.dups")
move_paused "online, a TRUNCATE" hashed "$SHARDID_TMP/truncate.move" --shard 5 --from "$(conn "$from")" \
	--to "$(conn "$to")" --online --timeout 10 &&
	pon "$from" -c "TRUNCATE shard_0005.dups" >/dev/null
move_go
status=$?
sed 's/^/  | /' "$SHARDID_TMP/truncate.move"
if [ "$(pon "$to" -c "SHOW server_version_num")" -ge 160000 ]; then
	expect "$status" = 1 "online, a TRUNCATE on the --from server: exit status"
	grep -qxF "shardid-move: error: table \"shard_0005\".\"dups\" has 0 rows on the --from server but $n on the --to server" \
		"$SHARDID_TMP/truncate.move" || fail "online, a TRUNCATE on the --from server: not found by the verification"
	expect "$(pon "$from" -c "SELECT shardid.shard_schema(5)")" = shard_0005 \
		"online, a TRUNCATE on the --from server: shard 5 registered on the --from server"
else
	expect "$status" = 0 "online into PostgreSQL 15, a TRUNCATE on the --from server: exit status"
	expect "$(pon "$to" -c "SELECT count(*) FROM shard_0005.dups")" = 0 "online into PostgreSQL 15, a TRUNCATE: carried"
	"$move" --shard 5 --from "$(conn "$from")" --to "$(conn "$to")" --drop-source --yes >/dev/null ||
		fail "online into PostgreSQL 15, a TRUNCATE: --drop-source"
	x=$from; from=$to; to=$x
fi

# online, a table of REPLICA IDENTITY FULL with a json column: the apply of
# an update finds the old row by '=' on every column, which json lacks;
# shardid-move before this release froze the shard and waited for the
# catch-up until --timeout, the apply failing at each retry ("could not
# identify an equality operator for type json")
pon "$from" >/dev/null <<'SQL' || fail "the shard of json rows"
CREATE SCHEMA ri_template;
CREATE TABLE ri_template.ids (id bigint PRIMARY KEY);
CREATE TABLE ri_template.ri (j json, v text);
SELECT count(*) FROM shardid.create_shards('ri_template', ARRAY[6]);
ALTER TABLE shard_0006.ri REPLICA IDENTITY FULL;
INSERT INTO shard_0006.ri VALUES ('{"a":1}', 'x');
SQL
rm -f "$marker"
SHARDID_MOVE_PAUSE_AT=hashed SHARDID_MOVE_PAUSE_FILE=$marker "$move" --shard 6 --from "$(conn "$from")" \
	--to "$(conn "$to")" --online --timeout 5 >"$SHARDID_TMP/ri.move" 2>&1 &
pid=$!
wait_until "the move of shard 6 paused or ended" paused_or_gone
[ -e "$marker" ] && pon "$from" -c "UPDATE shard_0006.ri SET v = 'y'" >/dev/null
move_go
status=$?
sed 's/^/  | /' "$SHARDID_TMP/ri.move"
expect "$status" = 1 "online, REPLICA IDENTITY FULL with a json column: exit status"
grep -qxF "shardid-move: error: --online cannot carry updates and deletes of tables of REPLICA IDENTITY FULL with a column whose type has no equality operator, by which the subscription's apply finds the old row: ri.j (json); give them a primary key or a replica identity index, or move the shard offline" "$SHARDID_TMP/ri.move" ||
	fail "online, REPLICA IDENTITY FULL with a json column: not refused"

# a composite type outside the schema, its attributes in another order on
# the --to server: the rows' text is the same, their values are not
for p in $from $to; do pon "$p" -c "ALTER DATABASE app RESET ALL; ALTER ROLE postgres RESET ALL; ALTER ROLE postgres IN DATABASE app RESET ALL" >/dev/null; done
pon "$from" -c "CREATE TYPE public.pair AS (a text, b text)" >/dev/null
pon "$to" -c "CREATE TYPE public.pair AS (b text, a text)" >/dev/null
pon "$from" >/dev/null <<'SQL' || fail "the shard of pairs"
CREATE SCHEMA pairs_template;
CREATE TABLE pairs_template.pairs (id bigint PRIMARY KEY, p public.pair);
SELECT count(*) FROM shardid.create_shards('pairs_template', ARRAY[7]);
INSERT INTO shard_0007.pairs (p) VALUES (ROW('1', '2')), (ROW('x', NULL));
SQL
"$move" --shard 7 --from "$(conn "$from")" --to "$(conn "$to")" >"$SHARDID_TMP/pairs.move" 2>&1
status=$?
sed 's/^/  | /' "$SHARDID_TMP/pairs.move"
expect "$status" = 1 "a composite type in another order on the --to server: exit status"
grep -qxF 'shardid-move: error: the composite types in the columns of table "shard_0007"."pairs" differ between the --from server and the --to server, whose text their values share: public.pair(a text, b text) on the --from server, public.pair(b text, a text) on the --to server; make them the same on both servers and move the shard again' "$SHARDID_TMP/pairs.move" ||
	fail "a composite type in another order on the --to server: not reported"
expect "$(pon "$to" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0007'")" = 0 \
	"a composite type in another order: the copy left on the --to server"
finish
