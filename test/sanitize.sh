#!/usr/bin/env bash
# test/sanitize.sh: the pg_regress suites (session and strict mode) under
# two checkers, each on a throwaway server:
#   1. undefined behaviour: shardid built with -fsanitize=undefined (its
#      runtime comes in with the library), any "runtime error" fails;
#   2. memory errors: the server run under valgrind memcheck, any error
#      whose stack passes through shardid.so fails (but for PostgreSQL's
#      own, listed in test/valgrind.supp, and for the frames of shardid's
#      planner, executor and utility hooks where they only call
#      PostgreSQL's own).
# (AddressSanitizer cannot be used: preloading its runtime into Debian's
# postgres deadlocks in glibc's bindtextdomain() before main() gets going.)
# The regular build is installed again at the end.
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh servers

command -v valgrind >/dev/null ||
	{ echo "skipped: needs valgrind (Debian package valgrind; make deps installs it)"; exit 77; }
status=0
restore_build() { make -s clean && make -s PG_CONFIG="$PG_CONFIG" install >/dev/null; }
trap 'restore_build; shardid_cleanup' EXIT

run_suite() {	# run_suite LABEL INPUTDIR
	local out="$SHARDID_TMP/out-${1//\//-}"
	regress_run "$2" "$out" shardid_check 2>&1 | head -60
	grep -q "^FAILED" "$out/outcome" && status=1
	echo "$1: $(grep -c "^ok" "$out/outcome") of $(wc -l <"$out/outcome") pg_regress tests passed"
}

# the suites of a server without shardid preloaded: sql/ and the mode's own
unpreloaded_suites() {	# unpreloaded_suites NAME
	local mode
	mode=$(server_mode)
	run_suite "$1/$mode" .
	if [ "$mode" = session ]; then
		[ -d test/session/sql ] && run_suite "$1/$mode" test/session
	else
		run_suite "$1/$mode" test/strict
	fi
}

# both suites on a server started with the given wrapper and settings
suites() {	# suites NAME PORT [server env...]
	local name=$1 port=$2
	shift 2
	cluster_init "$name" "$port" || return 1
	use_cluster "$port"
	cluster_start "$name" "$@" || return 1
	unpreloaded_suites "$name"
	cluster_stop "$name"
	cluster_conf "$name" "shared_preload_libraries = 'shardid'"
	cluster_start "$name" "$@" || return 1
	run_suite "$name/strict" test/strict
	cluster_stop "$name"
}

echo "-- undefined behaviour sanitizer"
make -s clean && make -s SANITIZE=1 PG_CONFIG="$PG_CONFIG" install >/dev/null || exit 1
suites ubsan $((SHARDID_PORT_BASE + 7)) UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" || status=1
if grep -q "runtime error:" "$SHARDID_TMP/ubsan.log"; then
	grep -A12 "runtime error:" "$SHARDID_TMP/ubsan.log" | head -60
	status=1
else
	echo "ubsan: no reports"
fi

echo "-- valgrind memcheck"
restore_build
mkdir -p "$SHARDID_TMP/vglogs" && chmod 777 "$SHARDID_TMP/vglogs"
# started directly (pg_ctl would find the real binary), stopped by pg_ctl
vg_start() {	# vg_start NAME
	local dir="$SHARDID_TMP/$1" i
	as_pg sh -c "exec valgrind --quiet --trace-children=yes --error-limit=no --num-callers=30 --suppressions=$PWD/test/valgrind.supp \
		--log-file=$SHARDID_TMP/vglogs/%p.log $PG_BIN/postgres -D $dir >>$SHARDID_TMP/$1.log 2>&1" &
	for i in $(seq 1 120); do
		"$PG_BIN/pg_isready" -q -h "$SHARDID_TMP" -p "$PGPORT" && return 0
		sleep 1
	done
	echo "the server under valgrind did not start"; tail -20 "$SHARDID_TMP/$1.log"
	return 1
}
port=$((SHARDID_PORT_BASE + 8))
cluster_init vg "$port" || exit 1
use_cluster "$port"
if vg_start vg; then
	unpreloaded_suites valgrind
	cluster_stop vg
	cluster_conf vg "shared_preload_libraries = 'shardid'"
	vg_start vg && run_suite valgrind/strict test/strict
	cluster_stop vg
else
	status=1
fi
# our frames: by source file (built with -g) or by object
ours_files=$(cd src && ls *.c *.h | sed 's/[.]/[.]/g' | paste -sd'|' -)
ours_re="\\(($ours_files):[0-9]+\\)|shardid[.]so"
# A report counts when a frame of ours is in its stack, but for the hooks'
# own frames where they only call PostgreSQL's standard function, or the
# next hook of ours that does (every statement passes through them:
# PostgreSQL's reports of its own, such as shared memory another process
# wrote, would otherwise be counted)
ours_in() {	# ours_in LOG: a report of LOG has a frame of ours that is not a hook's call
	OURS_RE=$ours_re awk '
		function flush() { if (n > 0) found = 1; n = 0; prev = ""; passed = 0 }
		/^==[0-9]+== *$/ { flush(); next }
		{
			hook = $0 ~ /(floor_(process_utility|executor_start|executor_end)|citus_(planner|utility|executor_start|executor_run|executor_finish)) / &&
				(passed || prev ~ /standard_(ProcessUtility|ExecutorStart|ExecutorRun|ExecutorFinish|ExecutorEnd|planner) /)
			if ($0 ~ ENVIRON["OURS_RE"] && !hook)
				n++
			passed = hook
			prev = $0
		}
		END { flush(); exit found ? 0 : 1 }' "$1"
}
ours=""
for log in "$SHARDID_TMP"/vglogs/*.log; do
	[ -e "$log" ] && ours_in "$log" && ours="$ours $log"
done
if [ -n "$ours" ]; then
	echo "valgrind reports through shardid.so:"
	# shellcheck disable=SC2086
	grep -B3 -A25 -E "$ours_re" $ours | head -80
	status=1
else
	echo "valgrind: no reports through shardid ($(ls "$SHARDID_TMP"/vglogs | wc -l) processes checked, $(cat "$SHARDID_TMP"/vglogs/*.log | grep -c "^==[0-9]*== [A-Z]") reports elsewhere in the server)"
fi
exit $status
