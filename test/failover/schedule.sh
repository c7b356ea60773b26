#!/usr/bin/env bash
# A randomized, seeded fault schedule.  A primary and a streaming standby,
# and a third server c.  Shard 3's schema s3 holds s3.t and s3.u (the two
# DEFAULT forms) and, chosen from the seed for the run, tables of the
# shapes the floor step must read (each DEFAULT form from the seed too):
# s3.ranged, RANGE-partitioned on id, whose partition that takes the rows
# was created alone and then ATTACH PARTITION'ed; s3.dom, its id column of
# a domain over bigint; s3.given, filled with explicit ids from
# shardid.next_ids(3, n), no DEFAULT, PRIMARY KEY; s3.nonunique, no key, a
# non-unique plain btree index on id.  A role, intruder, may only INSERT
# into one table of s3 (from the seed).  Each round picks, from the seed:
#   - whether shard 3 moves first: between the pair's primary and c, either
#     way, as a restore would move it.  At the source a burst borrows its
#     ids ahead, 2,000 rows go into each table of s3 (in an order from the
#     seed), the newest 1,500 ids of one table are deleted (or none; the
#     table from the seed), and intruder stores either an id of shard 3
#     thirty days ahead or 1,000 ids of another shard (4 or 6) above shard
#     3's newest; then pg_dump -n s3, the schema dropped at the source,
#     restored and registered (register_shard(), which raises the floor) at
#     the target, whose clock is behind or ahead (libfaketime); a session
#     at the target may have stamped shard 3 before the data arrived and
#     again before it was registered, and goes on after.  Inserts into every
#     table of s3 and next_id() calls at the target must give ids after the
#     newest restored legitimate id of shard 3 in every table (intruder's far
#     ids and other shards' ids left out), none equal to a restored id, with
#     no duplicate; the shard's floor must be that newest id, the far ids
#     must not be followed (new ids stay within the target's lead limit, 60 s
#     during the move, and H's 1.25 s of its clock) and the registration must
#     warn about them;
#   - asynchronous or synchronous replication, the synchronous_commit of
#     each client session, whether the standby lags (SIGSTOP of its
#     walreceiver), clock offsets of both servers (libfaketime, at each
#     start), and the fault: a crash (-m immediate) or a fast stop of the
#     primary, then either a restart of the same server or the promotion of
#     the standby.
# Every id returned to a client is recorded (ids.log), with whether its
# commit was acknowledged (INSERT ... RETURNING) or it was only handed out
# (SELECT next_id()), and the session's synchronous_commit.  After the
# fault the new primary makes 2M ids of each shard it holds, and the
# invariants of the README ("Failover and restarts") are checked:
#   - no id in the new primary's tables repeats, and every id it makes is
#     greater than every id stored there (replicated or recovered), but
#     intruder's ids thirty days ahead;
#   - a restart of the same server repeats no id handed out before;
#   - a promoted synchronous standby repeats no id handed out before to a
#     session whose synchronous_commit is on, remote_write or remote_apply.
# Then the other server becomes a standby of the new primary again: after a
# promotion, by pg_rewind of the old primary or by pg_basebackup (from the
# seed), after a restart by pg_basebackup; a rewound standby must catch up
# and hold the new primary's rows.  The next round goes on with that pair.
# Schemas s1 and s2 are registered for their shards or not (from the seed):
# registered, their registration raised the shards' floors and H; not, only
# the high-water mark H keeps their ids above the stored ones.  No server
# reads stored ids when it starts, is promoted or makes an id (1.2 read them
# lazily, at a backend's first id of a shard): the reader (stored.c) runs
# only in the floor step, at a registration or shardid.raise_floor().
#
#   SCHEDULE_SEED=n   the seed (default: random; printed)
#   SCHEDULE_ROUNDS=n rounds (default 3; `make soak` sets more)
. "$(dirname "$0")/../lib.sh" failover

