# test/failover/common.bash: helpers for the scripts in test/failover, which
# start servers of their own (test/lib.sh) and crash them for real.  Source
# it from a script; it is not a test itself.
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
SHARDID_TMP=""		# its own directory and servers, removed at exit
. test/lib_script.sh
chmod 777 "$SHARDID_TMP"

need_faketime

# Strict mode: preloaded before PostgreSQL 17, the shared memory registry
# (no preloading) from 17 on, so that both ways are tested.
if [ "$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')" -ge 17 ]; then
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
