# test/lib.sh: the one library of shardid's demo, tests and benchmarks:
# throwaway PostgreSQL servers and what the test scripts share.  Every
# server it starts lives in one temporary directory, listens only on a
# private Unix socket and port, runs as the "postgres" OS user when we are
# root (PostgreSQL refuses to run as root), and is stopped and removed when
# the calling script exits, even on failure.
#
# Source it with the kind of script that uses it (each kind's setup runs
# then; every function below is there for every kind):
#
#   . test/lib.sh servers     the runner, the demo, the benchmarks and the
#                             scripts test/run.sh runs against its running
#                             server (PGHOST, PGPORT, PGDATABASE set); a
#                             script that sets SHARDID_TMP="" first gets a
#                             directory and servers of its own
#   . test/lib.sh failover    a directory and servers of its own, in strict
#                             mode ($strict_conf), libfaketime required
#                             (test/failover)
#   . test/lib.sh cluster     a directory and servers of its own for
#                             shardid-move ($move, conn, on, move_servers,
#                             a move paused at a pause point; test/cluster)
#   . test/lib.sh citus       a Citus coordinator and two workers
#                             (citus_start; test/citus); exits 77 (skipped)
#                             where Citus cannot be built
#   . test/lib.sh packages    the package tests: root, Debian's server
#                             (test/packages); exits 77 otherwise
#
# The kinds but servers change to the checkout's top directory first.
# Parts below: servers (cluster_init, q, regress_run, server_mode);
# assertions and drivers (fail, expect, wait_until, faketime_env,
# borrow_ahead, reload_conf); the hostile roles (mallory, attacker_setup);
# failover (app_server, standby_of, rewind_to, caught_up); moves
# (move_servers, move_paused); Citus (citus_start, writers); packages
# (smoke).

set -u
shardid_kind=${1:?"test/lib.sh KIND: servers, failover, cluster, citus or packages"}
case $shardid_kind in
servers | packages) ;;
failover | cluster | citus)
	cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 1
	SHARDID_TMP=""		# its own directory and servers, removed at exit
	;;
*) echo "test/lib.sh: unknown kind '$shardid_kind' (servers, failover, cluster, citus or packages)" >&2; exit 1 ;;
esac

if [ "$shardid_kind" = citus ]; then
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
fi

