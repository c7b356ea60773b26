#!/usr/bin/env bash
# test/citus/rebalance.sh: Citus's rebalancer and a node added later, under
# writers.  Six tenant schemas from create_shards() (shards 1-6, ids from
# the set_id() trigger), all placed on worker 1, whose clock is 3 s ahead
# (libfaketime); six writers (two through each node) insert one row into
# every tenant in turn, without pause.  Then:
#  1. citus_rebalance_start() and citus_rebalance_wait() spread the tenants
#     over both workers (the moves off the fast clock);
#  2. a third worker is added (citus_add_node) and the rebalancer runs
#     again, moving tenants to it.
# The writers write on through both.  Afterwards, for every tenant table:
# no id repeats (primary key; a writer stops at its first error), every id
# decodes to the tenant's shard, each writer's ids rise, and, ordered by id,
# the rows come from the servers the tenant was on in the order it was on
# them: the node that made each id (a second trigger records its port) changes
# exactly as often as the tenant moved, so every id made after a move sorts
# above every id of the rows moved (not so if a server made ids below the
# moved ones: its ids would interleave with them).
. "$(dirname "$0")/../lib.sh" citus

node_env[w1]=$(faketime_env +3s) || finish
citus_start || { fail "the Citus cluster did not start"; finish; }
W3=$((SHARDID_PORT_BASE + 3))
node_port[w3]=$W3

tenants="shard_0001 shard_0002 shard_0003 shard_0004 shard_0005 shard_0006"
at "$COORD" -c "SET citus.enable_schema_based_sharding = off" \
	-c "CREATE SCHEMA app_template" \
	-c "CREATE TABLE app_template.t (id bigint PRIMARY KEY, node int, client int, made int,
	                                 at timestamptz DEFAULT clock_timestamp())" \
	-c "RESET citus.enable_schema_based_sharding" \
	-c "SET client_min_messages = warning" \
	-c "SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[1, 2, 3, 4, 5, 6])" \
	-c "CREATE FUNCTION public.made_here() RETURNS trigger LANGUAGE plpgsql AS
	    \$\$BEGIN NEW.made := pg_catalog.current_setting('port')::int; RETURN NEW; END\$\$" >/dev/null ||
	{ fail "setup"; finish; }
for s in $tenants; do
	at "$COORD" -c "CREATE TRIGGER z_made_here BEFORE INSERT ON $s.t FOR EACH ROW EXECUTE FUNCTION public.made_here()" >/dev/null ||
		{ fail "the made_here trigger on $s.t"; finish; }
	if [ "$(node_of "$s")" != "$W1" ]; then
		at "$COORD" -c "SELECT citus_schema_move('$s', '127.0.0.1', $W1, 'block_writes')" \
			-c "SET client_min_messages = warning" -c "CALL citus_cleanup_orphaned_resources()" >/dev/null ||
			{ fail "moving $s to worker 1"; finish; }
	fi
done
declare -A moves=() placed=()
for s in $tenants; do placed[$s]=$W1; moves[$s]=0; done
# placements: count each tenant's moves since the last call
placements() {
	local s p
	for s in $tenants; do
		p=$(node_of "$s")
		if [ "$p" != "${placed[$s]}" ]; then
			moves[$s]=$((moves[$s] + 1))
			placed[$s]=$p
		fi
	done
}
echo "6 tenants on worker 1 (port $W1, clock +3 s)"

# writers: 2 pgbench clients through each node, one row into every tenant
# per transaction, until told to stop
for s in $tenants; do
	echo "INSERT INTO $s.t (node, client) VALUES (:node, :client_id);"
done >"$SHARDID_TMP/ins.sql"
pids=()
for port in "$COORD" "$W1" "$W2"; do
	PGHOST=$SHARDID_TMP PGPORT=$port PGUSER=postgres PGDATABASE=app \
		"$PG_BIN/pgbench" -n -c 2 -T 1800 -D node="$port" -f "$SHARDID_TMP/ins.sql" \
		>"$SHARDID_TMP/pgbench.$port.log" 2>&1 &
	pids+=($!)
