#!/usr/bin/env bash
# test/cluster/move.sh: logical shards across three servers, for real.
#
# Three PostgreSQL servers on loopback, each started here as the postgres OS
# user on its own port; 64 logical shards provisioned across them from one
# template (shard s on server s % 3); 8 concurrent writers routing each row
# by user_id % 64; shard 5 moved offline and shard 7 moved online with
# shardid-move while the writers keep writing.  Then every id is gathered
# from the server that holds its shard and checked: globally unique, each
# decodes to the shard of its schema, each writer's ids of a shard increase
# in the order it inserted them, no row lost and none made up.  Each move
# tells where its pause went, part by part (a detail line; the times are
# printed, not asserted).
# Also checks that shardid-move refuses a wrong shard, an unreachable
# server and an existing schema without changing anything.
cd "$(dirname "$0")/../.." || exit 1
SHARDID_TMP=""		# its own directory and servers, removed at exit
. test/lib.sh servers

move="$PG_BIN/shardid-move"
[ -x "$move" ] || move=src/move/shardid-move
base=$((SHARDID_PORT_BASE + 20))
ports="$base $((base + 1)) $((base + 2))"
chmod 777 "$SHARDID_TMP"

for i in 0 1 2; do
	cluster_init "s$i" $((base + i)) "shared_preload_libraries = 'shardid'" "wal_level = logical" \
		"max_wal_senders = 10" "max_replication_slots = 10" "shardid.epoch = '2026-01-01 00:00:00+00'" || exit 1
	cluster_start "s$i" || exit 1
done

# the template and the shards: shard s on server s % 3
i=0
for p in $ports; do
	"$PG_BIN/psql" -X -q -d "host=$SHARDID_TMP port=$p user=postgres dbname=postgres" -c "CREATE DATABASE app" || exit 1
	on "$p" >/dev/null <<SQL || exit 1
CREATE EXTENSION shardid;
CREATE SCHEMA app_template;
CREATE TABLE app_template.events (
    id      bigint PRIMARY KEY,
    user_id bigint NOT NULL,
    writer  int NOT NULL,
    n       int NOT NULL,
    UNIQUE (writer, n)
);
SELECT count(*) FROM shardid.create_shards('app_template', ARRAY(SELECT s FROM generate_series(0, 63) s WHERE s % 3 = $i));
SQL
	i=$((i + 1))
done
mkdir -p "$SHARDID_TMP/route"
for s in $(seq 0 63); do echo $((base + s % 3)) >"$SHARDID_TMP/route/$s"; done
for p in $ports; do echo "server $p: $(on "$p" -c "SELECT count(*) FROM shardid.shards") logical shards"; done
total=0
for p in $ports; do total=$((total + $(on "$p" -c "SELECT count(*) FROM shardid.shards"))); done
expect "$total" = 64 "logical shards provisioned"

# shardid-move refuses bad requests and changes nothing
refuse() {	# refuse WHAT EXPECTED-MESSAGE EXIT-STATUS ARGS...
	local what=$1 want=$2 code=$3 out status
	shift 3
	out=$("$move" "$@" 2>&1)
	status=$?
	[ $status = 0 ] && { fail "$what: shardid-move succeeded"; return; }
	echo "$what: $(echo "$out" | head -1)"
	echo "$out" | grep -q "$want" || fail "$what: wanted \"$want\", got: $out"
	expect "$status" = "$code" "$what: exit status"
}
p5=$((base + 2))
refuse "shard out of range" "out of range" 1 --shard 9000 --from "$(conn "$p5")" --to "$(conn "$base")"
refuse "shard not on the source" "does not live" 1 --shard 5 --from "$(conn "$base")" --to "$(conn "$p5")"
refuse "unreachable server" "cannot connect to the --to server" 1 --shard 5 --from "$(conn "$p5")" --to "$(conn 1)"
refuse "shard not a number" "must be a shard number" 2 --shard five --from "$(conn "$p5")" --to "$(conn "$base")"
refuse "no target" "are required" 2 --shard 5 --from "$(conn "$p5")"
refuse "option without its value" "needs a value" 2 --shard 5 --from "$(conn "$p5")" --to
refuse "unknown option" "unknown option" 2 --shard 5 --from "$(conn "$p5")" --to "$(conn "$base")" --fast
on "$base" -c "ALTER DATABASE app SET shardid.epoch = '1314220021721'"
refuse "different epochs" "shardid.epoch differs" 1 --shard 5 --from "$(conn "$p5")" --to "$(conn "$base")"
on "$base" -c "ALTER DATABASE app RESET shardid.epoch"
on "$base" -c "CREATE SCHEMA shard_0005"
refuse "schema exists on the target" "already exists" 1 --shard 5 --from "$(conn "$p5")" --to "$(conn "$base")"
on "$base" -c "DROP SCHEMA shard_0005"
expect "$(on "$p5" -c "SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_moving'")" = 0 "no freeze left behind by refused moves"
expect "$(on "$base" -c "SELECT count(*) FROM shardid.move_journal")" = 0 "no journal written by refused moves"

