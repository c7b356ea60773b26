#!/usr/bin/env bash
# test/cluster/review_hold_stats.sh: while an online move into PostgreSQL 15
# holds a table for the superuser, nothing of its owner's runs when the
# table is analyzed.
#
# ANALYZE (a DBA's, vacuumdb's, autovacuum's) runs as the table's owner and
# evaluates the expressions of its extended statistics.  mallory's table m
# carries CREATE STATISTICS ON (mallory.f(v)), which the check of the
# shape does not look at; pg_restore copies it.  The hold (cfeee6a) made the
# superuser the owner of m on the --to server while the subscription
# applies: an ANALYZE there ran mallory.f() as the superuser, and she became
# one (shardid-move at cfeee6a on PostgreSQL 15 exits 0 with mallory
# superuser on the --to server).
#   the move refuses the table up front, naming it, and her code never runs
#   as a superuser; an offline move, where m stays hers, moves it.
# On PostgreSQL 16+ the subscription applies as the table's owner and
# nothing is held: skipped.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 330 2 "${LOGICAL[@]}" || exit 1
version=$(on "$a" -c "SHOW server_version_num") || exit 1
if [ "$version" -ge 160000 ]; then
	echo "skipped: PostgreSQL $version applies a subscription's changes as the table's owner"
	exit 77
fi
marker=$SHARDID_TMP/paused

for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION mallory.f(text) RETURNS text IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN PERFORM mallory.strike(); RETURN $1; END $$;
SQL
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0005 AUTHORIZATION mallory;
SELECT shardid.register_shard(5, 'shard_0005');
SET ROLE mallory;
CREATE TABLE shard_0005.m (id bigint PRIMARY KEY, v text);
CREATE STATISTICS shard_0005.m_f ON (mallory.f(v)) FROM shard_0005.m;
INSERT INTO shard_0005.m SELECT g, 'v' || g FROM generate_series(1, 100) g;
SQL
# test of the test: an ANALYZE of m by a superuser runs f() as mallory
on "$a" -c "ANALYZE shard_0005.m" || exit 1
no_superuser_code "ANALYZE of her table (test of the test)" "$a" "$b"

rm -f "$marker"
SHARDID_MOVE_PAUSE_AT=copy SHARDID_MOVE_PAUSE_FILE=$marker \
	"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes >"$SHARDID_TMP/move1.log" 2>&1 &
pid=$!
wait_until "the move paused while replicating, or ended" \
	sh -c "test -e '$marker' || ! kill -0 $pid 2>/dev/null" || { kill "$pid"; cat "$SHARDID_TMP/move1.log"; finish; }
if [ -e "$marker" ]; then
	# what autovacuum does on its own, after the rows the apply wrote
	on "$b" -c "ANALYZE" || fail "ANALYZE on the --to server during the apply"
	rm -f "$marker"
fi
wait "$pid"
status=$?
pid=""
sed 's/^/  | /' "$SHARDID_TMP/move1.log"
expect "$status" = 1 "the online move of her table with expression statistics: exit status"
grep -q "^shardid-move: error: table shard_0005.m of role mallory carries extended statistics on an expression: the --to server runs PostgreSQL 15, whose subscriptions apply changes as a superuser, with no way to apply them as the table's owner$" \
	"$SHARDID_TMP/move1.log" || fail "the error names her table"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still registered on the --from server"
no_superuser_code "the online move" "$a" "$b"

# offline, m stays hers and is moved
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --yes 2>&1)
status=$?
expect "$status" = 0 "the offline move: exit status"
[ "$status" = 0 ] || echo "$out"
on "$b" -c "ANALYZE" || fail "ANALYZE on the --to server after the offline move"
expect "$(on "$b" -c "SELECT count(*) FROM shard_0005.m")" = 100 "rows on the --to server"
no_superuser_code "the offline move" "$a" "$b"
finish