seed=${SCHEDULE_SEED:-$((RANDOM * 32768 + RANDOM))}
rounds=${SCHEDULE_ROUNDS:-3}
RANDOM=$seed
echo "schedule seed $seed, $rounds rounds (SCHEDULE_SEED=$seed to repeat)"
# pick VAR CHOICE...: VAR = one of the choices (no subshell: bash reseeds
# RANDOM in subshells, which would make the schedule unrepeatable)
pick() {
	local a=("${@:2}")
	printf -v "$1" '%s' "${a[RANDOM % ${#a[@]}]}"
}

port_a=$((SHARDID_PORT_BASE + 80))
port_b=$((port_a + 1))
port_c=$((port_a + 2))
# pg_rewind needs wal_log_hints (or data checksums), and the old primary's
# WAL back to the last checkpoint before the servers diverged (kept)
conf=("shardid.max_lead_ms = 3000" "wal_sender_timeout = 5s" "wal_log_hints = on" "wal_keep_size = 1GB")
app_server a $port_a "${conf[@]}" || exit 1
app_server c $port_c "${conf[@]}" || exit 1
q_at $port_c -c "CREATE EXTENSION shardid" -c "CREATE ROLE intruder LOGIN" >/dev/null
q_at $port_a -c "CREATE EXTENSION shardid" -c "CREATE ROLE intruder LOGIN" >/dev/null
pick registered yes no
# The shapes of table in s3 besides s3.t and s3.u, each from the seed (at
# least one), and the DEFAULT of each: next_id(3) or next_id(3, nextval())
#   ranged     RANGE-partitioned on id; the partition that takes the rows
#              (ranged_new) is created alone, then ATTACH PARTITION'ed
#   dom        the id column of a domain over bigint
#   given      ids from shardid.next_ids(3, n), no DEFAULT, PRIMARY KEY
#   nonunique  no key: a non-unique plain btree index on id
s3_tables=(t u)
for shape in ranged dom given nonunique; do
	pick with yes yes no
	[ "$with" = yes ] && s3_tables+=("$shape")
done
if [ ${#s3_tables[@]} = 2 ]; then
	pick shape ranged dom given nonunique
	s3_tables+=("$shape")
fi
cut=$(q_at $port_a -c "SELECT shardid.min_id(now() - interval '1 day')")
shapes_sql=""
for shape in "${s3_tables[@]:2}"; do
	pick def "shardid.next_id(3)" "shardid.next_id(3, nextval('s3.shapes_seq'))"
	case $shape in
	ranged) shapes_sql+="CREATE TABLE s3.ranged (id bigint NOT NULL DEFAULT $def, phase int, PRIMARY KEY (id)) PARTITION BY RANGE (id);
CREATE TABLE s3.ranged_old PARTITION OF s3.ranged FOR VALUES FROM (MINVALUE) TO ($cut);
CREATE TABLE s3.ranged_new (id bigint NOT NULL, phase int, PRIMARY KEY (id));
ALTER TABLE s3.ranged ATTACH PARTITION s3.ranged_new FOR VALUES FROM ($cut) TO (MAXVALUE);
" ;;
	dom) shapes_sql+="CREATE DOMAIN s3.big AS bigint;
CREATE TABLE s3.dom (id s3.big PRIMARY KEY DEFAULT $def, phase int);
" ;;
	given) def="-"
		shapes_sql+="CREATE TABLE s3.given (id bigint PRIMARY KEY, phase int);
" ;;
	nonunique) shapes_sql+="CREATE TABLE s3.nonunique (id bigint DEFAULT $def, phase int);
CREATE INDEX ON s3.nonunique (id);
" ;;
	esac
	echo "s3.$shape: DEFAULT $def"
