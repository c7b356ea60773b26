#!/usr/bin/env bash
# test/cluster/move_hold.sh: an online move into PostgreSQL 15, whose
# subscription applies every change as a superuser, gives no other role a
# moment to add code to the copy that the apply would run.
#
# mallory owns schema shard_0005 and its table m (no CHECK, trigger or other
# evaluated expression: the move would refuse it up front).  1.3 before this
# test left her the owner of both on the --to server from the copy of the
# definitions to the cutover:
#   1. while the subscription applies (paused at "copy"), she tries on the
#      --to server: a trigger enabled ALWAYS on m (which the apply fires),
#      a CHECK, an index expression, and to drop m and make a table of her
#      own under its name (the owner of a schema may drop any table in it):
#      each is refused, as the schema and m belong to the superuser until
#      the subscription is gone; the rows written meanwhile arrive; after
#      the move she owns both again, with the privileges she had;
#   2. between the copy of the definitions and the subscription (paused at
#      "subscribe"), she adds an ALWAYS trigger to m there: the move fails,
#      naming the table, and the shard stays where it was.
# After each: her function never ran as a superuser.  On PostgreSQL 16+ the
# subscription applies as the table's owner: skipped.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 310 2 "${LOGICAL[@]}" || exit 1
version=$(on "$a" -c "SHOW server_version_num") || exit 1
if [ "$version" -ge 160000 ]; then
	echo "skipped: PostgreSQL $version applies a subscription's changes as the table's owner"
	exit 77
fi
mallory_verbosity=terse
marker=$SHARDID_TMP/paused

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION mallory.strike_trg() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN PERFORM mallory.strike(); RETURN NEW; END $$;
CREATE FUNCTION mallory.f(text) RETURNS text IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN PERFORM mallory.strike(); RETURN $1; END $$;
SQL
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0005 AUTHORIZATION mallory;
SELECT shardid.register_shard(5, 'shard_0005');
SET ROLE mallory;
CREATE TABLE shard_0005.m (id bigint PRIMARY KEY, v text);
GRANT SELECT ON shard_0005.m TO PUBLIC;
INSERT INTO shard_0005.m SELECT g, 'v' || g FROM generate_series(1, 100) g;
SQL
owners() {	# owners PORT: the owners of shard_0005 and m, and m's privileges
	on "$1" -c "SELECT nspowner::regrole || ' ' || relowner::regrole || ' ' || relacl::text
	            FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid
	            WHERE nspname = 'shard_0005' AND relname = 'm'"
}
source_owners=$(owners "$a")
expect "$source_owners" = "mallory mallory {mallory=arwdDxt/mallory,=r/mallory}" "owners on the --from server (test of the test)"

# 1. her tries while the subscription applies
rm -f "$marker"
SHARDID_MOVE_PAUSE_AT=copy SHARDID_MOVE_PAUSE_FILE=$marker \
	"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online --move-and-drop-source --yes >"$SHARDID_TMP/move1.log" 2>&1 &
pid=$!
wait_until "the move paused while replicating" test -e "$marker" || { kill "$pid"; cat "$SHARDID_TMP/move1.log"; finish; }
expect "$(owners "$b" | cut -d' ' -f1,2)" = "postgres postgres" "owners on the --to server while the subscription applies"
try() {	# try WHAT SQL ERROR: as mallory on the --to server, refused with ERROR
	local out
	out=$(as_mallory "$b" -c "$2" 2>&1)
	expect "$?" = 1 "$1 on the --to server during the apply: exit status"
	expect "$out" = "ERROR:  $3" "$1 on the --to server during the apply"
}
try "CREATE TRIGGER" "CREATE TRIGGER strike BEFORE INSERT ON shard_0005.m FOR EACH ROW EXECUTE FUNCTION mallory.strike_trg()" \
	"permission denied for table m"
try "ADD CHECK" "ALTER TABLE shard_0005.m ADD CHECK (mallory.strike())" "must be owner of table m"
try "CREATE INDEX" "CREATE INDEX ON shard_0005.m (mallory.f(v))" "must be owner of table m"
try "DROP TABLE" "DROP TABLE shard_0005.m" "must be owner of table m"
on "$a" -c "INSERT INTO shard_0005.m SELECT g, 'w' || g FROM generate_series(101, 150) g" || fail "rows written during the apply"
rm -f "$marker"
wait "$pid"
status=$?
expect "$status" = 0 "the online move into PostgreSQL 15: exit status"
[ "$status" = 0 ] || cat "$SHARDID_TMP/move1.log"
pid=""
expect "$(on "$b" -c "SELECT count(*) FROM shard_0005.m")" = 150 "rows on the --to server"
expect "$(owners "$b")" = "$source_owners" "owners and privileges on the --to server after the cutover"
expect "$(on "$b" -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'shard_0005.m'::regclass")" = 0 "triggers of m after the move"
no_superuser_code "the move during which she tried" "$a" "$b"

# 2. her trigger, added between the copy of the definitions and the subscription
rm -f "$marker"
SHARDID_MOVE_PAUSE_AT=subscribe SHARDID_MOVE_PAUSE_FILE=$marker \
	"$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --online --move-and-drop-source --yes >"$SHARDID_TMP/move2.log" 2>&1 &
pid=$!
wait_until "the move paused before the subscription" test -e "$marker" || { kill "$pid"; cat "$SHARDID_TMP/move2.log"; finish; }
as_mallory "$a" -c "CREATE TRIGGER strike BEFORE INSERT ON shard_0005.m FOR EACH ROW EXECUTE FUNCTION mallory.strike_trg()" \
	-c "ALTER TABLE shard_0005.m ENABLE ALWAYS TRIGGER strike" || fail "her trigger on the copy (test of the test)"
rm -f "$marker"
wait "$pid"
expect "$?" = 1 "the move whose copy she changed: exit status"
pid=""
grep -q "^shardid-move: error: table shard_0005.m of role mallory carries a trigger: the --to server runs PostgreSQL 15, whose subscriptions apply changes as a superuser, with no way to apply them as the table's owner (changed on the --to server after the copy of the definitions)$" \
	"$SHARDID_TMP/move2.log" || fail "the error names the changed table: $(cat "$SHARDID_TMP/move2.log")"
grep -q "a table of schema \"shard_0005\" changed on the --to server after the copy of its definitions, which the subscription would run as a superuser" \
	"$SHARDID_TMP/move2.log" || fail "the move's failure: $(cat "$SHARDID_TMP/move2.log")"
expect "$(on "$b" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still registered on the server it was on"
expect "$(on "$b" -c "INSERT INTO shard_0005.m VALUES (1000, 'after') RETURNING id")" = 1000 "shard 5 takes writes where it was"
no_superuser_code "the move whose copy she changed" "$a" "$b"
finish