# 8 writers: user_id % 64 picks the shard, the route file its server
writer() {
	local w=$1 n=0 uid shard port id log="$SHARDID_TMP/writer.$1"
	RANDOM=$((w * 7919 + $$))
	: >"$log"
	while [ ! -e "$SHARDID_TMP/stop" ]; do
		n=$((n + 1))
		uid=$(( (RANDOM << 15 | RANDOM) ))
		# a quarter of the users live in the two shards that move
		[ $((RANDOM % 4)) = 0 ] && uid=$(( uid - uid % 64 + (RANDOM % 2 ? 5 : 7) ))
		shard=$((uid % 64))
		while :; do
			# a row still refused when the test stops was never written
			[ -e "$SHARDID_TMP/stop" ] && return
			read -r port <"$SHARDID_TMP/route/$shard"
			id=$("$PG_BIN/psql" -X -q -At -d "$(conn "$port")" -c \
				"INSERT INTO shard_$(printf %04d $shard).events (user_id, writer, n) VALUES ($uid, $w, $n) RETURNING id" 2>/dev/null) &&
				[ -n "$id" ] && break
			sleep 0.05		# frozen or moved: read the route again
		done
		echo "$w $n $shard $id" >>"$log"
	done
}
for w in 1 2 3 4 5 6 7 8; do writer "$w" & done
# rows_of SHARD: rows the writers have committed to SHARD so far
rows_of() { cat "$SHARDID_TMP"/writer.* 2>/dev/null | awk -v s="$1" '$3 == s' | wc -l; }
# writes SHARD N: wait until the writers have committed N more rows to SHARD
writes() {
	local want=$(($(rows_of "$1") + $2))
	wait_until "$2 more rows written to shard $1" eval '[ "$(rows_of '"$1"')" -ge '"$want"' ]'
}
writes 5 20
writes 7 20

# shard 5: offline, from server 2 to server 0, source dropped after verify
start=$(date +%s%3N)
if "$move" --shard 5 --from "$(conn "$p5")" --to "$(conn "$base")" --move-and-drop-source --yes >"$SHARDID_TMP/move5.log" 2>&1; then
	echo "$base" >"$SHARDID_TMP/route/5.new" && mv "$SHARDID_TMP/route/5.new" "$SHARDID_TMP/route/5"
else
	fail "offline move of shard 5 failed"
fi
sed 's/^/  | /' "$SHARDID_TMP/move5.log"
echo "offline move: $(( $(date +%s%3N) - start )) ms"
# where the pause went, part by part (the times are not asserted)
grep -Eq '^shardid-move: detail: copy [0-9]+\.[0-9]{2} s, verification [0-9]+\.[0-9]{2} s, clock [0-9]+\.[0-9]{2} s, cutover [0-9]+\.[0-9]{2} s\.$' \
	"$SHARDID_TMP/move5.log" || fail "the offline move did not tell the parts of its pause"
writes 5 20		# on its new server

# shard 7: online, from server 1 to server 2, writers keep writing
p7=$((base + 1))
start=$(date +%s%3N)
if "$move" --shard 7 --from "$(conn "$p7")" --to "$(conn "$p5")" --online >"$SHARDID_TMP/move7.log" 2>&1; then
	echo "$p5" >"$SHARDID_TMP/route/7.new" && mv "$SHARDID_TMP/route/7.new" "$SHARDID_TMP/route/7"
else
	fail "online move of shard 7 failed"
