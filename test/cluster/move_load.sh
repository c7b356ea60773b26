#!/usr/bin/env bash
# test/cluster/move_load.sh: shardid-move under write load.
#
# Two servers; shard 5 on the first.  First an application transaction
# that writes two tables while the freeze waits for it (the deadlock of
# 1.1, made on purpose).  Then six writers insert batches of 100
# rows of 4.8 kB of random (incompressible) bytes into shard 5, each
# writer resting 0.25 s after a batch (the target's one apply worker must
# outpace them on a loaded 2-core machine, or the online move rightly gives
# up before its freeze: CI saw that without the rest), routing by a file, and one more application transaction
# writes two tables of the shard 1.5 s apart (in both orders) again and
# again.  Shard 5 moves offline to the second server, then online back,
# with the writers running.  Checks:
#   - no application transaction ever gets a deadlock (40P01) or any error
#     but the documented refusal (shard being moved / moved away);
#   - every row a writer committed is on the server the shard lives on;
#   - the online move freezes only once the target caught up: it prints
#     "within ... of the --from server: freezing" before the freeze.
# It prints (does not assert) the pause the writers saw in each move: the
# longest time in which none of them committed a batch.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 60 2 "${LOGICAL[@]}" || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA app_template;
CREATE TABLE app_template.blobs (id bigint PRIMARY KEY, writer int NOT NULL, batch int NOT NULL, body bytea NOT NULL);
CREATE TABLE app_template.pair_a (id bigint PRIMARY KEY, n int NOT NULL);
CREATE TABLE app_template.pair_b (id bigint PRIMARY KEY, n int NOT NULL);
SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[5]);
SQL
echo "$a" >"$SHARDID_TMP/route"

