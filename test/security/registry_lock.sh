#!/usr/bin/env bash
# Nobody but the registry's writers can lock shardid.shard_registry against
# its readers.
#
# 1.2 grants INSERT and DELETE on shardid.shard_registry to PUBLIC (the
# trigger registry_guard decides who writes).  LOCK TABLE allows ACCESS
# EXCLUSIVE to any role with UPDATE, DELETE or TRUNCATE on the table: carol,
# who may only connect, takes it in an open transaction, and every routing
# call (shard_schema(), id_schema(), the view shards) and doctor() wait for
# her as long as she likes; applications that route through the registry
# stall with them.  Exit 0: her LOCK is refused and a superuser's routing
# and doctor() answer.
. "$(dirname "$0")/../lib.sh" servers
export PGOPTIONS="-c search_path=pg_catalog,pg_temp"

q -d postgres -c "DO \$\$BEGIN CREATE ROLE carol LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END\$\$"
q >/dev/null <<'SQL'
CREATE SCHEMA tpl;
CREATE TABLE tpl.items (id bigint PRIMARY KEY);
SELECT count(*) FROM shardid.create_shards('tpl', ARRAY[5]);
SQL

fifo=$SHARDID_TMP/carol.fifo
rm -f "$fifo"
mkfifo "$fifo"
"$PG_BIN/psql" -X -q -At -U carol <"$fifo" >"$SHARDID_TMP/carol.out" 2>&1 &
carol=$!
exec 7>"$fifo"
echo "BEGIN; LOCK TABLE shardid.shard_registry IN ACCESS EXCLUSIVE MODE; SELECT 'tried';" >&7
wait_until "carol's LOCK TABLE answered" grep -Eq "tried|permission denied" "$SHARDID_TMP/carol.out"
echo "carol: $(tr '\n' ' ' <"$SHARDID_TMP/carol.out")"
grep -q "permission denied" "$SHARDID_TMP/carol.out" ||
	fail "carol, who may only connect, locked shardid.shard_registry in ACCESS EXCLUSIVE mode"

for sql in "SELECT shardid.shard_schema(5)" "SELECT count(*) FROM shardid.shards" \
	"SELECT count(*) FROM shardid.doctor(scan_rows => false)"; do
	q -c "SET statement_timeout = '5s'" -c "$sql" >/dev/null 2>"$SHARDID_TMP/err" ||
		fail "$sql while carol holds her lock: $(head -1 "$SHARDID_TMP/err")"
done
echo "ROLLBACK;" >&7
exec 7>&-
wait $carol
finish
