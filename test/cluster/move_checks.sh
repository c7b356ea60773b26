#!/usr/bin/env bash
# test/cluster/move_checks.sh: the room a move needs on the target, the
# event triggers a --drop-source would fire, and what a router sees between
# the cutover and the source's last step.
#
# Two servers a and b; shard 5 on a; mallory, an ordinary role, owns a
# function that takes a number from mallory.hits (which no rollback returns)
# whenever it runs as a superuser.
#   1. room: the estimate (the shard's tables, indexes and sequences on a,
#      20% more, as much again for WAL up to b's max_wal_size) is in --json;
#      --to-free one byte below it refuses the move before anything changes;
#   2. the window: an offline move --drop-source paused right after b's
#      cut-over transaction: both registries name the shard, b takes writes,
#      a refuses them naming b, a's reads miss b's new rows, the journals say
#      handing-over and cut-over; an interruption there (exit 3) keeps it so
#      until --resume;
#   3. --drop-source: an event trigger created on a during that pause, calling
#      mallory's function, is found before the DROP (the preflight's check
#      was long past): the drop is refused, nothing of mallory's runs; so is
#      an event trigger of a role that is no superuser any more; disabled,
#      the drop goes through;
#   4. back to a with --to-free exactly the estimate: the move runs.
. "$(dirname "$0")/../lib.sh" cluster
marker="$SHARDID_TMP/paused"
pid=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; shardid_cleanup' EXIT

# shard5_paused FROM TO OPTION...: shard 5 moved in the background ($pid),
# pausing after its cutover; returns once it paused or ended (60 s at most)
shard5_paused() {
	local from=$1 to=$2 i
	shift 2
	rm -f "$marker"
	SHARDID_MOVE_PAUSE_AT=cutover SHARDID_MOVE_PAUSE_FILE=$marker \
		"$move" --shard 5 --from "$(conn "$from")" --to "$(conn "$to")" "$@" >"$SHARDID_TMP/move.log" 2>&1 &
	pid=$!
	for i in $(seq 1 1200); do
		[ -e "$marker" ] && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
}
# no autovacuum: the sizes the test reads stay those the move reads
move_servers 100 2 "autovacuum = off" || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" -c "CREATE FUNCTION mallory.audit() RETURNS event_trigger LANGUAGE plpgsql AS \$\$
BEGIN PERFORM mallory.strike(); END \$\$" || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA app_template;
CREATE TABLE app_template.events (id bigint PRIMARY KEY, n int NOT NULL, body text);
SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[5]);
CREATE INDEX ON shard_0005.events (n);
INSERT INTO shard_0005.events (n, body) SELECT g, repeat(md5(g::text), 40) FROM generate_series(1, 2000) g;
SQL
size_on() {	# size_on PORT: the shard's tables with TOAST and indexes, and sequences
	on "$1" -c "SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c
	            WHERE c.relnamespace = 'shard_0005'::regnamespace AND c.relkind IN ('r', 'm', 'S')"
}
fmt_bytes() {	# as shardid-move prints a size
	awk -v n="$1" 'BEGIN { split("bytes kB MB GB TB", u, " "); i = 1
		while (n >= 1024 && i < 5) { n /= 1024; i++ }
		if (i == 1) printf "%.0f %s", n, u[i]; else printf "%.1f %s", n, u[i] }'
}
needed() {	# needed SIZE TO_PORT: the estimate of the room on the target
	local w
	w=$(on "$2" -c "SELECT pg_size_bytes(current_setting('max_wal_size'))")
	echo $(($1 + $1 * 20 / 100 + ($1 < w ? $1 : w)))
}

# 1. room: the estimate, and a refusal one byte short of it
size=$(size_on "$a")
need=$(needed "$size" "$b")
echo "shard 5 on a: $size bytes; the estimate for b: $need bytes"
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --to-free=$((need - 1)) --json 2>"$SHARDID_TMP/err")
expect "$?" = 1 "room: exit status with --to-free one byte short"
sed 's/^/  | /' "$SHARDID_TMP/err"
for want in \
	"error: the --to server has $(fmt_bytes $((need - 1))) free (--to-free), but the copy of shard 5 needs about $(fmt_bytes "$need"): $(fmt_bytes "$size") of tables," \
	"indexes and sequences on the --from server, 20% more, and as much again for the WAL it writes (at most the --to server's max_wal_size, 4.0 GB)" \
	'error: shard 5 cannot move as it is (see above); nothing was changed'; do
	grep -qF -- "$want" "$SHARDID_TMP/err" || fail "room: wanted \"$want\""
done
echo "$out" | grep -qF "\"size_bytes\": $size, \"room_needed_bytes\": $need" || fail "room: --json: $out"
expect "$(on "$b" -c "SELECT count(*) FROM shardid.move_journal")" = 0 "room: journal rows on b"
expect "$(on "$a" -c "SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_moving'")" = 0 "room: freeze on a"

# 2. the window between b's cut-over and a's last step
shard5_paused "$a" "$b" --move-and-drop-source --yes
[ -e "$marker" ] || { cat "$SHARDID_TMP/move.log"; fail "the move did not pause after the cutover"; finish; }
grep -qF "shard 5 takes $(fmt_bytes "$size") on the --from server; the copy needs about" \
	"$SHARDID_TMP/move.log" || fail "the estimate is not in the report: $(cat "$SHARDID_TMP/move.log")"
