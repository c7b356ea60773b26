#!/usr/bin/env bash
# test/citus/move.sh: citus_schema_move of a tenant back and forth between
# the workers, in both transfer modes, under writers on all three nodes,
# with worker 1's clock 3 s ahead (libfaketime).  The tenant starts on
# worker 1, so its first move lands its rows, ids 3 s in the future, on a
# server whose clock is behind them.  Ids come from the shardid.set_id()
# trigger.  Each writer runs its inserts one after another, so for each
# writer every id must be greater than the one before, across every move;
# no id repeats (primary key) and every id decodes to the tenant's shard.
. "$(dirname "$0")/../lib.sh" citus

node_env[w1]=$(faketime_env +3s) || finish
citus_start || { fail "the Citus cluster did not start"; finish; }
at "$COORD" -c "CREATE SCHEMA tenant_7" \
	-c "CREATE TABLE tenant_7.m (id bigint PRIMARY KEY, node int, client int,
	                             at timestamptz DEFAULT clock_timestamp())" \
	-c "SELECT shardid.citus_use_trigger('tenant_7.m', 7)" >/dev/null ||
	{ fail "setup"; finish; }
move_to() {	# move_to PORT MODE
	at "$COORD" -c "SELECT citus_schema_move('tenant_7', '127.0.0.1', $1, '$2')" \
		-c "CALL citus_cleanup_orphaned_resources()" >/dev/null
}
[ "$(node_of tenant_7)" = "$W1" ] || move_to "$W1" block_writes || { fail "first move to worker 1"; finish; }
echo "tenant_7 on worker 1 (port $W1, clock +3 s)"

# writers: 2 pgbench clients on each node, until told to stop
echo 'INSERT INTO tenant_7.m (node, client) VALUES (:node, :client_id);' >"$SHARDID_TMP/ins.sql"
pids=()
for port in "$COORD" "$W1" "$W2"; do
	PGHOST=$SHARDID_TMP PGPORT=$port PGUSER=postgres PGDATABASE=app \
		"$PG_BIN/pgbench" -n -c 2 -T 1200 -D node="$port" -f "$SHARDID_TMP/ins.sql" \
		>"$SHARDID_TMP/pgbench.$port.log" 2>&1 &
	pids+=($!)
done
stop_writers() {
	local pid
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
}

# grow N: wait until the table has N more rows (at most 300 s); fail at
# once when a writer gave up (pgbench ends a client at its first error)
grow() {
	local from i pid
	from=$(at "$COORD" -c "SELECT count(*) FROM tenant_7.m")
	for i in $(seq 3000); do
		[ "$(at "$COORD" -c "SELECT count(*) FROM tenant_7.m")" -ge $((from + $1)) ] && return 0
		if grep -q "aborted" "$SHARDID_TMP"/pgbench.*.log; then
			fail "a writer gave up: $(grep -h -m1 ERROR "$SHARDID_TMP"/pgbench.*.log | head -1)"
			stop_writers
			finish
		fi
		sleep 0.1
	done
	fail "the writers did not write $1 rows in 300 s"
	return 1
}

grow 2000
for step in "$W2 force_logical" "$W1 block_writes" "$W2 block_writes" "$W1 force_logical"; do
	set -- $step
	move_to "$1" "$2" || fail "citus_schema_move to port $1 ($2)"
	expect "$(node_of tenant_7)" = "$1" "tenant_7 placed on port $1 after the move ($2)"
	echo "moved to port $1 ($2)"
	grow 2000
done
stop_writers

read -r rows distinct other backwards <<<"$(at "$COORD" -F' ' -c "
	SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE shardid.id_shard(id) <> 7),
	       (SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY node, client ORDER BY at) AS prev
	                              FROM tenant_7.m) s WHERE id <= prev)
	FROM tenant_7.m")"
echo "$rows rows, $distinct distinct ids, $other of another shard, $backwards below their writer's previous id"
expect "$rows" = "$distinct" "distinct ids"
expect "$other" = 0 "ids of another shard"
expect "$backwards" = 0 "ids below the previous id of the same writer"
for port in "$COORD" "$W1" "$W2"; do
	grep -q "aborted" "$SHARDID_TMP/pgbench.$port.log" && fail "a writer through port $port aborted: $(grep -m1 ERROR "$SHARDID_TMP/pgbench.$port.log")"
done
# the longest a writer waited between two of its rows (moves and the first
# ids on a server behind the newest id)
echo "longest pause of a writer: $(at "$COORD" -c "
	SELECT round(extract(epoch FROM max(gap))::numeric, 2) FROM (
	  SELECT at - lag(at) OVER (PARTITION BY node, client ORDER BY at) AS gap FROM tenant_7.m) s") s"
finish
