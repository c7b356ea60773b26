#!/usr/bin/env bash
# test/cluster/move_stale.sh: what earlier moves and missing objects cannot
# do to a move, and what the refusals say.
#
# Three servers a, b, c; shard 5 on b.
#   1. b holds a publication and a replication slot named like an earlier
#      move of shard 5: a new move is refused before anything changes, each
#      named with the SQL that drops it;
#   2. a preflight: an unlogged table (--online), a foreign key to a table
#      missing on c, a GRANT to a role missing on c: one message each,
#      nothing frozen;
#   3. a subscription on a (a third server) left enabled by an earlier,
#      interrupted move, retrying to attach to b's slot shardid_move_5: an
#      online move b -> c still copies (its names are its own) and ends;
#   4. the refusal on b names where the shard went; --json lists every
#      table of the text, partitioned parents too.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 80 3 "${LOGICAL[@]}" "wal_retrieve_retry_interval = '100ms'" || exit 1
for p in $a $b $c; do
	on "$p" -c "CREATE EXTENSION shardid" || exit 1
done
on "$b" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA app_template;
CREATE TABLE app_template.events (id bigint PRIMARY KEY, n int NOT NULL);
SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[5]);
INSERT INTO shard_0005.events (n) SELECT g FROM generate_series(1, 1000) g;
CREATE TABLE shard_0005.parted (id bigint, k int, PRIMARY KEY (id, k)) PARTITION BY LIST (k);
CREATE TABLE shard_0005.parted_1 PARTITION OF shard_0005.parted FOR VALUES IN (1);
CREATE TABLE shard_0005.parted_2 PARTITION OF shard_0005.parted FOR VALUES IN (2);
INSERT INTO shard_0005.parted SELECT g, 1 + g % 2 FROM generate_series(1, 100) g;
SQL
untouched() {	# untouched WHAT: no journal row on c, no freeze on b
	expect "$(on "$c" -c "SELECT count(*) FROM shardid.move_journal")" = 0 "$1: journal rows on the target"
	expect "$(on "$b" -c "SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_moving'")" = 0 "$1: freeze on the source"
}

# 1. leftovers of an earlier move of shard 5 on b
on "$b" -c "CREATE PUBLICATION shardid_move_5" \
	-c "SELECT pg_create_logical_replication_slot('shardid_move_5_0123456789abcdef0123456789abcdef', 'pgoutput')" >/dev/null || exit 1
out=$("$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$c")" --online 2>&1)
expect "$?" = 1 "leftovers: exit status"
echo "$out" | sed 's/^/  | /'
for want in \
	'error: the --from server holds publication "shardid_move_5", left by an earlier move of shard 5' \
	'hint: If no move of shard 5 is running, drop it there: DROP PUBLICATION "shardid_move_5";' \
	'error: the --from server holds replication slot "shardid_move_5_0123456789abcdef0123456789abcdef", left by an earlier move of shard 5' \
	"hint: If no move of shard 5 is running, drop it there: SELECT pg_catalog.pg_drop_replication_slot('shardid_move_5_0123456789abcdef0123456789abcdef');" \
	'error: replication objects of an earlier move of shard 5 are left; nothing was changed'; do
	echo "$out" | grep -qF -- "$want" || fail "leftovers: wanted \"$want\""
done
untouched "leftovers"
# the fixes, as the hints give them
echo "$out" | sed -n 's/.*hint: If no move of shard 5 is running, drop it there: //p' | while read -r sql; do
	on "$b" -c "$sql" >/dev/null || fail "the hinted fix failed: $sql"
done

# 2. preflight: one message per problem, nothing frozen
on "$b" >/dev/null <<'SQL' || exit 1
CREATE TABLE public.countries (code text PRIMARY KEY);
CREATE TABLE shard_0005.visits (id bigint PRIMARY KEY, country text REFERENCES public.countries);
CREATE UNLOGGED TABLE shard_0005.scratch (id bigint PRIMARY KEY);
CREATE ROLE auditor;
GRANT SELECT ON shard_0005.events TO auditor;
SQL
on "$a" -c "CREATE ROLE auditor" >/dev/null
out=$("$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$c")" --online 2>&1)
expect "$?" = 1 "preflight: exit status"
echo "$out" | sed 's/^/  | /'
for want in \
	'error: table shard_0005.scratch is unlogged: --online cannot carry it' \
	'error: table public.countries does not exist on the --to server: foreign key visits_country_fkey of shard_0005.visits references it' \
	'error: role auditor does not exist on the --to server: table shard_0005.events grants it privileges' \
	'error: shard 5 cannot move as it is (see above); nothing was changed'; do
	echo "$out" | grep -qF -- "$want" || fail "preflight: wanted \"$want\""
done
untouched "preflight"
on "$b" -c "DROP TABLE shard_0005.visits, shard_0005.scratch, public.countries" -c "REVOKE ALL ON shard_0005.events FROM auditor" >/dev/null

# 3. a stale subscription on a third server, enabled, retrying to attach to
# b's slot of shard 5 under the name a move of 1.1 gave it
on "$a" >/dev/null <<SQL || exit 1
CREATE SUBSCRIPTION shardid_move_5 CONNECTION 'host=$SHARDID_TMP port=$b user=postgres dbname=app'
    PUBLICATION shardid_move_5 WITH (connect = false, create_slot = false, slot_name = 'shardid_move_5');
ALTER SUBSCRIPTION shardid_move_5 ENABLE;
SQL
out=$("$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$c")" --online --timeout 60 --json 2>"$SHARDID_TMP/err")
status=$?
sed 's/^/  | /' "$SHARDID_TMP/err"
expect "$status" = 0 "online move with a stale subscription on a third server: exit status"
expect "$(on "$c" -c "SELECT count(*) FROM shard_0005.events")" = 1000 "rows of shard 5 on c"
on "$a" -c "ALTER SUBSCRIPTION shardid_move_5 DISABLE" -c "ALTER SUBSCRIPTION shardid_move_5 SET (slot_name = NONE)" \
	-c "DROP SUBSCRIPTION shardid_move_5" >/dev/null

# 4. --json: every table the text counts, the partitioned parent too
text=$(sed -n 's/.*moving shard 5 (schema "shard_0005": \([0-9]*\) tables.*/\1/p' "$SHARDID_TMP/err")
expect "$(echo "$out" | grep -o '"name": ' | wc -l)" = "$text" "--json tables = the text's tables"
echo "$out" | grep -qF '{"name": "parted", "partitioned": true, "rows": null}' || fail "--json: no partitioned parent: $out"
# the refusal on the old copy names where the shard went
err=$(on "$b" -c "INSERT INTO shard_0005.events (n) VALUES (0)" 2>&1)
echo "write to the old copy: $err"
echo "$err" | grep -qF "DETAIL:  Shard 5 lives on host=$SHARDID_TMP port=$c dbname=app now." ||
	fail "the refusal on the old copy does not name the server: $err"
echo "$err" | grep -q "password" && fail "the refusal shows a password"
finish