done
stop_writers() {
	local pid
	for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
	for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null; done
}
rows() { at "$COORD" -c "SELECT (SELECT count(*) FROM shard_0001.t) + (SELECT count(*) FROM shard_0006.t)"; }
# grow N: wait until tenants 1 and 6 have N more rows (at most 300 s); fail
# at once when a writer gave up (pgbench ends a client at its first error)
grow() {
	local from i
	from=$(rows)
	for i in $(seq 3000); do
		[ "$(rows)" -ge $((from + $1)) ] && return 0
		if grep -q "aborted" "$SHARDID_TMP"/pgbench.*.log; then
			fail "a writer gave up: $(grep -h -m1 ERROR "$SHARDID_TMP"/pgbench.*.log | head -1)"
			stop_writers
			finish
		fi
		sleep 0.1
	done
	fail "the writers did not write $1 rows in 300 s"
	stop_writers
	finish
}
# rebalance: the rebalancer in the background, waited for; its job must
# have finished
rebalance() {
	at "$COORD" -c "SET client_min_messages = warning" -c "SELECT citus_rebalance_start() IS NOT NULL" \
		-c "SELECT citus_rebalance_wait()" \
		-c "CALL citus_cleanup_orphaned_resources()" >/dev/null || fail "the rebalancer"
	expect "$(at "$COORD" -c "SELECT state FROM pg_dist_background_job ORDER BY job_id DESC LIMIT 1")" = finished \
		"the rebalancer's job"
}

grow 300
rebalance
echo "rebalanced over 2 workers"
placements
expect_ge "$(for s in $tenants; do [ "${placed[$s]}" = "$W2" ] && echo; done | wc -l)" 1 "tenants the rebalancer moved to worker 2"
grow 300

# a third worker, set up as citus_start sets up the others, added later
cluster_init w3 "$W3" \
	"shared_preload_libraries = 'citus,shardid'" "max_connections = 200" "shared_buffers = 128MB" \
	"max_prepared_transactions = 100" "wal_level = logical" "max_replication_slots = 10" \
	"max_wal_senders = 10" "citus.enable_schema_based_sharding = on" || { stop_writers; fail "w3"; finish; }
citus_node_start w3 || { stop_writers; fail "w3 did not start"; finish; }
q -h "$SHARDID_TMP" -p "$W3" -U postgres -d postgres -c "CREATE DATABASE app" >/dev/null &&
	at "$W3" -c "CREATE EXTENSION citus" >/dev/null &&
	at "$COORD" -c "SELECT citus_add_node('127.0.0.1', $W3)" >/dev/null || { stop_writers; fail "citus_add_node"; finish; }
expect "$(at "$W3" -c "SELECT extversion IS NOT NULL FROM pg_extension WHERE extname = 'shardid'")" = t "shardid on the added node"
grow 300
rebalance
echo "rebalanced over 3 workers"
placements
expect_ge "$(for s in $tenants; do [ "${placed[$s]}" = "$W3" ] && echo; done | wc -l)" 1 "tenants the rebalancer moved to the added worker"
grow 300
stop_writers

for port in "$COORD" "$W1" "$W2"; do
	grep -q "aborted" "$SHARDID_TMP/pgbench.$port.log" && fail "a writer through port $port aborted: $(grep -m1 ERROR "$SHARDID_TMP/pgbench.$port.log")"
done
total=0
for s in $tenants; do
	shard=$((10#${s#shard_}))
	read -r n distinct other backwards runs <<<"$(at "$COORD" -F' ' -c "
		SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE shardid.id_shard(id) <> $shard),
		       (SELECT count(*) FROM (SELECT id, lag(id) OVER (PARTITION BY node, client ORDER BY at) AS prev
		                              FROM $s.t) w WHERE id <= prev),
		       (SELECT count(*) FROM (SELECT made, lag(made) OVER (ORDER BY id) AS prev FROM $s.t) r
		        WHERE made IS DISTINCT FROM prev)
		FROM $s.t")"
	echo "$s: $n rows, $distinct distinct, $other of another shard, $backwards below their writer's previous id, made on $runs servers in a row, moved ${moves[$s]} times"
	total=$((total + n))
	expect "$distinct" = "$n" "$s: distinct ids"
	expect "$other" = 0 "$s: ids of another shard"
	expect "$backwards" = 0 "$s: ids below the previous id of the same writer"
	expect "$runs" = $((moves[$s] + 1)) "$s: runs of ids by the server that made them (1 + moves)"
done
echo "$total rows in all; placements: $(for s in $tenants; do printf '%s:%s ' "$s" "${placed[$s]}"; done)"
# the longest a writer waited between two of its rows (a tenant's move
# blocks its writes at the switch; the first ids on a server behind the
# newest id wait for its clock)
echo "longest pause of a writer: $(at "$COORD" -c "
	SELECT round(extract(epoch FROM max(gap))::numeric, 2) FROM (
	  SELECT at - lag(at) OVER (PARTITION BY node, client ORDER BY at) AS gap
	  FROM (SELECT * FROM shard_0001.t UNION ALL SELECT * FROM shard_0002.t UNION ALL SELECT * FROM shard_0003.t
	        UNION ALL SELECT * FROM shard_0004.t UNION ALL SELECT * FROM shard_0005.t UNION ALL SELECT * FROM shard_0006.t) a) s") s"
finish
