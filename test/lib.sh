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
# a private port per run, so parallel runs and a local server do not clash;
# a script uses ports within 200 of it (test/run.sh's job pool sets it per
# slot, 200 apart)
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

# the pg_regress of the server PG_CONFIG names (PGXS installs it there)
PG_REGRESS="$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress"

# regress_run INPUTDIR OUTDIR [DBNAME]: the pg_regress suite in
# INPUTDIR/sql and INPUTDIR/expected against the cluster libpq points at
# (use_cluster), with shardid created in DBNAME (shardid_regression).
# Writes one line per test, "ok NAME" or "FAILED NAME", to OUTDIR/outcome,
# plus "FAILED (suite)" when pg_regress failed outside any one test; prints
# pg_regress's output and the diffs when anything failed, and returns
# non-zero then.
regress_run() {
	local dir=$1 out=$2 db=${3:-shardid_regression} tests t status
	tests=$(cd "$dir/sql" && ls *.sql | sed 's/\.sql$//')
	mkdir -p "$out"
	"$PG_REGRESS" --inputdir="$dir" --outputdir="$out" --bindir="$PG_BIN" \
		--load-extension=shardid --dbname="$db" $tests >"$out/log" 2>&1
	status=$?
	: >"$out/outcome"
	for t in $tests; do
		# "test NAME ... ok" (PG < 16) or "ok N - NAME" (PG 16+)
		if grep -Eq "^(test +$t +\.\.\. +ok|ok +[0-9]+ +- +$t( |$))" "$out/log"; then
			echo "ok $t" >>"$out/outcome"
		else
			echo "FAILED $t" >>"$out/outcome"
		fi
	done
	if [ $status != 0 ] && ! grep -q "^FAILED" "$out/outcome"; then
		echo "FAILED (suite)" >>"$out/outcome"
	fi
	if grep -q "^FAILED" "$out/outcome"; then
		cat "$out/log"
		[ -f "$out/regression.diffs" ] && cat "$out/regression.diffs"
		return 1
	fi
	return 0
}

# server_mode: how shardid stamps on the cluster libpq points at, which
# decides the suites to run there: "strict" (preloaded), "strict-dsm" (not
# preloaded, PG 17+: shared memory from the registry) or "session" (not
# preloaded, PG < 17).  Asks the server without loading shardid.
server_mode() {
	q -d postgres -c "SELECT CASE
		WHEN 'shardid' = ANY (string_to_array(replace(current_setting('shared_preload_libraries'), ' ', ''), ','))
			THEN 'strict'
		WHEN current_setting('server_version_num')::int >= 170000 THEN 'strict-dsm'
		ELSE 'session' END"
}
