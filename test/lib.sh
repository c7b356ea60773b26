# test/lib.sh: throwaway PostgreSQL clusters for shardid's demo, tests and
# benchmarks.  Source it; every cluster it starts lives in one temporary
# directory, listens only on a private Unix socket and port, runs as the
# "postgres" OS user when we are root (PostgreSQL refuses to run as root),
# and is stopped and removed when the calling script exits, even on failure.

set -u

PG_CONFIG=${PG_CONFIG:-pg_config}
PG_BIN=$("$PG_CONFIG" --bindir)
# a script run by test/run.sh works in the runner's directory and clusters,
# which the runner cleans up
if [ -n "${SHARDID_TMP:-}" ]; then
	shardid_owner=0
else
	shardid_owner=1
	SHARDID_TMP=$(mktemp -d "${TMPDIR:-/tmp}/shardid.XXXXXX")
	chmod 755 "$SHARDID_TMP"
fi
# a private port per run, so parallel runs and a local server do not clash
SHARDID_PORT_BASE=${SHARDID_PORT_BASE:-$((20000 + $$ % 20000))}

if [ "$(id -u)" = 0 ]; then
	[ $shardid_owner = 1 ] && chown postgres: "$SHARDID_TMP"
	as_pg() { runuser -u postgres -- "$@"; }
else
	as_pg() { "$@"; }
fi

# stop every cluster under the directory, also those a test script started
shardid_cleanup() {
	local pidfile
	for pidfile in "$SHARDID_TMP"/*/postmaster.pid; do
		[ -f "$pidfile" ] || continue
		as_pg "$PG_BIN/pg_ctl" -D "$(dirname "$pidfile")" -m immediate stop >/dev/null 2>&1
	done
	rm -rf "$SHARDID_TMP"
}
if [ $shardid_owner = 1 ]; then
	trap shardid_cleanup EXIT
	trap 'exit 130' INT TERM
fi

# cluster_init NAME PORT [postgresql.conf lines...]
cluster_init() {
	local name=$1 port=$2 dir="$SHARDID_TMP/$1"
	shift 2
	as_pg "$PG_BIN/initdb" -D "$dir" -U postgres -A trust --no-sync >"$SHARDID_TMP/$name.initdb.log" 2>&1 ||
		{ cat "$SHARDID_TMP/$name.initdb.log"; return 1; }
	{
		echo "port = $port"
		echo "listen_addresses = '127.0.0.1'"
		echo "unix_socket_directories = '$SHARDID_TMP'"
		echo "fsync = off"
		echo "max_connections = 40"
		echo "shared_buffers = 256MB"
		echo "max_wal_size = 4GB"
		echo "log_min_messages = warning"
		local line
		for line in "$@"; do echo "$line"; done
	} | as_pg tee -a "$dir/postgresql.conf" >/dev/null
}

# cluster_start NAME [env assignments for the server...]
cluster_start() {
	local name=$1 dir="$SHARDID_TMP/$1"
	shift
	as_pg env "$@" "$PG_BIN/pg_ctl" -D "$dir" -l "$SHARDID_TMP/$name.log" -w -t 60 start >/dev/null ||
		{ tail -20 "$SHARDID_TMP/$name.log"; return 1; }
}

# cluster_stop NAME [smart|fast|immediate]
cluster_stop() {
	as_pg "$PG_BIN/pg_ctl" -D "$SHARDID_TMP/$1" -m "${2:-fast}" -w stop >/dev/null
}

# cluster_conf NAME line: append a setting (takes effect at the next start)
cluster_conf() {
	echo "$2" | as_pg tee -a "$SHARDID_TMP/$1/postgresql.conf" >/dev/null
}

# use_cluster PORT: point libpq (psql, pgbench, pg_regress) at a cluster
use_cluster() {
	export PGHOST="$SHARDID_TMP" PGPORT="$1" PGUSER=postgres PGDATABASE=postgres
}

# q SQL...: run SQL, print bare values, stop on the first error
q() {
	"$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$@"
}
