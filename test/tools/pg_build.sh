#!/usr/bin/env bash
# tools/pg/build.sh when the archive no longer serves a major's source (a
# suite index named postgresql-17 17.12 while its files answered 404): it
# reuses a cached build of any version of that major, falls back to a pinned
# source only when its SHA-256 matches (another file is an error), and when
# nothing can be downloaded exits 77 with the reason on its last line, so
# that CI reports the major as skipped, never as a failure.  Every case searches a suite that carries no postgresql-17
# (bookworm-backports), in a cache of its own; the pinned-source case
# downloads the real 17.11 tarball (22 MB) and gives it a wrong hash.
# Needs root and Debian's archive, as the build itself does.
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh servers
[ "$(id -u)" = 0 ] || { echo "skipped: tools/pg/build.sh runs as root"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-pgbuild.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
export SHARDID_PG_SUITES=bookworm-backports
build() {	# build CACHE SOURCES: run tools/pg/build.sh 17; sets $status, $last, $err
	last=$(SHARDID_PG_CACHE=$1 SHARDID_PG_SOURCES=$2 tools/pg/build.sh 17 2>"$tmp/err" | tail -1)
	status=$?
	err=$(cat "$tmp/err")
}
set -o pipefail
: >"$tmp/none"

# 1. nothing listed, nothing cached, nothing pinned: skipped with the reason
build "$tmp/c1" "$tmp/none"
expect "$status" = 77 "exit status with no source and no cache"
expect "$last" = "unavailable: no source of postgresql-17 could be downloaded (tried: nothing listed) and no build of it is cached in $tmp/c1" "last line"

# 2. a complete build of another 17 in the cache is reused, and said so
prefix=$tmp/c2/pg-17.1-0+deb13u1-cassert
mkdir -p "$prefix/bin"
printf '#!/bin/sh\necho "PostgreSQL 17.1"\n' >"$prefix/bin/pg_config"
chmod +x "$prefix/bin/pg_config"
touch "$prefix/.complete"
mkdir -p "$tmp/c2/pg-17.9-0+deb13u1-cassert/bin"	# incomplete: never used
build "$tmp/c2" "$tmp/none"
expect "$status" = 0 "exit status with a cached build"
expect "$last" = "$prefix/bin/pg_config" "the cached build's pg_config"
echo "$err" | grep -qx "build.sh: using PostgreSQL pg-17.1-0+deb13u1-cassert (assertions on), cached (the archive's source could not be had)" ||
	fail "what build.sh said it used: $err"

# 3. a pinned source whose hash does not match is an error, never built
# and never a skip (a mirror serving another file is not "unavailable")
zeros=$(printf '0%.0s' $(seq 64))
echo "17 17.11-0+deb13u1 postgresql-17_17.11.orig.tar.bz2 $zeros" >"$tmp/wrong"
build "$tmp/c3" "$tmp/wrong"
expect "$status" = 1 "exit status with a pinned source of the wrong hash"
echo "$err" | grep -q "build.sh: postgresql-17_17.11.orig.tar.bz2 from .* has SHA-256 [0-9a-f]*, not the pinned $zeros: refusing to build it" ||
	fail "the wrong hash was not refused: $err"

# 4. a pinned file the archive does not have: skipped with the reason
echo "17 17.0-1 postgresql-17_17.0.orig.tar.bz2 $zeros" >"$tmp/gone"
build "$tmp/c4" "$tmp/gone"
expect "$status" = 77 "exit status with a pinned source the archive does not serve"
expect "$last" = "unavailable: no source of postgresql-17 could be downloaded (tried: 17.0-1) and no build of it is cached in $tmp/c4" "last line"
[ -z "$(find "$tmp/c3" -maxdepth 1 -name "pg-17*-cassert" 2>/dev/null)" ] || fail "something was installed from a source of the wrong hash"
echo "cached build reused; unavailable major skipped with its reason; wrong hash refused as an error"
finish
