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