fi
sed 's/^/  | /' "$SHARDID_TMP/move7.log"
echo "online move: $(( $(date +%s%3N) - start )) ms"
grep -Eq '^shardid-move: detail: catch-up [0-9]+\.[0-9]{2} s, sequences and replication dropped [0-9]+\.[0-9]{2} s, verification [0-9]+\.[0-9]{2} s, clock [0-9]+\.[0-9]{2} s, cutover [0-9]+\.[0-9]{2} s\.$' \
	"$SHARDID_TMP/move7.log" || fail "the online move did not tell the parts of its pause"
writes 7 20		# on its new server
touch "$SHARDID_TMP/stop"
wait

# gather: every row from the server its shard is routed to
: >"$SHARDID_TMP/rows"
for s in $(seq 0 63); do
	read -r port <"$SHARDID_TMP/route/$s"
	schema=$(on "$port" -c "SELECT shardid.shard_schema($s)")
	expect "$schema" = "shard_$(printf %04d "$s")" "schema of shard $s on server $port"
	on "$port" -F' ' -c "SELECT $s, id, writer, n, shardid.id_shard(id) FROM $schema.events" >>"$SHARDID_TMP/rows"
done
cat "$SHARDID_TMP"/writer.* >"$SHARDID_TMP/written"
on "$base" >/dev/null <<SQL
CREATE TABLE rows (shard int, id bigint, writer int, n int, id_shard int);
CREATE TABLE written (writer int, n int, shard int, id bigint);
SQL
on "$base" -c "\\copy rows FROM '$SHARDID_TMP/rows' (DELIMITER ' ')"
on "$base" -c "\\copy written FROM '$SHARDID_TMP/written' (DELIMITER ' ')"
read -r rows distinct wrong_shard written lost made_up <<<"$(on "$base" -F' ' -c "
    SELECT (SELECT count(*) FROM rows), (SELECT count(DISTINCT id) FROM rows),
           (SELECT count(*) FROM rows WHERE id_shard <> shard),
           (SELECT count(*) FROM written),
           (SELECT count(*) FROM written w WHERE NOT EXISTS (SELECT FROM rows r WHERE r.id = w.id AND r.writer = w.writer AND r.n = w.n)),
           (SELECT count(*) FROM rows r WHERE NOT EXISTS (SELECT FROM written w WHERE r.id = w.id AND r.writer = w.writer AND r.n = w.n))")"
decreasing=$(on "$base" -c "SELECT count(*) FROM (SELECT id < lag(id) OVER (PARTITION BY writer, shard ORDER BY n) AS back FROM rows) x WHERE back")
moved5=$(on "$base" -c "SELECT count(*) FROM rows WHERE shard = 5")
moved7=$(on "$base" -c "SELECT count(*) FROM rows WHERE shard = 7")
echo "rows=$rows distinct_ids=$distinct wrong_shard=$wrong_shard written=$written lost=$lost made_up=$made_up ids_going_back=$decreasing shard5_rows=$moved5 shard7_rows=$moved7"
expect "$distinct" = "$rows" "globally unique ids"
expect "$wrong_shard" = 0 "ids that decode to another shard than their schema's"
expect "$rows" = "$written" "rows gathered = rows the writers committed"
expect "$lost" = 0 "rows lost"
expect "$made_up" = 0 "rows nobody wrote"
expect "$decreasing" = 0 "a writer's ids of a shard that go back"
# the sources: shard 5 dropped on server 2, shard 7 kept on server 1, frozen
expect "$(on "$p5" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "shard_0005 dropped on its old server"
on "$p7" -c "INSERT INTO shard_0007.events (user_id, writer, n) VALUES (7, 0, 0)" 2>"$SHARDID_TMP/frozen.err" &&
	fail "the old copy of shard 7 took a write"
echo "write to the old copy of shard 7: $(grep ERROR "$SHARDID_TMP/frozen.err")"
for p in $ports; do
	expect "$(on "$p" -c "SELECT (SELECT count(*) FROM pg_replication_slots) + (SELECT count(*) FROM pg_publication)
	                          + (SELECT count(*) FROM pg_subscription)")" = 0 "replication slots, publications, subscriptions left on server $p"
done
expect "$(on "$p7" -c "SELECT shardid.shard_schema(7)")" = "" "shard 7 unregistered on its old server"
finish
