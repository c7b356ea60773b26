# test/failover/common.bash: helpers for the scripts in test/failover, which
# start servers of their own (test/lib.sh) and crash them for real.  Source
# it from a script; it is not a test itself.
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
SHARDID_TMP=""		# its own directory and servers, removed at exit
. test/lib_script.sh
chmod 777 "$SHARDID_TMP"

need_faketime

# Strict mode: preloaded before PostgreSQL 17, the shared memory registry
# (no preloading) from 17 on, so that both ways are tested;
# SHARDID_PRELOAD=1 preloads it on 17+ too.
if [ -z "${SHARDID_PRELOAD:-}" ] &&
	[ "$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')" -ge 17 ]; then
	strict_conf="# strict mode through the shared memory registry"
else
	strict_conf="shared_preload_libraries = 'shardid'"
fi

# ready PORT: wait until the server on PORT accepts connections (60 s)
ready() {
	local i
	for i in $(seq 600); do
		"$PG_BIN/pg_isready" -q -h "$SHARDID_TMP" -p "$1" && return 0
		sleep 0.1
	done
	return 1
}

# q_at PORT SQL...: q against the database app on the server on PORT
q_at() {
	local port=$1
	shift
	PGPORT=$port PGDATABASE=app q "$@"
}

# expect_ids_after PORT LABEL BEFORE TABLE...: each table (columns id,
# phase) holds 70,000 distinct ids, and every id of phase 2 (made after the
# event) is greater than every id of phase 1 (BEFORE names those)
expect_ids_after() {
	local port=$1 label=$2 before=$3 table rows distinct after
	shift 3
	for table in "$@"; do
		read -r rows distinct after <<<"$(q_at "$port" -F' ' -c "
		    SELECT count(*), count(DISTINCT id),
		           (SELECT min(id) FROM $table WHERE phase = 2) > (SELECT max(id) FROM $table WHERE phase = 1)
		    FROM $table")"
		echo "$label: $table rows=$rows distinct=$distinct new ids after the $before ones: $after"
		expect "$rows" = 70000 "$label: $table rows"
		expect "$distinct" = 70000 "$label: $table distinct ids"
		expect "$after" = t "$label: $table: every new id greater than every $before id"
	done
}

# app_server [-c OFFSET] NAME PORT [postgresql.conf lines...]: a server in
# strict mode ($strict_conf) with database "app", started (its clock OFFSET
# from the real one, libfaketime), libpq pointed at it
app_server() {
	local offset=""
	[ "$1" = -c ] && { offset=$2; shift 2; }
	local name=$1 port=$2
	shift 2
	cluster_init "$name" "$port" "$strict_conf" "$@" || return 1
	# shellcheck disable=SC2046
	cluster_start "$name" $([ -n "$offset" ] && faketime_env "$offset") || return 1
	use_cluster "$port"
	q -c "CREATE DATABASE app" >/dev/null
}

# standby_copy NAME PORT PRIMARY_PORT: NAME becomes a copy of the server on
# PRIMARY_PORT that streams from it (pg_basebackup -R), on its own port;
# not started
standby_copy() {
	as_pg rm -rf "${SHARDID_TMP:?}/$1"
	as_pg "$PG_BIN/pg_basebackup" -D "$SHARDID_TMP/$1" -R -X stream -c fast -h "$SHARDID_TMP" -p "$3" -U postgres ||
		{ fail "pg_basebackup of $1 from the server on port $3 failed"; return 1; }
	cluster_conf "$1" "port = $2"
}

# standby_of NAME PORT PRIMARY_PORT [OFFSET]: standby_copy, then started
# (its clock OFFSET from the real one) and ready
standby_of() {
	standby_copy "$1" "$2" "$3" || return 1
	# shellcheck disable=SC2046
	cluster_start "$1" $([ -n "${4:-}" ] && faketime_env "$4") || { fail "standby $1 did not start"; return 1; }
	ready "$2" || { fail "standby $1 not ready"; return 1; }
}

# rewind_to NAME PORT PRIMARY_PORT [OFFSET]: NAME, a stopped former
# primary, is rewound (pg_rewind -R) to the server on PRIMARY_PORT, which
# was promoted from its standby, and started as its standby (its clock
# OFFSET from the real one).  Needs wal_log_hints or data checksums.
rewind_to() {
	# pg_rewind reads the promoted server's timeline from its control file,
	# which its first checkpoint after the promotion writes
	q -p "$3" -d postgres -c "CHECKPOINT" >/dev/null || { fail "checkpoint before pg_rewind"; return 1; }
	as_pg "$PG_BIN/pg_rewind" -D "$SHARDID_TMP/$1" -R \
		--source-server="host=$SHARDID_TMP port=$3 user=postgres dbname=postgres" \
		>"$SHARDID_TMP/$1.rewind.log" 2>&1 ||
		{ fail "pg_rewind of $1: $(tail -3 "$SHARDID_TMP/$1.rewind.log")"; return 1; }
	# the configuration files came from the source
	cluster_conf "$1" "port = $2"
	# shellcheck disable=SC2046
	cluster_start "$1" $([ -n "${4:-}" ] && faketime_env "$4") || { fail "rewound $1 did not start"; return 1; }
	ready "$2" || { fail "rewound $1 not ready"; return 1; }
}

# caught_up STANDBY_PORT PRIMARY_PORT: the standby has replayed everything
# the primary had written when this was called (SHARDID_DRIVE_LIMIT)
caught_up() {
	local lsn
	lsn=$(q_at "$2" -c "SELECT pg_current_wal_lsn()") || return 1
	wait_until "the standby on port $1 replaying the primary's WAL up to $lsn" \
		replayed_to "$1" "$lsn"
}
replayed_to() { [ "$(q_at "$1" -c "SELECT pg_last_wal_replay_lsn() >= '$2'" 2>/dev/null)" = t ]; }
