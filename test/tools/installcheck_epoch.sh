#!/usr/bin/env bash
# `make installcheck` against a configured server whose epoch is not the
# built-in default: a server of its own with shardid.epoch =
# '2025-06-01 00:00:00+00' in postgresql.conf and shardid preloaded, reached
# through PGHOST and PGPORT the way a user points it at theirs.  Every test
# of sql/ and of the mode's suite (test/strict/sql) must pass: what they
# print is relative to the epoch in force.  And the suite must leave the
# user's server as it found it: the server's first ids are the suite's, and
# the epoch the server remembers for its ids must be its own (a test that
# made them under another epoch would leave next_id() refusing the server's
# epoch).  Needs the extension installed into the server PG_CONFIG names
# (make install; test/run.sh's caller does).
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh servers

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
if ! make -s -C "$work" PG_CONFIG="$PG_CONFIG" installcheck >"$SHARDID_TMP/installcheck.log" 2>&1; then
	cat "$SHARDID_TMP/installcheck.log"
	for d in "$work/regression.diffs" "$work"/test/tmp/installcheck-*/regression.diffs; do
		[ -f "$d" ] && cat "$d"
	done
	fail "make installcheck against a server whose epoch is 2025-06-01"
fi
# "ok N - NAME" (PostgreSQL 16+) or "test NAME ... ok" (15)
passed=$(grep -Ec '^(ok +[0-9]+ +- |test .* \.\.\. +ok)' "$SHARDID_TMP/installcheck.log")
tests=$(ls sql/*.sql test/strict/sql/*.sql | wc -l)
echo "make installcheck: $passed of $tests tests passed"
expect "$passed" = "$tests" "tests of sql/ and test/strict/sql passed"
q -c "CREATE EXTENSION shardid"
expect "$(q -c "SET timezone = 'UTC'" -c "SELECT ids_epoch FROM shardid.info()")" = \
	"2025-06-01 00:00:00+00" "the epoch the server remembers for its ids after the suite"
finish
