#!/usr/bin/env bash
# test/cluster/review_hold_swap.sh: the owner of the schema cannot swap a
# superuser's table of the copy for one of hers during an online move, on
# any PostgreSQL version.
#
# secret belongs to the superuser and grants nothing; mallory owns schema
# shard_0005 (the owner of a schema may drop any table in it).
#   1. between the copy of the definitions and the subscription (paused at
#      "subscribe") she drops secret on the --to server and makes her own
#      secret, readable by PUBLIC: the move fails, naming the table and both
#      owners, the shard stays where it was, and the --to server keeps no
#      copy.  shardid-move at cfeee6a exited 0: the subscription filled her
#      table with the superuser's rows, which she then read (into 15, and on
#      16+ where nothing was held);
#   2. while the subscription applies (paused at "copy") she tries the same:
#      refused, as the schema belongs to the move's superuser until the
#      subscription is gone (she keeps USAGE); after the move she owns the
#      schema again, secret is the superuser's, and she cannot read it.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 336 2 "${LOGICAL[@]}" || exit 1
mallory_verbosity=terse
marker=$SHARDID_TMP/paused

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" -c "CREATE ROLE mallory LOGIN" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0005 AUTHORIZATION mallory;
SELECT shardid.register_shard(5, 'shard_0005');
CREATE TABLE shard_0005.secret (id bigint PRIMARY KEY, v text);
INSERT INTO shard_0005.secret SELECT g, 'secret ' || g FROM generate_series(1, 100) g;
SQL
out=$(as_mallory "$a" -c "SELECT count(*) FROM shard_0005.secret" 2>&1)
expect "$out" = "ERROR:  permission denied for table secret" "mallory reads secret on the --from server (test of the test)"

rm -f "$marker"
SHARDID_MOVE_PAUSE_AT=subscribe SHARDID_MOVE_PAUSE_FILE=$marker \
	"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes >"$SHARDID_TMP/move.log" 2>&1 &
pid=$!
wait_until "the move paused before the subscription" test -e "$marker" || { kill "$pid"; cat "$SHARDID_TMP/move.log"; finish; }
as_mallory "$b" >/dev/null <<'SQL' || fail "her swap on the --to server (test of the test)"
DROP TABLE shard_0005.secret;
CREATE TABLE shard_0005.secret (id bigint PRIMARY KEY, v text);
GRANT SELECT ON shard_0005.secret TO PUBLIC;
SQL
rm -f "$marker"
wait "$pid"
status=$?
pid=""
sed 's/^/  | /' "$SHARDID_TMP/move.log"
expect "$status" = 1 "the move whose superuser's table she swapped: exit status"
grep -qxF "shardid-move: error: table shard_0005.secret belongs to role mallory on the --to server, to role postgres on the --from server (changed on the --to server after the copy of the definitions)" \
	"$SHARDID_TMP/move.log" || fail "the error names the table and both owners"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still registered on the --from server"
expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "the copy on the --to server"
out=$(as_mallory "$b" -c "SELECT count(*) FROM shard_0005.secret" 2>&1)
expect "$out" != 100 "mallory reads the superuser's rows on the --to server"

# 2. the same while the subscription applies
rm -f "$marker"
SHARDID_MOVE_PAUSE_AT=copy SHARDID_MOVE_PAUSE_FILE=$marker \
	"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes >"$SHARDID_TMP/move2.log" 2>&1 &
pid=$!
wait_until "the move paused while replicating" test -e "$marker" || { kill "$pid"; cat "$SHARDID_TMP/move2.log"; finish; }
expect "$(on "$b" -c "SELECT nspowner::regrole FROM pg_namespace WHERE nspname = 'shard_0005'")" = postgres \
	"the copy's schema while the subscription applies"
out=$(as_mallory "$b" -c "DROP TABLE shard_0005.secret" 2>&1)
expect "$out" = "ERROR:  must be owner of table secret" "her DROP of the superuser's table while the subscription applies"
rm -f "$marker"
wait "$pid"
status=$?
pid=""
expect "$status" = 0 "the move during which she tried: exit status"
[ "$status" = 0 ] || cat "$SHARDID_TMP/move2.log"
expect "$(on "$b" -c "SELECT n.nspowner::regrole || ' ' || coalesce(n.nspacl::text, 'default') || ' ' || c.relowner::regrole
                      FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid WHERE c.oid = 'shard_0005.secret'::regclass")" = \
	"mallory {mallory=UC/mallory} postgres" "owners after the move (her USAGE merged into the owner's privileges)"
out=$(as_mallory "$b" -c "SELECT count(*) FROM shard_0005.secret" 2>&1)
expect "$out" = "ERROR:  permission denied for table secret" "mallory reads secret on the --to server after the move"
finish
