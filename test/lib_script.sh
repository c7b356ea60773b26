# test/lib_script.sh: helpers for the scripts under test/session and
# test/strict, which test/run.sh runs against a running cluster (PGHOST,
# PGPORT, PGDATABASE set).  Source it.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
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
# port here; test/cluster/lib.bash makes it database app of its servers).
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
mallory_conn() { echo "port=$1 user=postgres"; }
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
declare -A mallory_hits0
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
