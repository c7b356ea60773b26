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
