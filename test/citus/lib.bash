# test/citus/lib.bash: a Citus cluster for shardid's Citus tests.  Source it
# from a script in test/citus; it is not a test itself.
#
# It builds Citus (tools/pg/build-citus.sh, cached) into a copy of the server
# PG_CONFIG names, installs shardid into that copy from a scratch copy of the
# checkout, and gives citus_start, which starts a coordinator and two
# workers on this machine: shared_preload_libraries = 'citus,shardid',
# private ports and socket (test/lib.sh), run as the postgres OS user and
# stopped when the script exits, even on failure.  The database is "app" on
# every node.  A script that sources this file exits 77 (skipped) when Citus
# cannot be built here.
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
checkout=$(pwd)

# Citus goes into a copy of the server (build.sh); shardid is installed
# into that copy only, never into the server PG_CONFIG names
build_out=$(mktemp)
tools/pg/build-citus.sh "${PG_CONFIG:-pg_config}" >"$build_out"
status=$?
citus_pg_config=$(tail -1 "$build_out")
rm -f "$build_out"
case $status in
0) ;;
77)
	echo "skipped: Citus cannot be built against ${PG_CONFIG:-pg_config} (see above)"
	exit 77
	;;
*)
	echo "FAIL: tools/pg/build-citus.sh failed"
	exit 1
	;;
esac
[ -x "$citus_pg_config" ] || { echo "FAIL: tools/pg/build-citus.sh gave no pg_config"; exit 1; }
export PG_CONFIG=$citus_pg_config

SHARDID_TMP=""		# its own directory and servers, removed at exit
. test/lib_script.sh
chmod 777 "$SHARDID_TMP"

# shardid from a scratch copy of the checkout, so the checkout's objects
# (built for another server, maybe) are left alone; one install into the
# Citus copy at a time (test/run.sh may run two Citus scripts at once)
citus_install_shardid() {
	local src=$SHARDID_TMP/shardid-src
	mkdir -p "$src"
	git -C "$checkout" ls-files -z --cached --others --exclude-standard |
		(cd "$checkout" && xargs -0 cp --parents -t "$src" 2>/dev/null)
	make -s -C "$src" PG_CONFIG="$citus_pg_config" >"$SHARDID_TMP/shardid-install.log" 2>&1 &&
		flock "$("$citus_pg_config" --bindir)/../.shardid-install.lock" \
			make -s -C "$src" PG_CONFIG="$citus_pg_config" install >>"$SHARDID_TMP/shardid-install.log" 2>&1 || {
		tail -30 "$SHARDID_TMP/shardid-install.log"
		echo "FAIL: shardid did not build against $PG_CONFIG"
		exit 1
	}
}
citus_install_shardid

# the nodes: coordinator, two workers
COORD=$SHARDID_PORT_BASE
W1=$((SHARDID_PORT_BASE + 1))
W2=$((SHARDID_PORT_BASE + 2))
declare -A node_port=([coord]=$COORD [w1]=$W1 [w2]=$W2)
declare -A node_env=()

# at PORT SQL...: q against the database app on the node on PORT
at() {
	local port=$1
	shift
	PGHOST=$SHARDID_TMP PGPORT=$port PGUSER=postgres PGDATABASE=app q "$@"
}

# citus_node_start NAME [env assignments]: (re)start a node, e.g. with
# $(faketime_env +3s); the environment is kept for later restarts
citus_node_start() {
	local name=$1
	shift
	[ $# -gt 0 ] && node_env[$name]="$*"
	# shellcheck disable=SC2086
	cluster_start "$name" ${node_env[$name]:-}
}

# citus_start [postgresql.conf lines...]: init and start the three nodes,
# create citus in database app on each, add the workers, turn on
# schema-based sharding, create shardid on the coordinator (it propagates).
# Env for a node's server: set node_env[NAME] before the call.
citus_start() {
	local name
	for name in coord w1 w2; do
		cluster_init "$name" "${node_port[$name]}" \
			"shared_preload_libraries = 'citus,shardid'" \
			"max_connections = 200" \
			"shared_buffers = 128MB" \
			"max_prepared_transactions = 100" \
			"wal_level = logical" \
			"max_replication_slots = 10" \
			"max_wal_senders = 10" \
			"citus.enable_schema_based_sharding = on" \
			"$@" || return 1
		citus_node_start "$name" || return 1
		q -h "$SHARDID_TMP" -p "${node_port[$name]}" -U postgres -d postgres \
			-c "CREATE DATABASE app" || return 1
		at "${node_port[$name]}" -c "CREATE EXTENSION citus" || return 1
	done
	at "$COORD" -c "SELECT citus_set_coordinator_host('127.0.0.1', $COORD)" \
		-c "SELECT citus_add_node('127.0.0.1', $W1)" \
		-c "SELECT citus_add_node('127.0.0.1', $W2)" \
		-c "CREATE EXTENSION shardid" >/dev/null || return 1
}

# node_of SCHEMA: the port of the worker that holds the tenant schema
node_of() {
	at "$COORD" -c "SELECT nodeport FROM pg_dist_shard_placement p
		JOIN pg_dist_shard s USING (shardid)
		WHERE s.logicalrelid::regclass::text LIKE '$1.%' LIMIT 1"
}

# metadata_synced: wait (60 s at most) until Citus's maintenance daemon has
# sent the coordinator's pg_dist_node to every node with metadata; a change
# such as citus_update_node() reaches the workers only then, and inserts
# routed by a worker before it still go to the old address
metadata_synced() {
	local i
	for i in $(seq 600); do
		[ "$(at "$COORD" -c "SELECT bool_and(metadatasynced) FROM pg_dist_node WHERE hasmetadata")" = t ] && return 0
		sleep 0.1
	done
	return 1
}

# other_worker PORT: the worker that is not PORT
other_worker() {
	if [ "$1" = "$W1" ]; then echo "$W2"; else echo "$W1"; fi
}