# a writer: batches of 100 rows; a refused batch is retried on the route
writer() {
	local w=$1 n=0 port out log="$SHARDID_TMP/writer.$1"
	: >"$log"
	while [ ! -e "$SHARDID_TMP/stop" ]; do
		n=$((n + 1))
		while :; do
			[ -e "$SHARDID_TMP/stop" ] && return
			read -r port <"$SHARDID_TMP/route"
			if out=$("$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$(conn "$port")" -c \
				"INSERT INTO shard_0005.blobs (writer, batch, body)
				 SELECT $w, $n, pg_catalog.decode(string_agg(md5(random()::text || g || i), ''), 'hex')
				 FROM generate_series(1, 100) g, generate_series(1, 300) i GROUP BY g" 2>&1); then
				echo "$(date +%s%3N) ok $n" >>"$log"
				sleep 0.25
				break
			fi
			echo "$(date +%s%3N) error $(echo "$out" | head -1)" >>"$log"
			sleep 0.02
		done
	done
}
# the application transaction on two tables, 1.5 s apart, both orders
pair_writer() {
	local n=0 port out first second log="$SHARDID_TMP/pair"
	: >"$log"
	while [ ! -e "$SHARDID_TMP/stop" ]; do
		n=$((n + 1))
		if [ $((n % 2)) = 0 ]; then first=pair_a second=pair_b; else first=pair_b second=pair_a; fi
		read -r port <"$SHARDID_TMP/route"
		if out=$("$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$(conn "$port")" \
			-c "BEGIN" -c "INSERT INTO shard_0005.$first (n) VALUES ($n)" -c "SELECT pg_sleep(1.5)" \
			-c "INSERT INTO shard_0005.$second (n) VALUES ($n)" -c "COMMIT" 2>&1 >/dev/null); then
			echo "ok $n" >>"$log"
		else
			echo "error $(echo "$out" | grep -m1 ERROR)" >>"$log"
			sleep 0.05
		fi
	done
}
pause_of() {	# pause_of START_MS END_MS: the longest time in which no writer committed a batch
	cat "$SHARDID_TMP"/writer.* | awk -v s="$1" -v e="$2" '$2 == "ok" { print $1 }' | sort -n |
		awk -v s="$1" -v e="$2" 'NR > 1 && $1 >= s && prev <= e && $1 - prev > max { max = $1 - prev } { prev = $1 } END { print max + 0 }'
}

# The deadlock, made on purpose: an application transaction holds pair_b,
# the freeze (which takes pair_a before pair_b) waits for it, and then the
# transaction writes pair_a.  The freeze must give way (no 40P01 for either)
# and the transaction commit; the move then goes on.
coproc APP { "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=0 -d "$(conn "$a")" 2>&1; }
echo "BEGIN; INSERT INTO shard_0005.pair_b (n) VALUES (-1); SELECT 'held';" >&"${APP[1]}"
read -r -t 30 line <&"${APP[0]}"
expect "$line" = held "the application transaction holds pair_b"
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/deadlock.move" 2>&1 &
mover=$!
for i in $(seq 1 600); do
	[ "$(on "$a" -c "SELECT count(*) FROM pg_locks WHERE NOT granted AND relation = 'shard_0005.pair_b'::regclass")" != 0 ] && break
	sleep 0.02
done
echo "INSERT INTO shard_0005.pair_a (n) VALUES (-1); COMMIT; SELECT 'done';" >&"${APP[1]}"
app=""
while read -r -t 30 line <&"${APP[0]}"; do app="$app $line"; [ "$line" = done ] && break; done
echo "the application transaction: $app"
echo "$app" | grep -q "deadlock" && fail "the application transaction got a deadlock"
echo "$app" | grep -q "ERROR" && fail "the application transaction failed: $app"
echo "\\q" >&"${APP[1]}"
wait "$mover"
status=$?
sed 's/^/  | /' "$SHARDID_TMP/deadlock.move"
expect "$status" = 0 "the move that waited for the application transaction"
grep -q deadlock "$SHARDID_TMP/deadlock.move" && fail "the move met a deadlock"
expect "$(on "$b" -c "SELECT count(*) FROM shard_0005.pair_a WHERE n = -1") $(on "$b" -c "SELECT count(*) FROM shard_0005.pair_b WHERE n = -1")" = "1 1" \
	"the application transaction's rows moved"
# and back, for the load below
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes >/dev/null || fail "--drop-source failed"
"$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" >/dev/null || fail "the move back failed"
"$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --drop-source --yes >/dev/null || fail "--drop-source failed"

load_start=$(date +%s)
for w in 1 2 3 4 5 6; do writer "$w" & done
pair_writer &
sleep 4

# offline, a to b
start=$(date +%s%3N)
if "$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")"; then
	echo "$b" >"$SHARDID_TMP/route.new" && mv "$SHARDID_TMP/route.new" "$SHARDID_TMP/route"
else
	fail "offline move under load failed"
fi
end=$(date +%s%3N)
sleep 4
echo "offline move: $((end - start)) ms; longest time without a committed batch: $(pause_of "$start" "$end") ms"

# online, b back to a
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes || fail "--drop-source failed"
start=$(date +%s%3N)
out=$("$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --online 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
end=$(date +%s%3N)
if [ $status = 0 ]; then
	echo "$a" >"$SHARDID_TMP/route.new" && mv "$SHARDID_TMP/route.new" "$SHARDID_TMP/route"
else
	fail "online move under load failed"
fi
echo "$out" | grep -q "of the --from server: freezing" || fail "the online move froze before the target caught up"
sleep 4
touch "$SHARDID_TMP/stop"
wait
echo "online move: $((end - start)) ms; longest time without a committed batch: $(pause_of "$start" "$end") ms"

# no deadlock, no error but the documented refusals
errors=$(cat "$SHARDID_TMP"/writer.* "$SHARDID_TMP/pair" | grep error | grep -v "is being moved to another server\|has moved to another server" | sort | uniq -c)
[ -n "$errors" ] && fail "application errors other than the refusal: $errors"
expect "$(grep -c "deadlock" "$SHARDID_TMP/pair")" = 0 "deadlocks of the two-table transaction"
expect_ge "$(grep -c "^ok" "$SHARDID_TMP/pair")" 1 "two-table transactions committed"
# every committed batch on the server that holds the shard
batches=$(cat "$SHARDID_TMP"/writer.* | grep -c " ok ")
expect "$(on "$a" -c "SELECT count(*) FROM shard_0005.blobs")" = "$((batches * 100))" "rows on the server holding shard 5 = rows committed"
expect "$(on "$a" -c "SELECT count(*) FROM shard_0005.pair_a WHERE n > 0") $(on "$a" -c "SELECT count(*) FROM shard_0005.pair_b WHERE n > 0")" = \
	"$(grep -c "^ok" "$SHARDID_TMP/pair") $(grep -c "^ok" "$SHARDID_TMP/pair")" "two-table transactions: both rows or none"
echo "writers committed $batches batches of 100 rows in $(($(date +%s) - load_start)) s ($(on "$a" -c "SELECT pg_size_pretty(pg_total_relation_size('shard_0005.blobs'))"))"
finish
