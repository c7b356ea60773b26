#!/usr/bin/env bash
# test/run.sh: shardid's whole test suite on throwaway clusters.
#
#   0. the pure core outside the server: unit test and fuzzing (test/unit);
#   1. a server without shardid preloaded (session mode): the pg_regress
#      suite in sql/ and expected/, then the scripts in test/session/;
#   2. the same server restarted with shared_preload_libraries = 'shardid'
#      (strict mode): the pg_regress suite in test/strict/, then the scripts
#      in test/strict/*.sh;
#   3. logical shards on three servers: 64 shards, 8 writers, one shard
#      moved offline and one online (test/cluster/move.sh);
#   4. both pg_regress suites again with the undefined-behaviour sanitizer
#      and with the server under valgrind memcheck (test/sanitize.sh).
#
# Run it through `make test`, which installs what is missing and builds and
# installs the extension first.  It ends with "N passed, N failed, N
# skipped" and exits non-zero when anything failed.  SHARDID_TESTS=pattern
# runs only the scripts whose name matches; FUZZ_SECONDS sets the fuzzing
# time (default 60).  A script that exits 77 is skipped (it says why).
cd "$(dirname "$0")/.." || exit 1
. test/lib.sh

PG_REGRESS="$(dirname "$("$PG_CONFIG" --pgxs)")/../test/regress/pg_regress"
passed=0
failed=0
skipped=0
failures=""

record() {	# record NAME STATUS
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
		echo "ok      $1"
	elif [ "$2" = 77 ]; then
		skipped=$((skipped + 1))
		echo "skipped $1"
	else
		failed=$((failed + 1))
		failures="$failures $1"
		echo "FAILED  $1"
	fi
}

# regress_suite LABEL INPUTDIR: each pg_regress test counts once
regress_suite() {
	local label=$1 dir=$2 out="$SHARDID_TMP/regress-$1" tests t status
	tests=$(cd "$dir/sql" && ls *.sql | sed 's/\.sql$//')
	mkdir -p "$out"
	"$PG_REGRESS" --inputdir="$dir" --outputdir="$out" --bindir="$PG_BIN" \
		--load-extension=shardid --dbname=shardid_regression $tests >"$out/log" 2>&1
	status=$?
	# "test NAME ... FAILED" (PG < 16) or "not ok N - NAME" (PG 16+)
	for t in $tests; do
		if grep -Eq "^(test +$t +\.\.\. +FAILED|not ok +[0-9]+ +- +$t( |$))" "$out/log"; then
			record "regress/$label/$t" 1
		else
			record "regress/$label/$t" 0
		fi
	done
	if [ $status != 0 ]; then
		cat "$out/log"
		[ -f "$out/regression.diffs" ] && cat "$out/regression.diffs"
		# a failure pg_regress did not pin on one test
		grep -Eq "^(test .*FAILED|not ok)" "$out/log" || record "regress/$label" 1
	fi
}

# scripts DIR: each script runs in a fresh database
scripts() {
	local s name
	for s in "$1"/*.sh; do
		[ -e "$s" ] || continue
		name=${s#test/}
		selected "$name" || continue
		q -c "CREATE DATABASE shardid_script" >/dev/null
		PGDATABASE=shardid_script q -c "CREATE EXTENSION shardid" >/dev/null
		echo "--- $name"
		PGDATABASE=shardid_script bash "$s"
		record "$name" $?
		q -c "DROP DATABASE shardid_script WITH (FORCE)" >/dev/null
	done
}

selected() { case "$1" in *${SHARDID_TESTS:-}*) return 0 ;; esac; return 1; }

if selected unit/core; then
	echo "== the pure core (test/unit)"
	bash test/unit/run.sh
	record unit/core $?
fi

port=$SHARDID_PORT_BASE
cluster_init main "$port" || exit 1
use_cluster "$port"
export SHARDID_TMP SHARDID_CLUSTER=main

echo "== session mode (shardid not preloaded)"
cluster_start main || exit 1
regress_suite session .
scripts test/session

echo "== strict mode (shared_preload_libraries = 'shardid')"
cluster_stop main
cluster_conf main "shared_preload_libraries = 'shardid'"
cluster_start main || exit 1
[ -d test/strict/sql ] && regress_suite strict test/strict
scripts test/strict

cluster_stop main

if selected cluster/move; then
	echo "== logical shards on three servers (test/cluster/move.sh)"
	SHARDID_TMP="" bash test/cluster/move.sh
	record cluster/move $?
fi

if selected sanitize; then
	echo "== pg_regress under UBSan and valgrind (test/sanitize.sh)"
	SHARDID_TMP="" bash test/sanitize.sh
	record sanitize $?
fi
echo
[ -n "$failures" ] && echo "failed:$failures"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