done
# the hostile writer: intruder may INSERT into one table of s3, nothing more
pick hostile_table "${s3_tables[@]}"
echo "tables of s3: ${s3_tables[*]}; intruder may INSERT into s3.$hostile_table"
q_at $port_a <<SQL >/dev/null
CREATE SCHEMA s1;
CREATE TABLE s1.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(1), phase int);
CREATE SCHEMA s2;
CREATE SEQUENCE s2.t_id_seq;
CREATE TABLE s2.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(2, nextval('s2.t_id_seq')), phase int);
CREATE SCHEMA s3;
CREATE SEQUENCE s3.t_id_seq;
CREATE TABLE s3.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(3, nextval('s3.t_id_seq')), phase int);
CREATE TABLE s3.u (id bigint PRIMARY KEY DEFAULT shardid.next_id(3), phase int);
CREATE SEQUENCE s3.shapes_seq;
$shapes_sql
GRANT USAGE ON SCHEMA s3 TO intruder;
GRANT INSERT ON s3.$hostile_table TO intruder;
SELECT shardid.register_shard(3, 's3');
$([ "$registered" = yes ] && echo "SELECT shardid.register_shard(1, 's1'), shardid.register_shard(2, 's2');")
SQL
echo "schemas s1 and s2 registered: $registered"
primary=a
standby=b
holder=pair			# where shard 3 lives: the pair's primary or c
declare -A port=([a]=$port_a [b]=$port_b [c]=$port_c)
declare -A clock=([a]=0 [b]=0 [c]=0)	# each server's clock offset (s)
: >"$SHARDID_TMP/promised_sync"	# ids handed to on/remote_* sessions under sync replication
: >"$SHARDID_TMP/handed"		# every id handed out by the current primary
: >"$SHARDID_TMP/ids.log"		# every id returned to a client: id, what, round
far_list=""	# the ids of shard 3 thirty days ahead that intruder stored
far_ids="{}"	# the same, an array

# start NAME OFFSET_S: start NAME with its clock OFFSET_S seconds off
start() {
	clock[$1]=$2
	# shellcheck disable=SC2046
	cluster_start "$1" $(faketime_env "$(printf '%+ds' "$2")") && ready "${port[$1]}"
}
# make_standby NAME OFFSET_S: NAME becomes a fresh standby of the primary
make_standby() {
	clock[$1]=$2
	standby_of "$1" "${port[$1]}" "${port[$primary]}" "$(printf '%+ds' "$2")"
}
walreceiver_pid() {
	ps -o pid=,args= -u postgres | awk '/walreceiver/ {print $1}' | while read -r p; do
		[ "$(readlink "/proc/$p/cwd")" = "$SHARDID_TMP/$standby" ] && echo "$p"
	done
}
# shard_tables PORT: the tables of the shards the server on PORT holds, as
# a SELECT of their ids, but for intruder's ids of shard 3 far ahead (no
# server follows them)
shard_tables() {
	q_at "$1" -c "SELECT string_agg(format('SELECT id FROM %I.%I WHERE id <> ALL (%L::bigint[])',
	                                      n.nspname, c.relname, '$far_ids'), ' UNION ALL ')
	              FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
	              WHERE n.nspname IN ('s1', 's2', 's3') AND c.relkind = 'r'"
}
# s3_rows: a SELECT of id and phase of every row of the tables of s3
s3_rows() {
	local t sep=""
	for t in "${s3_tables[@]}"; do
		printf '%sSELECT id, phase FROM s3.%s' "$sep" "$t"
		sep=" UNION ALL "
	done
}
# fill_sql TABLE PHASE N: N rows into s3.TABLE (next_ids() for s3.given),
# returning their ids
fill_sql() {
	if [ "$1" = given ]; then
		echo "INSERT INTO s3.given (id, phase) SELECT id, $2 FROM shardid.next_ids(3, $3) id RETURNING id"
	else
		echo "INSERT INTO s3.$1 (phase) SELECT $2 FROM generate_series(1, $3) RETURNING id"
	fi
}

