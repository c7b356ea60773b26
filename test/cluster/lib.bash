# test/cluster/lib.bash: servers for the shardid-move scripts of test/cluster.
# Source it from such a script; it is not a test itself.
#
# It gives the script its own directory and servers (test/lib_script.sh:
# run as the postgres OS user, stopped at exit even on failure), $move (the
# shardid-move to run: $SHARDID_MOVE, else the installed one, else the
# checkout's), conn PORT and on PORT psql-args... for database app (where
# test/lib_script.sh's mallory works), move_servers, shard0_servers,
# events_shard, and a move paused at a pause point: move_paused, move_go,
# move_stop, paused_or_gone.
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
SHARDID_TMP=""		# its own directory and servers, removed at exit
. test/lib_script.sh

move=${SHARDID_MOVE:-"$PG_BIN/shardid-move"}
[ -x "$move" ] || move=src/move/shardid-move
chmod 777 "$SHARDID_TMP"

# a move paused at a pause point (SHARDID_MOVE_PAUSE_AT): it pauses while
# $marker exists; $pid is the move still running, killed at exit
marker="$SHARDID_TMP/paused"
pid=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; shardid_cleanup' EXIT
# paused_or_gone: the move paused, or it ended (without pausing)
paused_or_gone() { [ -e "$marker" ] || ! kill -0 "$pid" 2>/dev/null; }
# move_paused LABEL POINT LOG [move options...]: $move with the options in
# the background (output to LOG), $pid; waits until it paused at POINT,
# else fails the script with LABEL and LOG (and returns 1)
move_paused() {
	local label=${1:+$1: } at=$2 log=$3
	shift 3
	rm -f "$marker"
	SHARDID_MOVE_PAUSE_AT=$at SHARDID_MOVE_PAUSE_FILE=$marker "$move" "$@" >"$log" 2>&1 &
	pid=$!
	wait_until "${label}the move paused at $at" paused_or_gone
	[ -e "$marker" ] || { fail "${label}the move did not pause: $(cat "$log")"; return 1; }
}
# move_go: lets the paused move go on; returns its exit status
move_go() {
	local status
	rm -f "$marker"
	wait "$pid"
	status=$?
	pid=""
	return "$status"
}
# move_stop SIGNAL: the move sent SIGNAL; returns its exit status
move_stop() {
	local status
	kill -"$1" "$pid"
	wait "$pid" 2>/dev/null
	status=$?
	pid=""
	return "$status"
}

# what an online move needs of both servers
LOGICAL=("wal_level = logical" "max_wal_senders = 10" "max_replication_slots = 10")

conn() { echo "host=$SHARDID_TMP port=$1 user=postgres dbname=app"; }
mallory_conn() { conn "$1"; }	# mallory's database (test/lib_script.sh)
on() {
	local p=$1
	shift
	q -d "$(conn "$p")" "$@"
}

# move_servers OFFSET COUNT [postgresql.conf lines...]: COUNT servers s0,
# s1, ... on ports SHARDID_PORT_BASE + OFFSET and up (each script its own
# OFFSET), with the same shardid.epoch and a database app (shardid not yet
# created); sets $a, $b and $c to the first three ports
move_servers() {
	local offset=$1 count=$2 i
	shift 2
	base=$((SHARDID_PORT_BASE + offset))
	for ((i = 0; i < count; i++)); do
		cluster_init "s$i" $((base + i)) "shardid.epoch = '2026-01-01 00:00:00+00'" "$@" || return 1
		cluster_start "s$i" || return 1
		"$PG_BIN/psql" -X -q -d "host=$SHARDID_TMP port=$((base + i)) user=postgres dbname=postgres" \
			-c "CREATE DATABASE app" || return 1
	done
	a=$base
	b=$((base + 1))
	c=$((base + 2))
}

# shard0_servers PORT...: shardid created on each server, schema shard_0000
# registered there as shard 0
shard0_servers() {
	local p
	for p in "$@"; do
		on "$p" >/dev/null <<'SQL' || return 1
CREATE EXTENSION shardid;
CREATE SCHEMA shard_0000;
SELECT shardid.register_shard(0, 'shard_0000');
SQL
	done
}

# events_shard PORT ROWS [mallory]: shard 5 on server PORT, made by
# create_shards() from app_template.events (id, n), with ROWS rows; with
# "mallory", she may create in its schema (USAGE, CREATE)
events_shard() {
	on "$1" >/dev/null <<SQL
CREATE SCHEMA app_template;
CREATE TABLE app_template.events (id bigint PRIMARY KEY, n int NOT NULL);
SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[5]);
INSERT INTO shard_0005.events (n) SELECT g FROM generate_series(1, $2) g;
${3:+GRANT USAGE, CREATE ON SCHEMA shard_0005 TO mallory;}
SQL
}
