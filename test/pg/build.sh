#!/usr/bin/env bash
# test/pg/build.sh MAJOR: build an assertion-enabled PostgreSQL MAJOR (17 or
# 18) from Debian's source package and print its pg_config path on the last
# line of stdout.  SHARDID_PG_CASSERT=0 builds a release server instead
# (no --enable-cassert), for benchmarks.
#
# The source comes from the Debian archive that apt already uses (the URI in
# /etc/apt/sources.list.d/debian.sources): suite trixie for 17, sid for 18.
# Those deb-src lines live in a private apt state directory, so the machine's
# own package lists, and therefore its binary packages, stay as they were.
# The server is built with --enable-cassert --enable-debug and installed into
# $SHARDID_PG_CACHE/pg-VERSION-cassert (default /var/cache/shardid), keyed by
# the exact Debian source version; with SHARDID_PG_CASSERT=0, without
# assertions (optimized as a release, symbols kept for callgrind) and with
# OpenSSL as Debian builds it (without it gen_random_uuid() and uuidv7() read
# /dev/urandom at every call), into pg-VERSION-release.  A later run that finds that directory reuses it
# and builds nothing.  Run as root (it installs the build tools
# with apt-get when they are missing); the install is world-readable, since
# the test servers run as the postgres OS user.
set -euo pipefail
umask 022

major=${1:-}
case "$major" in
17) suite=trixie ;;
18) suite=sid ;;
*)
	echo "usage: $0 17|18" >&2
	exit 2
	;;
esac

cache=${SHARDID_PG_CACHE:-/var/cache/shardid}
case "${SHARDID_PG_CASSERT:-1}" in
1) flavour=cassert flags=(--enable-cassert --enable-debug) what="assertions on" ;;
0) flavour=release flags=(--enable-debug --with-openssl) what="release, no assertions" ;;
*)
	echo "$0: SHARDID_PG_CASSERT is 1 (the default) or 0" >&2
	exit 2
	;;
esac
jobs=${SHARDID_BUILD_JOBS:-2}
log() { echo "build.sh: $*" >&2; }

mkdir -p "$cache"
# one build of a version at a time on this machine
exec 9>"$cache/pg-$major.lock"
flock 9

# a private apt state: our own sources list, package lists and caches
state=$cache/apt-$suite
mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
[ -n "$uri" ] || {
	log "no URIs line in /etc/apt/sources.list.d/debian.sources"
	exit 1
}
echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $suite main" \
	>"$state/sources.list"
apt_private=(-o "Dir::Etc::sourcelist=$state/sources.list" -o "Dir::Etc::sourceparts=-"
	-o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
	-o "APT::Get::List-Cleanup=0" -o "APT::Sandbox::User=root")

# the lists are refreshed at most once a day; the build itself is cached by version
if [ -z "$(find "$state/lists" -maxdepth 1 -name '*_Sources*' -mtime -1 2>/dev/null)" ]; then
	log "fetching the $suite source index from $uri"
	apt-get "${apt_private[@]}" update -qq >&2
fi
version=$(apt-cache "${apt_private[@]}" showsrc "postgresql-$major" |
	awk '/^Version:/ { print $2 }' | sort -V | tail -1)
[ -n "$version" ] || {
	log "no source package postgresql-$major in $suite"
	exit 1
}
prefix=$cache/pg-$version-$flavour
if [ -x "$prefix/bin/pg_config" ] && [ -f "$prefix/.complete" ]; then
	log "reusing PostgreSQL $version ($what) in $prefix"
	echo "$prefix/bin/pg_config"
	exit 0
fi

# build tools (readline, zlib and ICU are left out, so no libraries are needed
# but OpenSSL for a release build)
missing=""
tools="gcc make bison flex perl pkg-config bzip2 xz-utils"
[ "$flavour" = release ] && tools="$tools libssl-dev"
for p in $tools; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	log "installing:$missing"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
fi

start=$(date +%s)
work=$cache/build-$major-$flavour
rm -rf "$work"
mkdir -p "$work"
cd "$work"
log "downloading the source of postgresql-$major $version"
apt-get "${apt_private[@]}" source --download-only -qq "postgresql-$major=$version" >&2
tar xf postgresql-"$major"_*.orig.tar.*
src=$(find . -maxdepth 1 -type d -name 'postgresql-*' | head -1)
cd "$src"
log "configuring $src ($what) into $prefix"
./configure --prefix="$prefix" "${flags[@]}" \
	--without-icu --without-readline --without-zlib >"$work/configure.log" 2>&1 ||
	{
		tail -30 "$work/configure.log" >&2
		exit 1
	}
log "compiling with $jobs jobs"
make -s -j"$jobs" >"$work/make.log" 2>&1 || {
	tail -40 "$work/make.log" >&2
	exit 1
}
# installs the server, the headers and PGXS with src/test/regress/pg_regress
rm -rf "$prefix.tmp"
make -s install DESTDIR="$prefix.tmp" >"$work/install.log" 2>&1 || {
	tail -40 "$work/install.log" >&2
	exit 1
}
rm -rf "$prefix"
mv "$prefix.tmp$prefix" "$prefix"
rm -rf "$prefix.tmp"
touch "$prefix/.complete"
cd "$cache"
rm -rf "$work"
log "built PostgreSQL $version in $(($(date +%s) - start)) s"
echo "$prefix/bin/pg_config"