# move_shard: shard 3 moves between the pair's primary and c, as a restore
# moves it.  The source borrows ahead and writes rows into every table of
# s3, may delete one table's newest rows, and intruder stores its ids; the
# schema is dumped and dropped; the target restores and registers it, which
# raises the shard's floor to the newest id its reader finds within the
# bound (stored.c: every shape, dead rows, far ids and other shards' ids
# skipped).  c is restarted with
# its clock off: as the target, behind or ahead of the source; as the
# source, at or behind the primary's clock.  The target allows a lead of
# 60 s while the shard arrives, so that it follows the restored ids (a
# stored id is followed up to shardid.max_lead_ms ahead of the clock, and
# c's ids may run ahead of its clock by what it followed in an earlier
# move); the primary goes back to 3 s after.  A session at the target
# stamps shard 3 before the data arrives and again before it is registered,
# or not.
move_shard() {
	local src dst stamped off restored restore ahead order i j t deleted hostile far other values out newlead floor warned
	if [ $holder = pair ]; then
		src=$primary dst=c
		pick off -10 -3 0 2
		cluster_conf c "shardid.max_lead_ms = 60000"
	else
		src=c dst=$primary
		pick off -3 0 -10
		off=$((clock[$primary] + off))
		cluster_conf c "shardid.max_lead_ms = 3000"
		q_at "${port[$dst]}" -c "ALTER SYSTEM SET shardid.max_lead_ms = 60000" >/dev/null
		reload_conf -p "${port[$dst]}" -d app || return 1
	fi
	pick stamped yes no
	cluster_stop c fast
	start c "$off" || { fail "round $round: c did not start"; return 1; }
	echo "--- round $round: shard 3 moves from $src (clock ${clock[$src]} s) to $dst (clock ${clock[$dst]} s); a session at the target stamped before the restore and the registration: $stamped"
	borrow_ahead 3 1000 -p "${port[$src]}" -d app || return 1
	# 2,000 rows into each table of s3, in an order from the seed
	order=("${s3_tables[@]}")
	for ((i = ${#order[@]} - 1; i > 0; i--)); do
		j=$((RANDOM % (i + 1)))
		t=${order[i]} order[i]=${order[j]} order[j]=$t
	done
	for t in "${order[@]}"; do
		q_at "${port[$src]}" -c "$(fill_sql "$t" "$round" 2000)" |
			sed "s/\$/ move-source-acked $round/" >>"$SHARDID_TMP/ids.log"
	done
	# the newest 1,500 ids of shard 3 of one table deleted, or none
	pick deleted none "${s3_tables[@]}"
	if [ "$deleted" != none ]; then
		q_at "${port[$src]}" -c "DELETE FROM s3.$deleted WHERE id IN (
		    SELECT id FROM s3.$deleted WHERE shardid.id_shard(id) = 3 AND id <> ALL ('$far_ids'::bigint[])
		    ORDER BY id DESC LIMIT 1500)" >/dev/null || { fail "round $round: deleting from s3.$deleted"; return 1; }
	fi
	# the newest legitimate id of shard 3 in every table of s3
	restored=$(q_at "${port[$src]}" -c "SELECT max(id) FROM ($(s3_rows)) x
	    WHERE shardid.id_shard(id) = 3 AND id <> ALL ('$far_ids'::bigint[])")
	# intruder stores an id of shard 3 thirty days ahead, or 1,000 ids of
	# another shard, one a millisecond, above shard 3's newest
	pick hostile far others
	if [ "$hostile" = far ]; then
		far=$(q_at "${port[$src]}" -c "SELECT shardid.make_id((extract(epoch FROM clock_timestamp() + interval '30 days') * 1000)::bigint
		                                                     - (SELECT epoch_ms FROM shardid.info()), 3, 0)")
		far_list="${far_list:+$far_list,}$far"
		far_ids="{$far_list}"
		values="($far, 0)"
	else
		pick other 4 6
		# the sequence field is the round's: no id repeats in a later round
		values=$(q_at "${port[$src]}" -c "SELECT string_agg(format('(%s, 0)', shardid.make_id(shardid.id_millis($restored) + g, $other, $round % 1024)), ', ')
		                                   FROM generate_series(1, 1000) g")
	fi
	out=$(q_at "${port[$src]}" -U intruder -c "INSERT INTO s3.$hostile_table (id, phase) VALUES $values" 2>&1)
	expect "$out" = "" "round $round: intruder's INSERT into s3.$hostile_table"
	echo "round $round: at $src, the newest 1,500 ids of shard 3 deleted from: $deleted; intruder stored in s3.$hostile_table: $([ "$hostile" = far ] && echo "id $far of shard 3, 30 days ahead" || echo "1,000 ids of shard $other above shard 3's newest")"
	"$PG_BIN/pg_dump" -h "$SHARDID_TMP" -p "${port[$src]}" -U postgres -d app -n s3 >"$SHARDID_TMP/s3.sql" ||
		{ fail "round $round: pg_dump -n s3"; return 1; }
	q_at "${port[$src]}" -c "SET client_min_messages = warning" -c "SELECT shardid.unregister_shard(3)" \
		-c "DROP SCHEMA s3 CASCADE" >/dev/null ||
		{ fail "round $round: dropping s3 at the source"; return 1; }
	restore="\\! PGPORT=${port[$dst]} PGDATABASE=app \"$PG_BIN/psql\" -X -q -v ON_ERROR_STOP=1 -f \"$SHARDID_TMP/s3.sql\" >\"$SHARDID_TMP/restore.log\" 2>&1 || echo restore failed
\\! PGPORT=${port[$dst]} PGDATABASE=app \"$PG_BIN/psql\" -X -q -At -c \"SELECT shardid.register_shard(3, 's3')\" >/dev/null || echo register failed"
	{
		if [ "$stamped" = yes ]; then
			# before the data arrives, and after it arrived but before its
			# schema is registered: neither time is the shard's yet
			echo "SELECT shardid.next_id(3) || ' before';"
			echo "${restore%%$'\n'*}"
			echo "SELECT shardid.next_id(3) || ' before';"
			echo "${restore#*$'\n'}"
		else
			echo "$restore"
			echo "\\connect"
		fi
		for t in "${s3_tables[@]}"; do
			echo "$(fill_sql "$t" "-$round" 2000) || ' acked';"
		done
		echo "SELECT shardid.next_id(3) || ' handed' FROM generate_series(1, 20000);"
	} >"$SHARDID_TMP/target.sql"
	q_at "${port[$dst]}" -f "$SHARDID_TMP/target.sql" >"$SHARDID_TMP/target.out" 2>&1
	ahead=$(lead_of "${port[$dst]}" "$restored")
	grep -v -E '^[0-9]+ (before|acked|handed)$' "$SHARDID_TMP/target.out" | head -5
	grep -E '^[0-9]+ (before|acked|handed)$' "$SHARDID_TMP/target.out" |
		sed "s/ \(.*\)/ move-target-\1 $round/" >>"$SHARDID_TMP/ids.log"
	awk '$2 != "before" {print $1}' "$SHARDID_TMP/target.out" | grep -E '^[0-9]+$' >"$SHARDID_TMP/target.ids"
	q_at "${port[$dst]}" <<SQL >"$SHARDID_TMP/move.check" 2>&1 || fail "round $round: ids at the target: $(cat "$SHARDID_TMP/move.check")"
CREATE TEMP TABLE made (id bigint);
\copy made FROM '$SHARDID_TMP/target.ids'
SELECT 'made', count(*) FROM made;
SELECT 'below', count(*) FROM made WHERE id <= $restored;
SELECT 'duplicates', $(for t in "${s3_tables[@]}"; do printf '(SELECT count(*) - count(DISTINCT id) FROM s3.%s) + ' "$t"; done)
    (SELECT count(*) - count(DISTINCT id) FROM made);
SELECT 'stored', count(*) FROM made JOIN (SELECT id FROM ($(s3_rows)) r WHERE phase <> -$round) s USING (id);
SELECT 'lead', round(extract(epoch FROM shardid.id_time(max(id)) - clock_timestamp()) * 1000) FROM made;
SELECT 'floor', coalesce((SELECT floor_id::text FROM shardid.shard_registry WHERE shard = 3), 'none');
SQL
	read -r made below dups stored newlead floor <<<"$(awk -F'|' '{printf "%s ", $2}' "$SHARDID_TMP/move.check")"
	echo "round $round: shard 3 restored at $dst (newest restored id $restored, $ahead ms ahead of its clock after the inserts): $made new ids, $below not after the newest restored id, $dups duplicates, $stored equal to a restored id, the newest $newlead ms ahead of its clock; floor $floor"
	expect "$made $below $dups $stored" = "$((2000 * ${#s3_tables[@]} + 20000)) 0 0 0" "round $round: shard 3 moved to $dst (seed $seed)"
	# the registration read the newest legitimate id of every shape, past
	# the far ids and past other shards' ids above it
	expect "$floor" = "$restored" "round $round: the floor of shard 3 at $dst is the newest restored legitimate id (seed $seed)"
	# the far ids are not followed: the target's ids stay within its lead
	# limit (60 s) and H's window (1.25 s) of its clock
	expect_le "${newlead:-x}" 61250 "round $round: ms the newest id made at $dst is ahead of its clock (seed $seed)"
	# and the registration says so
	warned=$(grep -c "^WARNING:  table s3\.[a-z_]* holds an id of shard 3 that is [0-9]* ms ahead of this server's clock$" "$SHARDID_TMP/target.out")
	expect "$warned" = "$([ "$far_list" ] && echo 1 || echo 0)" "round $round: WARNINGs of the registration at $dst about intruder's far ids (seed $seed)"
	if [ "$dst" = c ]; then
		holder=c
	else
		holder=pair
		q_at "${port[$dst]}" -c "ALTER SYSTEM RESET shardid.max_lead_ms" >/dev/null
		reload_conf -p "${port[$dst]}" -d app || return 1
	fi
}
# lead_of PORT ID: how far ahead of the server's clock ID is (ms)
lead_of() {
	q_at "$1" -c "SELECT round(extract(epoch FROM shardid.id_time($2) - clock_timestamp()) * 1000)"
}

pick off 0 -3
make_standby b "$off" || { fail "first standby"; finish; }

for round in $(seq "$rounds"); do
	pick move no no yes
	if [ "$move" = yes ]; then
		move_shard || { fail "round $round: the move of shard 3 did not finish"; break; }
		[ "$script_failed" = 1 ] && { echo "FAILED at round $round: SCHEDULE_SEED=$seed"; break; }
	fi
	pick repl async sync
	pick lag no no yes
	pick fault immediate fast
	pick after promote promote restart
	pick offset 0 -3 -10 2
	echo "--- round $round: $repl replication, standby lags: $lag, primary $primary stops $fault, then $after (clock $offset s)"
	if [ "$repl" = sync ]; then
		q_at "${port[$primary]}" -c "ALTER SYSTEM SET synchronous_standby_names = '*'" >/dev/null
	else
		q_at "${port[$primary]}" -c "ALTER SYSTEM SET synchronous_standby_names = ''" >/dev/null
	fi
	reload_conf -p "${port[$primary]}" -d app || return 1
	wr=""
	if [ "$lag" = yes ]; then
		wr=$(walreceiver_pid)
		[ -n "$wr" ] && kill -STOP "$wr"
	fi
	# three client sessions, each with its own synchronous_commit
	pids=""
	for c in 1 2 3; do
		pick level off local on remote_write remote_apply
		pick shard 1 2
		pick n 1000 50000 400000
		(
			PGOPTIONS="-c synchronous_commit=$level -c statement_timeout=8s" q_at "${port[$primary]}" \
				-c "INSERT INTO s$shard.t (phase) SELECT $round FROM generate_series(1, 2000) RETURNING id" 2>/dev/null |
				sed "s/\$/ $level acked/"
			PGOPTIONS="-c synchronous_commit=$level -c statement_timeout=8s" q_at "${port[$primary]}" \
				-c "SELECT shardid.next_id($shard) FROM generate_series(1, $n)" 2>/dev/null |
				sed "s/\$/ $level handed/"
		) >"$SHARDID_TMP/client$c" &
		pids="$pids $!"
	done
	# Every client's statements have an 8 s statement_timeout, and no wait
	# of shardid's may outlast it.  A COMMIT waiting for the synchronous
	# standby is PostgreSQL's own wait, which statement_timeout does not
	# cover (it is disabled before the commit): after 15 s, no session may
	# be waiting in shardid (wait event type Extension, ShardidHighWater on
	# 17+), and the others are cancelled, which ends a commit's wait with a
	# warning.  The ids such a commit got were below a confirmed H anyway.
	clients_alive() {
		alive=0
		for p in $pids; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive = 1 ]
	}
	for i in $(seq 150); do
		clients_alive || break
		sleep 0.1
	done
	if clients_alive; then
		stuck=$(q_at "${port[$primary]}" -c "SELECT count(*) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND wait_event_type = 'Extension'
			  AND now() - query_start > interval '10 s'")
		[ "$stuck" = 0 ] || fail "round $round: $stuck sessions wait in shardid past their statement_timeout of 8 s"
		q_at "${port[$primary]}" -c "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity
			WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()" >/dev/null
		for i in $(seq 600); do
			clients_alive || break
			sleep 0.1
		done
	fi
	clients_alive && fail "round $round: clients still wait 60 s after they were cancelled"
	[ -n "$wr" ] && [ $alive = 1 ] && kill -CONT "$wr" 2>/dev/null
	# shellcheck disable=SC2086
	wait $pids
	cat "$SHARDID_TMP"/client[123] >>"$SHARDID_TMP/handed"
	sed "s/\$/ $round/" "$SHARDID_TMP"/client[123] >>"$SHARDID_TMP/ids.log"
	if [ "$repl" = sync ]; then
		awk '$2 ~ /^(on|remote_write|remote_apply)$/ {print $1}' "$SHARDID_TMP"/client[123] >>"$SHARDID_TMP/promised_sync"
	fi
	echo "clients got $(cat "$SHARDID_TMP"/client[123] | wc -l) ids ($(cat "$SHARDID_TMP"/client[123] | awk '{print $2}' | sort | uniq -c | tr '\n' ' '))"
	cluster_stop "$primary" "$fault"
	[ -n "$wr" ] && kill -CONT "$wr" 2>/dev/null

	if [ "$after" = restart ]; then
		start "$primary" "$offset" || { fail "round $round: restart"; break; }
		awk '{print $1}' "$SHARDID_TMP/handed" >"$SHARDID_TMP/promised"
		new=$primary
	else
		cluster_stop "$standby" fast
		start "$standby" "$offset" || { fail "round $round: standby start"; break; }
		as_pg "$PG_BIN/pg_ctl" -D "$SHARDID_TMP/$standby" -w promote >/dev/null || { fail "round $round: promotion"; break; }
		cp "$SHARDID_TMP/promised_sync" "$SHARDID_TMP/promised"
		new=$standby
		standby=$primary
		primary=$new
	fi
	ready "${port[$new]}"
	q_at "${port[$new]}" -c "ALTER SYSTEM SET synchronous_standby_names = ''" -c "SELECT pg_reload_conf()" >/dev/null
	# the shards the new primary holds: 1 and 2, and 3 unless it lives on c
	shards="1 2"
	[ $holder = pair ] && shards="1 2 3"
	stored=$(shard_tables "${port[$new]}")
	q_at "${port[$new]}" <<SQL >"$SHARDID_TMP/check" 2>&1 || fail "round $round: ids on the new primary: $(cat "$SHARDID_TMP/check")"
CREATE TEMP TABLE promised (id bigint);
\copy promised FROM '$SHARDID_TMP/promised'
CREATE TEMP TABLE stored AS
    SELECT shardid.id_shard(id) AS shard, max(id) AS newest, count(*) - count(DISTINCT id) AS duplicates
    FROM ($stored) x GROUP BY 1;
CREATE TEMP TABLE made AS
    SELECT shardid.next_id(s) AS id FROM unnest('{${shards// /,}}'::int[]) s, generate_series(1, 2000000);
INSERT INTO s1.t (phase) SELECT -$round FROM generate_series(1, 1000);
INSERT INTO s2.t (phase) SELECT -$round FROM generate_series(1, 1000);
SELECT 'repeats', count(*) FROM made JOIN promised USING (id);
SELECT 'below', count(*) FROM made JOIN stored ON shardid.id_shard(made.id) = stored.shard
WHERE made.id <= stored.newest;
SELECT 'duplicates', (SELECT coalesce(sum(duplicates), 0) FROM stored)
    + (SELECT count(*) - count(DISTINCT id) FROM s1.t) + (SELECT count(*) - count(DISTINCT id) FROM s2.t);
SQL
	repeats=$(awk -F'|' '$1 == "repeats" {print $2}' "$SHARDID_TMP/check")
	below=$(awk -F'|' '$1 == "below" {print $2}' "$SHARDID_TMP/check")
	dups=$(awk -F'|' '$1 == "duplicates" {print $2}' "$SHARDID_TMP/check")
	echo "round $round on $new (shards $shards): promised ids repeated: $repeats, new ids below a stored one: $below, duplicate ids in tables: $dups"
	expect "$repeats $below $dups" = "0 0 0" "round $round (seed $seed)"
	[ "$script_failed" = 1 ] && { echo "FAILED at round $round: SCHEDULE_SEED=$seed"; break; }
	: >"$SHARDID_TMP/handed"
	: >"$SHARDID_TMP/promised_sync"
	q_at "${port[$primary]}" -c "ALTER SYSTEM SET synchronous_standby_names = ''" -c "SELECT pg_reload_conf()" >/dev/null
	cluster_stop "$standby" immediate 2>/dev/null
	pick off 0 -3 2
	rejoin=basebackup
	[ "$after" = promote ] && pick rejoin rewind basebackup
	echo "round $round: $standby becomes a standby of $primary again by $rejoin (clock $off s)"
	if [ "$rejoin" = rewind ]; then
		clock[$standby]=$off
		rewind_to "$standby" "${port[$standby]}" "${port[$primary]}" "$(printf '%+ds' "$off")" || break
		# the rewound standby holds the new primary's rows, no more
		caught_up "${port[$standby]}" "${port[$primary]}" || break
		rows="SELECT count(*), max(id) FROM ($(shard_tables "${port[$primary]}")) x"
		expect "$(q_at "${port[$standby]}" -c "$rows")" = "$(q_at "${port[$primary]}" -c "$rows")" \
			"round $round: rows of the rewound standby and of the primary (seed $seed)"
	else
		make_standby "$standby" "$off" || { fail "round $round: new standby"; break; }
	fi
	[ "$script_failed" = 1 ] && { echo "FAILED at round $round: SCHEDULE_SEED=$seed"; break; }
done
echo "ids returned to clients: $(wc -l <"$SHARDID_TMP/ids.log") ($(awk '{print $(NF-1)}' "$SHARDID_TMP/ids.log" | sort | uniq -c | tr '\n' ' '))"
cluster_stop "$primary" 2>/dev/null
cluster_stop "$standby" 2>/dev/null
cluster_stop c 2>/dev/null
finish