grep -qF "on the --to server (not checked: give --to-free)" "$SHARDID_TMP/move.log" || fail "no word that the room is unchecked"
window() {	# window WHAT N: what a router sees between b's cut-over and a's last step
	expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "$1: a's registry"
	expect "$(on "$b" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "$1: b's registry"
	on "$b" -c "INSERT INTO shard_0005.events (n, body) VALUES ($2, '$1')" || fail "$1: b does not take a write"
	err=$(on "$a" -v VERBOSITY=verbose -c "INSERT INTO shard_0005.events (n, body) VALUES ($2, '$1')" 2>&1) &&
		fail "$1: a takes a write"
	for want in 'ERROR:  25006: shard 5 is being moved to another server' \
		"DETAIL:  Shard 5 moves to host=$SHARDID_TMP port=$b dbname=app."; do
		echo "$err" | grep -qF -- "$want" || fail "$1: a's refusal: wanted \"$want\": $err"
	done
	expect "$(on "$a" -c "SELECT count(*) FROM shard_0005.events WHERE n = $2")" = 0 "$1: b's new rows read on a"
	expect "$(on "$a" -c "SELECT phase FROM shardid.move_journal WHERE shard = 5 AND side = 'source'")" = handing-over \
		"$1: a's journal"
	expect "$(on "$b" -c "SELECT phase FROM shardid.move_journal WHERE shard = 5 AND side = 'target'")" = cut-over \
		"$1: b's journal"
}
window "paused after the cutover" -1
# meanwhile a superuser puts an event trigger on a, calling mallory's function
on "$a" -c "CREATE EVENT TRIGGER audit ON sql_drop EXECUTE FUNCTION mallory.audit()" || exit 1
mallory_mark "$a"

# 3. the move ends, and its --drop-source is refused
rm -f "$marker"
wait "$pid"
status=$?
pid=""
sed 's/^/  | /' "$SHARDID_TMP/move.log"
expect "$status" = 1 "move --drop-source with mallory's event trigger on a: exit status"
for want in 'shardid-move: shard 5 now lives on the --to server: route it there' \
	"error: event trigger audit calls function mallory.audit() of role mallory on the --from server, which the DROP SCHEMA of --drop-source would fire as a superuser" \
	'error: schema "shard_0005" was not dropped on the --from server'; do
	grep -qF -- "$want" "$SHARDID_TMP/move.log" || fail "drop with an event trigger: wanted \"$want\""
done
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = "" "a's registry after the move"
expect "$(on "$a" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 1 "a's copy kept"
no_superuser_code "her event trigger" "$a"
# alone, later: refused the same way
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes 2>&1)
expect "$?" = 1 "--drop-source with mallory's event trigger on a: exit status"
echo "$out" | grep -qF "error: event trigger audit calls function mallory.audit() of role mallory on the --from server" ||
	fail "--drop-source alone: no word of the event trigger: $out"
no_superuser_code "her event trigger (--drop-source alone)" "$a"
# an event trigger of a role that was a superuser when it took it over
on "$a" >/dev/null <<'SQL' || exit 1
ALTER EVENT TRIGGER audit DISABLE;
CREATE FUNCTION public.note() RETURNS event_trigger LANGUAGE plpgsql AS $$ BEGIN END $$;
CREATE EVENT TRIGGER note ON ddl_command_start EXECUTE FUNCTION public.note();
CREATE ROLE eve SUPERUSER;
ALTER EVENT TRIGGER note OWNER TO eve;
ALTER ROLE eve NOSUPERUSER;
SQL
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes 2>&1)
expect "$?" = 1 "--drop-source with an event trigger of eve: exit status"
echo "$out" | sed 's/^/  | /'
echo "$out" | grep -qF "error: event trigger note belongs to role eve, which is no superuser, and calls function public.note() on the --from server, which the DROP SCHEMA of --drop-source would fire as a superuser" ||
	fail "--drop-source: no word of eve's event trigger"
echo "$out" | grep -q audit && fail "--drop-source names a disabled event trigger"
on "$a" -c "ALTER EVENT TRIGGER note DISABLE" || exit 1
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes || fail "--drop-source with the event triggers disabled"
expect "$(on "$a" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "a's copy dropped"
no_superuser_code "her event trigger (drop)" "$a"

# 2b. the window lasts while a's last step waits: interrupted there, until --resume
size=$(size_on "$b")
need=$(needed "$size" "$a")
shard5_paused "$b" "$a" --to-free="$need"
# 4. --to-free exactly the estimate: accepted
grep -qF "on the --to server, which has $(fmt_bytes "$need") free (--to-free)" \
	"$SHARDID_TMP/move.log" || fail "--to-free = the estimate: $(cat "$SHARDID_TMP/move.log")"
kill -TERM "$pid"
wait "$pid"
expect "$?" = 3 "interrupted after the cutover: exit status"
pid=""
# the roles are swapped: b is the source now
t=$a; a=$b; b=$t
window "after an exit 3" -2
t=$a; a=$b; b=$t
"$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --resume >/dev/null || fail "--resume"
expect "$(on "$b" -c "SELECT shardid.shard_schema(5)")" = "" "b's registry after --resume"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "a's registry after --resume"
expect "$(on "$a" -c "SELECT count(*) FROM shard_0005.events WHERE n = -2")" = 1 "rows written on a in the window, there after --resume"
err=$(on "$b" -c "INSERT INTO shard_0005.events (n, body) VALUES (-3, 'after')" 2>&1) && fail "b takes a write after --resume"
echo "$err" | grep -qF "ERROR:  shard 5 has moved to another server" || fail "b's refusal after --resume: $err"
finish