# ---- servers

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
# SHARDID_PORT_BASE: the first port of this run's servers.  A script keeps
# its ports below SHARDID_PORT_BASE + 1000 (test/tools/ports.sh checks the
# scripts; test/run.sh's job pool gives each slot a base 1000 above the
# last).  Unless given, a block of SHARDID_PORT_BLOCKS (default 1) times
# 1000 ports from 20000 up that no other run on this machine holds: a lock
# file per 1000 ports in ${TMPDIR:-/tmp}, held (flock) while this shell and
# what it starts run, servers included, so that runs side by side never
# take each other's ports.
shardid_ports() {
	local want=${SHARDID_PORT_BLOCKS:-1} n i f fd fds
	for ((n = 0; n + want <= 40; n++)); do
		fds=()
		for ((i = n; i < n + want; i++)); do
			f="${TMPDIR:-/tmp}/shardid-ports-$i.lock"
			[ -e "$f" ] || { : >>"$f" && chmod 666 "$f"; } 2>/dev/null
			exec {fd}<"$f" 2>/dev/null || break
			if ! flock -n "$fd"; then
				exec {fd}<&-
				break
			fi
			fds+=("$fd")
		done
		if [ ${#fds[@]} = "$want" ]; then
			SHARDID_PORT_BASE=$((20000 + 1000 * n))
			return
		fi
		for fd in "${fds[@]}"; do exec {fd}<&-; done
	done
	SHARDID_PORT_BASE=$((20000 + $$ % 20000))	# every block held: by chance
}
[ -n "${SHARDID_PORT_BASE:-}" ] || shardid_ports

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

# ---- assertions and drivers
script_failed=0

fail() { echo "FAIL: $*"; script_failed=1; }
# expect A = B what / expect A != B what
expect() {
	if [ "$2" = "=" ] && [ "$1" != "$3" ]; then fail "$4: got '$1', want '$3'"; fi
	if [ "$2" = "!=" ] && [ "$1" = "$3" ]; then fail "$4: got '$1', want anything else"; fi
	return 0
}
expect_le() { [ "$1" -le "$2" ] 2>/dev/null || fail "$3: got '$1', want at most $2"; }
expect_ge() { [ "$1" -ge "$2" ] 2>/dev/null || fail "$3: got '$1', want at least $2"; }
finish() { exit "$script_failed"; }

# libfaketime, for servers whose clock is off or steps: need_faketime at
# the top of a script that uses it, then cluster_start NAME $(faketime_env X)
faketime_lib=$(ls /usr/lib/*/faketime/libfaketime.so.1 2>/dev/null | head -1)
need_faketime() {
	[ -n "$faketime_lib" ] && return 0
	fail "libfaketime not installed (Debian package libfaketime; make deps installs it)"
	finish
}
# faketime_env OFFSET|FILE: the environment of a server whose clock reads
# OFFSET from the real one ("-2s", "-1h"), or, given an existing FILE, the
# offset written in it, read again at every call (write "+0", "-0.005",
# "-10" into it to step the clock; make it writable by the server if the
# server writes it).  Monotonic clocks stay real.
faketime_env() {
	[ -n "$faketime_lib" ] || { echo "FAIL: libfaketime not installed (Debian package libfaketime)" >&2; return 1; }
	if [ -f "$1" ]; then
		echo "LD_PRELOAD=$faketime_lib FAKETIME_TIMESTAMP_FILE=$1 FAKETIME_NO_CACHE=1 FAKETIME_DONT_FAKE_MONOTONIC=1"
	else
		echo "LD_PRELOAD=$faketime_lib FAKETIME=$1 FAKETIME_DONT_FAKE_MONOTONIC=1"
	fi
}

# A test never asserts the machine's speed: it drives until its precondition
# holds, within a generous limit (seconds, default 120), and fails with a
# clear message if it never does.
#
# borrow_ahead SHARD TARGET_MS [psql options...]: stamp next_ids(SHARD,
# 1000000) until the shard's newest id is at least TARGET_MS ahead of the
# server's clock, and print the lead reached (and set $lead).  One call
# reserves a million ids in one step, about 977 ms of the shard's time, so
# the lead grows by nearly that per call however slow or loaded the machine
# is (a loop of next_id() calls had to outrun 1,024 ids a millisecond, which
# a loaded 2-core machine did not); the server's shardid.max_lead_ms must
# allow TARGET_MS.  Strict mode (next_ids()).  Fails (and returns 1) when
# the lead is not reached within SHARDID_DRIVE_LIMIT seconds.
borrow_ahead() {
	local shard=$1 target=$2 deadline
	shift 2
	deadline=$(($(date +%s) + ${SHARDID_DRIVE_LIMIT:-120}))
	lead=0
	while [ "$(date +%s)" -lt "$deadline" ]; do
		lead=$(q "$@" -c "
		    SELECT round(extract(epoch FROM shardid.id_time(max(id)) - clock_timestamp()) * 1000)
		    FROM shardid.next_ids($shard, 1000000) AS id") || break
		[ "$lead" -ge "$target" ] && break
	done
	echo "burst: shard $shard borrowed $lead ms ahead of the clock (wanted $target)"
	if [ "$lead" -lt "$target" ] 2>/dev/null || [ -z "$lead" ]; then
		fail "shard $shard never got $target ms ahead of the clock in ${SHARDID_DRIVE_LIMIT:-120} s (best: $lead ms)"
		return 1
	fi
}

# wait_until WHAT COMMAND...: run COMMAND every 0.1 s until it succeeds;
# fail with "WHAT" (and return 1) when it has not within SHARDID_DRIVE_LIMIT
# seconds
wait_until() {
	local what=$1 deadline
	shift
	deadline=$(($(date +%s) + ${SHARDID_DRIVE_LIMIT:-120}))
	until "$@"; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			fail "$what: not reached in ${SHARDID_DRIVE_LIMIT:-120} s"
			return 1
		fi
		sleep 0.1
	done
}

# reload_conf [psql options...]: pg_reload_conf(), then wait until new
# sessions start with the configuration read again (the postmaster has
# read it), instead of sleeping a while
reload_conf() {
	local before
	before=$(q "$@" -c "SELECT pg_conf_load_time()")
	q "$@" -c "SELECT pg_reload_conf()" >/dev/null
	wait_until "new sessions with the reloaded configuration" conf_newer "$before" "$@"
}
conf_newer() {	# conf_newer TIME [psql options...]: a new session's configuration was read after TIME
	local before=$1
	shift
	[ "$(q "$@" -c "SELECT pg_conf_load_time() > '$before'")" = t ]
}

# reload_in_session: psql input (for -f -) that reloads the configuration
# and then waits, in the same session, until that session has read it: a
# statement at a time, since a backend reads a reload between statements
# only (at most 5 s; then the caller's assertion fails and says so)
reload_in_session() {
	echo "SELECT pg_catalog.pg_conf_load_time() AS reload_before \\gset"
	echo "SELECT pg_catalog.pg_reload_conf() \\g /dev/null"
	for _ in $(seq 500); do
		echo "SELECT pg_catalog.pg_sleep(0.01) WHERE pg_catalog.pg_conf_load_time() <= :'reload_before' \\g /dev/null"
	done
	echo "SELECT CASE WHEN pg_catalog.pg_conf_load_time() > :'reload_before' THEN 'reloaded' ELSE 'the session did not read the reloaded configuration within 5 s' END \\g /dev/stderr"
}

# mallory, the hostile role of the attack scripts (test/cluster,
# test/security), on any server of the script's by its port.  mallory_conn
# PORT is how to reach the database she works in (libpq's defaults with that
# port; database app of the servers of kind cluster).
#
# mallory_role PORT [escape]: role mallory (LOGIN, no superuser), her schema
# mallory, her counter mallory.hits (a sequence, which no rollback returns)
# and her payload mallory.strike(), no SECURITY DEFINER, so it runs as
# whoever evaluates it: run as a superuser, it takes a number from
# mallory.hits, says so in a WARNING (with the query, in the server's log)
# and makes mallory superuser.  With "escape" it first tries to become the
# superuser again where a superuser SET ROLE or SET SESSION AUTHORIZATION
# mallory to run it (RESET ROLE, SET SESSION AUTHORIZATION DEFAULT).  Her
# other code calls mallory.strike().
# as_mallory PORT psql-args...: psql as mallory (VERBOSITY $mallory_verbosity
# if set: "terse" for errors compared whole)
# mallory_hits PORT: how often her code ran as a superuser there
# mallory_strikes WHAT PORT psql-args...: the test of the test: psql-args
# run by a superuser on PORT run her code (WHAT fails when mallory.hits did
# not move); mallory is no superuser again afterwards
# mallory_mark PORT...: what no_superuser_code compares with from now on,
# for code that a script ran as a superuser on purpose (0 until then)
# mallory_reset PORT...: mallory no superuser again, her counter at 0, after
# an attack that was meant to succeed (on an old client)
# not_superuser ROLE WHAT [psql-args...]: fails WHAT if ROLE is a superuser
# on the server psql-args reach (test/security's attacker_check uses it too)
# no_superuser_code WHAT PORT...: fails the script (naming WHAT and the
# server) if her code ran as a superuser there since the mark, or she is a
# superuser there
mallory_conn() {
	if [ "$shardid_kind" = cluster ]; then conn "$1"; else echo "port=$1 user=postgres"; fi
}
mallory_role() {
	local escape=""
	[ "${2:-}" = escape ] && escape="
    BEGIN EXECUTE 'RESET ROLE'; EXCEPTION WHEN OTHERS THEN NULL; END;
    BEGIN EXECUTE 'SET SESSION AUTHORIZATION DEFAULT'; EXCEPTION WHEN OTHERS THEN NULL; END;"
	q -d "$(mallory_conn "$1")" >/dev/null <<SQL
CREATE ROLE mallory LOGIN;
CREATE SCHEMA mallory AUTHORIZATION mallory;
SET ROLE mallory;
CREATE SEQUENCE mallory.hits;
CREATE FUNCTION mallory.strike() RETURNS boolean LANGUAGE plpgsql AS \$\$
BEGIN$escape
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) current_user) THEN
        PERFORM pg_catalog.nextval('mallory.hits');
        RAISE WARNING 'mallory.strike() as superuser %: %', current_user, pg_catalog.current_query();
        BEGIN EXECUTE 'ALTER ROLE mallory SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END;
    END IF;
    RETURN true;
END \$\$;
RESET ROLE;
SQL
}
as_mallory() {
	local p=$1
	shift
	q -v VERBOSITY="${mallory_verbosity:-default}" -d "$(mallory_conn "$p") user=mallory" "$@"
}
mallory_hits() {
	q -d "$(mallory_conn "$1")" -c "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM mallory.hits"
}
mallory_strikes() {
	local what=$1 p=$2 before
	shift 2
	before=$(mallory_hits "$p")
	q -d "$(mallory_conn "$p")" "$@" >/dev/null 2>&1
	expect "$(mallory_hits "$p")" != "$before" "$what (test of the test)"
	q -d "$(mallory_conn "$p")" -c "ALTER ROLE mallory NOSUPERUSER" >/dev/null
}
declare -gA mallory_hits0
mallory_mark() {
	local p
	for p; do mallory_hits0[$p]=$(mallory_hits "$p"); done
}
mallory_reset() {
	local p
	for p; do
		q -d "$(mallory_conn "$p")" -c "ALTER ROLE mallory NOSUPERUSER" -c "SELECT setval('mallory.hits', 1, false)" >/dev/null
		mallory_hits0[$p]=0
	done
}
not_superuser() {
	local role=$1 what=$2
	shift 2
	expect "$(q "$@" -c "SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = '$role'")" = f "$what"
}
no_superuser_code() {
	local what=$1 p
	shift
	for p; do
		expect "$(mallory_hits "$p")" = "${mallory_hits0[$p]:-0}" "$what: her code ran as a superuser on server $p"
		not_superuser mallory "$what: mallory superuser on server $p" -d "$(mallory_conn "$p")"
	done
}

# ---- the attacker of test/security
# attacker_setup ROLE: creates ROLE (no superuser) with a schema of the same
# name, a counter ROLE.ran that no rollback undoes (a sequence), and
# ROLE.hit(), which counts a call and, when it runs as a superuser, makes
# ROLE a superuser.  Every payload calls ROLE.hit().
# attacker_check ROLE WHAT: fails the script if any payload of ROLE ran as
# a superuser (ROLE became one) or ran at all (the counter moved), where
# the caller expects it not to; prints the count.

attacker_setup() {
	local role=$1
	q -d postgres -c "DO \$\$BEGIN CREATE ROLE $role LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END\$\$"
	q <<SQL
CREATE SCHEMA IF NOT EXISTS $role AUTHORIZATION $role;
GRANT USAGE ON SCHEMA $role TO PUBLIC;
SET ROLE $role;
CREATE SEQUENCE $role.ran;
GRANT USAGE, UPDATE ON SEQUENCE $role.ran TO PUBLIC;
CREATE FUNCTION $role.hit() RETURNS boolean LANGUAGE plpgsql AS \$f\$
BEGIN
    PERFORM pg_catalog.nextval('$role.ran');
    IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r WHERE r.rolname OPERATOR(pg_catalog.=) current_user) THEN
        EXECUTE 'ALTER ROLE $role SUPERUSER';
    END IF;
    RETURN true;
END \$f\$;
GRANT EXECUTE ON FUNCTION $role.hit() TO PUBLIC;
RESET ROLE;
SQL
}

attacker_runs() {	# attacker_runs ROLE: how often its payloads ran
	q -c "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM $1.ran"
}

attacker_check() {	# attacker_check ROLE WHAT
	not_superuser "$1" "$2: $1 is no superuser" -d postgres
	expect "$(attacker_runs "$1")" = 0 "$2: payloads of $1 that ran"
}

# strict_server NAME PORT: start a server of the script's own in strict mode
# (preloaded before PostgreSQL 17, the shared memory registry from 17) with
# database "app", and point libpq at it.  For attacks that spoil the
# server-wide high-water mark when they succeed.
strict_server() {
	local conf="shared_preload_libraries = 'shardid'"
	[ "$("$PG_CONFIG" --version | sed 's/^PostgreSQL \([0-9]*\).*/\1/')" -ge 17 ] &&
		conf="# strict mode through the shared memory registry"
	cluster_init "$1" "$2" "$conf" || exit 1
	cluster_start "$1" || exit 1
	use_cluster "$2"
	q -c "CREATE DATABASE app" >/dev/null
}

# ---- failover: servers crashed, promoted and rewound for real

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

# Sessions ordered by what they hold or wait for in pg_locks, never by
# sleeps, on the server on $port (database app):
# interleave_sql: psql input (shardid created) for public.ahead(s, ms), an
# id of shard s ms ahead of the clock; public.await(cond), which waits (up
# to 60 s) until query cond returns true; public.waits(rel), whether a
# session waits for a lock on relation rel (NULL: for registration's turn,
# an object lock with objsubid 21316, src/floor.c); public.holds(rel, mode);
# and table public.gate (name), which sessions await rows of
interleave_sql() {
	cat <<'SQL'
CREATE FUNCTION public.ahead(s int, ms int) RETURNS bigint LANGUAGE sql AS
$$ SELECT shardid.make_id(shardid.id_millis(shardid.min_id(clock_timestamp())) + ms, s, 0) $$;
CREATE FUNCTION public.await(cond text) RETURNS void LANGUAGE plpgsql AS
$$ DECLARE ok boolean; BEGIN
   FOR i IN 1..1200 LOOP
       EXECUTE cond INTO ok;
       EXIT WHEN ok;
       PERFORM pg_sleep(0.05);
   END LOOP; END $$;
CREATE FUNCTION public.waits(rel regclass) RETURNS boolean LANGUAGE sql AS
$$ SELECT EXISTS (SELECT FROM pg_locks l WHERE NOT l.granted AND
                  (l.relation = rel OR rel IS NULL AND l.locktype = 'object' AND l.objsubid = 21316)) $$;
CREATE FUNCTION public.holds(rel regclass, m text) RETURNS boolean LANGUAGE sql AS
$$ SELECT EXISTS (SELECT FROM pg_locks l WHERE l.granted AND l.relation = rel AND l.mode = m) $$;
CREATE TABLE public.gate (name text);
GRANT SELECT ON public.gate TO PUBLIC;
SQL
}
# session NAME SQL: SQL in the background, its output in $SHARDID_TMP/NAME.out
session() {
	q_at "$port" -c "$2" >"$SHARDID_TMP/$1.out" 2>&1 &
}
# session_out NAME: that output on one line
session_out() { tr '\n' ' ' <"$SHARDID_TMP/$1.out" | sed 's/  */ /g; s/ $//'; }
# sessions_clean [-w] NAME...: each session printed, and ended without an
# error (-w: nor a warning)
sessions_clean() {
	local s pattern=ERROR what="an error"
	[ "$1" = -w ] && { pattern='ERROR\|WARNING'; what="an error or a warning"; shift; }
	for s in "$@"; do
		echo "$s: $(session_out "$s")"
		expect "$(grep -c "$pattern" "$SHARDID_TMP/$s.out")" = 0 "$s ends without $what"
	done
}
# holds REL MODE, waits_for REL: a session does, now
holds() { [ "$(q_at "$port" -c "SELECT public.holds('$1', '$2')")" = t ]; }
waits_for() { [ "$(q_at "$port" -c "SELECT public.waits('$1')")" = t ]; }

# caught_up STANDBY_PORT PRIMARY_PORT: the standby has replayed everything
# the primary had written when this was called (SHARDID_DRIVE_LIMIT)
caught_up() {
	local lsn
	lsn=$(q_at "$2" -c "SELECT pg_current_wal_lsn()") || return 1
	wait_until "the standby on port $1 replaying the primary's WAL up to $lsn" \
		replayed_to "$1" "$lsn"
}
replayed_to() { [ "$(q_at "$1" -c "SELECT pg_last_wal_replay_lsn() >= '$2'" 2>/dev/null)" = t ]; }

# ---- moves (test/cluster): a move paused at a pause point (SHARDID_MOVE_PAUSE_AT)
# pauses while $marker exists; $pid is the move still running, killed at exit
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

conn() { echo "host=$SHARDID_TMP port=$1 user=postgres dbname=app"; }
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

# move_differs LABEL FROM TO LOG STATUS SHARD TABLE ROWS: the move (its
# output in LOG, exit status STATUS) failed on its verification naming
# table TABLE of shard SHARD (ROWS rows on each server), and was undone:
# no copy on the server on port TO, the shard registered on FROM
move_differs() {
	local label=$1 from=$2 to=$3 log=$4 status=$5 shard=$6 table=$7 rows=$8 schema
	schema=shard_$(printf '%04d' "$shard")
	sed 's/^/  | /' "$log"
	expect "$status" = 1 "$label: exit status"
	grep -qxF "shardid-move: error: the rows of table \"$schema\".\"$table\" differ between the --from server and the --to server: $rows rows on each, but the hashes of their contents differ" "$log" ||
		fail "$label: the difference not reported, naming the table"
	expect "$(on "$to" -c "SELECT count(*) FROM pg_namespace WHERE nspname = '$schema'")" = 0 "$label: the copy left on the --to server"
	expect "$(on "$from" -c "SELECT shardid.shard_schema($shard)")" = "$schema" "$label: shard $shard registered on the --from server"
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

# ---- Citus (test/citus, test/bench/citus.sh)

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

# shapes_sql TABLE ROUNDS TAG: a psql script that inserts into TABLE
# (columns id, v, tag; no id given) ROUNDS times in every statement shape:
# one-row and multi-row VALUES, a prepared statement, COPY, INSERT ...
# SELECT from a table of the same tenant (tenant_7.src, 3 rows) and from a
# reference table (public.ref, 3 rows), ON CONFLICT DO NOTHING, RETURNING.
# 14 rows a round.
shapes_sql() {
	local tab=$1 rounds=$2 tag=$3 i
	echo "\\set ON_ERROR_STOP 1"
	echo "PREPARE ins(int) AS INSERT INTO $tab (v, tag) VALUES (\$1, '$tag');"
	for i in $(seq "$rounds"); do
		echo "INSERT INTO $tab (v, tag) VALUES ($i, '$tag');"
		echo "INSERT INTO $tab (v, tag) VALUES ($i, '$tag'), ($i, '$tag');"
		echo "EXECUTE ins($i);"
		echo "COPY $tab (v, tag) FROM STDIN;"
		printf '%s\t%s\n%s\t%s\n\\.\n' "$i" "$tag" "$i" "$tag"
		echo "INSERT INTO $tab (v, tag) SELECT v, '$tag' FROM tenant_7.src;"
		echo "INSERT INTO $tab (v, tag) SELECT v, '$tag' FROM public.ref;"
		echo "INSERT INTO $tab (v, tag) VALUES ($i, '$tag') ON CONFLICT DO NOTHING;"
		echo "INSERT INTO $tab (v, tag) VALUES ($i, '$tag') RETURNING id \\g /dev/null"
	done
}

# writers TABLE ROUNDS PORT...: one client per PORT given (repeat a port for
# several clients on a node), all at once, each running shapes_sql; waits
# for them and prints how many failed; their errors go to
# $SHARDID_TMP/writer.N.err
writers() {
	local tab=$1 rounds=$2 n=0 port pids=() failed=0 pid
	shift 2
	for port in "$@"; do
		n=$((n + 1))
		shapes_sql "$tab" "$rounds" "c$n" >"$SHARDID_TMP/writer.$n.sql"
		at "$port" -f "$SHARDID_TMP/writer.$n.sql" >/dev/null 2>"$SHARDID_TMP/writer.$n.err" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || failed=$((failed + 1))
	done
	echo "$failed"
}

# ---- packages (test/packages)

# shardid_files: every file of shardid in the server's directories (the
# man page of shardid-move too)
shardid_files() {
	find "$("$PG_CONFIG" --pkglibdir)" "$("$PG_CONFIG" --sharedir)/extension" "$("$PG_CONFIG" --bindir)" \
		"$("$PG_CONFIG" --mandir)/man1" -name '*shardid*' 2>/dev/null | sort
}

# uninstall_source_build: remove what `make install` put there (the suites
# before installed the checkout's build); nothing of shardid may remain
uninstall_source_build() {
	make -s uninstall PG_CONFIG="$PG_CONFIG" >/dev/null 2>&1
	expect "$(shardid_files)" = "" "shardid files left by make install after make uninstall"
}

# smoke LABEL: a throwaway cluster of the server; the default version
# installs and makes an id that decodes to its shard
smoke() {
	local port=$((SHARDID_PORT_BASE + 90)) version
	version=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" shardid.control)
	cluster_init "smoke$2" "$port" || { fail "$1: initdb"; return; }
	cluster_start "smoke$2" || { fail "$1: server start"; return; }
	expect "$(PGHOST=$SHARDID_TMP PGPORT=$port PGUSER=postgres q -d postgres -F' ' \
		-c "CREATE EXTENSION shardid" \
		-c "SELECT extversion, shardid.id_shard(shardid.next_id(42, 7)) FROM pg_extension WHERE extname = 'shardid'")" \
		= "$version 42" "$1: CREATE EXTENSION shardid and an id of shard 42"
	cluster_stop "smoke$2"
}

# ---- each kind's setup

case $shardid_kind in
failover | cluster | citus) chmod 777 "$SHARDID_TMP" ;;
esac
case $shardid_kind in
failover)
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
	;;
cluster)
	# $move: $SHARDID_MOVE, else the installed one, else the checkout's
	move=${SHARDID_MOVE:-"$PG_BIN/shardid-move"}
	[ -x "$move" ] || move=src/move/shardid-move
	marker="$SHARDID_TMP/paused"
	pid=""
	trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; shardid_cleanup' EXIT
	# what an online move needs of both servers
	LOGICAL=("wal_level = logical" "max_wal_senders = 10" "max_replication_slots = 10")
	;;
citus)
	citus_install_shardid
	# the nodes: coordinator, two workers
	COORD=$SHARDID_PORT_BASE
	W1=$((SHARDID_PORT_BASE + 1))
	W2=$((SHARDID_PORT_BASE + 2))
	declare -gA node_port=([coord]=$COORD [w1]=$W1 [w2]=$W2)
	declare -gA node_env=()
	;;
packages)
	# They install into the server PG_CONFIG names (Debian's PostgreSQL, as
	# root): run them on a machine whose PostgreSQL nobody else uses
	# meanwhile (.ci/run runs them last).
	[ "$(id -u)" = 0 ] || { echo "skipped: the package tests install packages and run as root"; exit 77; }
	case "$("$PG_CONFIG" --bindir)" in
	/usr/lib/postgresql/*) ;;
	*) echo "skipped: $PG_CONFIG is not a server from Debian's packages"; exit 77 ;;
	esac
	pg_major=$("$PG_CONFIG" --version | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
	pkg_tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-pkg.XXXXXX")
	chmod 755 "$pkg_tmp"
	trap 'rm -rf "$pkg_tmp"; shardid_cleanup' EXIT
	;;
esac
