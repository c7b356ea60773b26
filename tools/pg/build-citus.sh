#!/usr/bin/env bash
# tools/pg/build-citus.sh [PG_CONFIG]: build Citus for shardid's Citus tests and
# print, on the last line of stdout, the pg_config of a PostgreSQL install
# that has Citus in it.
#
# The source is ../shared/citus/citus-source.tar.gz beside the checkout (or
# beside its parent directory, for a git worktree one level deeper);
# SHARDID_CITUS_TARBALL overrides it.  Citus is licensed AGPL and is never
# copied into the project: this script only builds it at test time.
#
# Citus is installed into a copy of the PostgreSQL install that PG_CONFIG
# (argument or environment) names, never into that install itself: the copy
# lives in $SHARDID_PG_CACHE/citus-<tarball sha256>-pg<version>-<configure
# hash> (default cache /var/cache/shardid, the one tools/pg/build.sh uses), so
# a second run with the same tarball and the same server reuses it and
# builds nothing.  PostgreSQL installs are relocatable, so the copy works
# where it is; the tests then `make install` shardid into it.  Run as root
# (it installs liblz4-dev and libzstd-dev with apt-get when they are
# missing); the copy is world-readable, since test servers run as the
# postgres OS user.  Exit status 77 means Citus cannot be built here (no
# tarball, or a server Citus does not support), so callers can skip.
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
PG_CONFIG=${1:-${PG_CONFIG:-pg_config}}
# ../shared beside the checkout; a worktree one level deeper looks one up too
tarball=${SHARDID_CITUS_TARBALL:-}
if [ -z "$tarball" ]; then
	for d in "$here/../../../shared" "$here/../../../../shared"; do
		if [ -f "$d/citus/citus-source.tar.gz" ]; then
			tarball=$d/citus/citus-source.tar.gz
			break
		fi
	done
	tarball=${tarball:-$here/../../../shared/citus/citus-source.tar.gz}
fi
cache=${SHARDID_PG_CACHE:-/var/cache/shardid}
jobs=${SHARDID_BUILD_JOBS:-2}
log() { echo "build-citus.sh: $*" >&2; }

[ -f "$tarball" ] || {
	log "no Citus source at $tarball"
	exit 77
}
command -v "$PG_CONFIG" >/dev/null 2>&1 || [ -x "$PG_CONFIG" ] || {
	log "no pg_config at $PG_CONFIG"
	exit 77
}
pgversion=$("$PG_CONFIG" --version | awk '{ print $2 }')
major=${pgversion%%.*}
major=${major%%[!0-9]*}
# Citus main supports PostgreSQL 16 to 18
if [ "$major" -lt 16 ] || [ "$major" -gt 18 ]; then
	log "Citus does not support PostgreSQL $pgversion"
	exit 77
fi
pgprefix=$(cd "$("$PG_CONFIG" --bindir)/.." && pwd)

sum=$(sha256sum "$tarball" | cut -c1-16)
flags=$("$PG_CONFIG" --configure | sha256sum | cut -c1-8)
key=citus-$sum-pg$pgversion-$flags
prefix=$cache/$key
mkdir -p "$cache"
exec 9>"$cache/citus.lock"
flock 9

if [ -x "$prefix/bin/pg_config" ] && [ -f "$prefix/.complete" ]; then
	log "reusing Citus in $prefix"
	echo "$prefix/bin/pg_config"
	exit 0
fi

missing=""
for p in gcc make liblz4-dev libzstd-dev; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	log "missing Debian packages:$missing; install them first (make deps, as root)"
	exit 1
fi

start=$(date +%s)
work=$cache/build-$key
rm -rf "$work" "$prefix"
mkdir -p "$work"
log "copying PostgreSQL $pgversion from $pgprefix"
# built in place (libraries keep the paths they were linked with); .complete
# marks a finished build
cp -a "$pgprefix" "$prefix"
rm -f "$prefix/.complete"
cd "$work"
tar xzf "$tarball"
cd citus
log "configuring Citus ($(sha256sum "$tarball" | cut -c1-12)) against PostgreSQL $pgversion"
./configure PG_CONFIG="$prefix/bin/pg_config" >"$work/configure.log" 2>&1 || {
	tail -30 "$work/configure.log" >&2
	grep -q "not supported\|unsupported" "$work/configure.log" && exit 77
	exit 1
}
log "compiling with $jobs jobs (about 4 min on 2 cores)"
make -s -j"$jobs" >"$work/make.log" 2>&1 || {
	tail -40 "$work/make.log" >&2
	exit 1
}
make -s install >"$work/install.log" 2>&1 || {
	tail -40 "$work/install.log" >&2
	exit 1
}
touch "$prefix/.complete"
cd "$cache"
rm -rf "$work"
log "built Citus in $(($(date +%s) - start)) s into $prefix"
echo "$prefix/bin/pg_config"
