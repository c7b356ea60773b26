#!/usr/bin/env bash
# `make installcheck` against a configured server whose epoch is not the
# built-in default: a server of its own with shardid.epoch =
# '2025-06-01 00:00:00+00' in postgresql.conf and shardid preloaded, reached
# through PGHOST and PGPORT the way a user points it at theirs.  Every test
# of sql/ and of the mode's suite (test/strict/sql) must pass: what they
# print is relative to the epoch in force.  Needs the extension installed
# into the server PG_CONFIG names (make install; test/run.sh's caller does).
cd "$(dirname "$0")/../.." || exit 1
. test/lib_script.sh

port=$((SHARDID_PORT_BASE + 7))
cluster_init epoch "$port" "shared_preload_libraries = 'shardid'" \
	"shardid.epoch = '2025-06-01 00:00:00+00'" || exit 1
cluster_start epoch || exit 1
use_cluster "$port"
expect "$(q -c "SHOW shardid.epoch")" = "2025-06-01 00:00:00+00" "the server's epoch"

# pg_regress writes its results under test/tmp (make installcheck's
# outputdir for the mode's suite) and the source directory: a copy of the
# tree keeps the runs of two servers (and a developer's) apart
work="$SHARDID_TMP/tree"
mkdir -p "$work"
cp -a Makefile shardid.control sql expected "$work"/
mkdir -p "$work/test"
cp -a test/strict test/session "$work/test/"
chmod -R a+rwX "$work"
if ! make -s -C "$work" PG_CONFIG="$PG_CONFIG" installcheck >"$SHARDID_TMP/installcheck.log" 2>&1; then
	cat "$SHARDID_TMP/installcheck.log"
	for d in "$work/regression.diffs" "$work"/test/tmp/installcheck-*/regression.diffs; do
		[ -f "$d" ] && cat "$d"
	done
	fail "make installcheck against a server whose epoch is 2025-06-01"
else
	grep -Ec '^(ok|test) ' "$SHARDID_TMP/installcheck.log" | sed 's/$/ tests passed/'
fi
expect "$(q -c "SHOW shardid.epoch")" = "2025-06-01 00:00:00+00" "the server's epoch after the suite"
finish
