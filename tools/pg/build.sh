#!/usr/bin/env bash
# tools/pg/build.sh MAJOR: build an assertion-enabled PostgreSQL MAJOR (17 or
# 18) from Debian's source packages and print its pg_config path on the last
# line of stdout.  SHARDID_PG_CASSERT=0 builds a release server instead
# (no --enable-cassert), for benchmarks.
#
# Archives move on: the newest source a suite's index names is sometimes no
# longer downloadable (an index of trixie named postgresql-17 17.12 while its
# files answered 404).  So the source is looked for in this order, and the
# line "build.sh: using ..." says which one was used:
#   1. every version of postgresql-MAJOR that any suite of SUITES lists in
#      the Debian archive apt already uses (the URI in
#      /etc/apt/sources.list.d/debian.sources), newest first; each is
#      downloaded with `apt-get source`, which checks it against the signed
#      index, and a version that fails to download is passed over;
#   2. a complete build of that major already in the cache, of any version;
#   3. the versions pinned in tools/pg/sources (an orig tarball by name and
#      SHA-256, taken from the .dsc signed by Debian's PostgreSQL
#      maintainers), fetched from the archive's pool; a file whose SHA-256
#      differs is an error (exit 1), never built and never a skip.
# When none of them can be downloaded it prints "unavailable: REASON" on the
# last line of stdout and exits 77, so that the caller reports the suite of
# that major as skipped with the reason (never as a failure of the change).
#
# The deb-src lines live in a private apt state directory, so the machine's
# own package lists, and therefore its binary packages, stay as they were.
# The server is built with --enable-cassert --enable-debug and installed into
# $SHARDID_PG_CACHE/pg-VERSION-cassert (default /var/cache/shardid), keyed by
# the exact Debian source version; with SHARDID_PG_CASSERT=0, without
# assertions (optimized as a release, symbols kept for callgrind) and with
# OpenSSL as Debian builds it (without it gen_random_uuid() and uuidv7() read
# /dev/urandom at every call), into pg-VERSION-release.  A later run that
# finds that directory reuses it and builds nothing.  Run as root (it
# installs the build tools with apt-get when they are missing); the install
# is world-readable, since the test servers run as the postgres OS user.
# SHARDID_PG_SUITES overrides the suites searched and SHARDID_PG_SOURCES the
# file of pinned versions (test/tools/pg_build.sh tests the fallbacks with a
# suite that does not carry the major).
set -euo pipefail
umask 022

here=$(cd "$(dirname "$0")" && pwd)
major=${1:-}
case "$major" in
17 | 18) ;;
*)
	echo "usage: $0 17|18" >&2
	exit 2
	;;
esac
suites=${SHARDID_PG_SUITES:-sid trixie trixie-updates forky experimental trixie-backports bookworm-backports}

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
unavailable() {
	log "PostgreSQL $major cannot be had: $*"
	echo "unavailable: $*"
	exit 77
}
use() {	# use PREFIX HOW: print PREFIX's pg_config and stop
	log "using PostgreSQL $(basename "$1") ($what), $2"
	echo "$1/bin/pg_config"
	exit 0
}
complete() { [ -x "$1/bin/pg_config" ] && [ -f "$1/.complete" ]; }

mkdir -p "$cache"
# one build of a major at a time on this machine
exec 9>"$cache/pg-$major.lock"
flock 9

# a private apt state: our own sources list, package lists and caches
key=$(echo "$suites" | md5sum | cut -c1-8)
state=$cache/apt-src-$key
mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
[ -n "$uri" ] || uri=http://deb.debian.org/debian
: >"$state/sources.list"
for s in $suites; do
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $uri $s main" \
		>>"$state/sources.list"
done
apt_private=(-o "Dir::Etc::sourcelist=$state/sources.list" -o "Dir::Etc::sourceparts=-"
	-o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
	-o "APT::Get::List-Cleanup=0" -o "APT::Sandbox::User=root")

# the lists are refreshed at most once a day; a suite the archive does not
# serve is passed over (apt says which)
if [ -z "$(find "$state/lists" -maxdepth 1 -name '*_Sources*' -mtime -1 2>/dev/null)" ]; then
	log "fetching the source indexes of $suites from $uri"
	apt-get "${apt_private[@]}" update -qq >&2 || log "some source indexes could not be fetched"
fi
listed=$(apt-cache "${apt_private[@]}" showsrc "postgresql-$major" 2>/dev/null |
	awk '/^Version:/ { print $2 }' | sort -Vru)
log "versions of postgresql-$major listed: ${listed:-none}"

# build tools (readline, zlib and ICU are left out, so no libraries are needed
# but OpenSSL for a release build)
tools_present() {
	local missing="" p tools="gcc make bison flex perl pkg-config bzip2 xz-utils"
	[ "$flavour" = release ] && tools="$tools libssl-dev"
	for p in $tools; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		log "installing:$missing"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
	fi
}

# build VERSION: configure, compile and install the orig tarball in the
# current directory into the cache; prints nothing on stdout
build() {
	local version=$1 prefix=$cache/pg-$1-$flavour start src
	start=$(date +%s)
	tools_present
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
}

work=$cache/build-$major-$flavour
fresh_work() {
	cd "$cache"
	rm -rf "$work"
	mkdir -p "$work"
	cd "$work"
}

# 1. what the suites list, newest first
tried=""
for version in $listed; do
	prefix=$cache/pg-$version-$flavour
	complete "$prefix" && use "$prefix" "cached, the newest version the archive lists"
	fresh_work
	log "downloading the source of postgresql-$major $version"
	if apt-get "${apt_private[@]}" source --download-only -qq "postgresql-$major=$version" >&2; then
		build "$version"
		use "$prefix" "built from the archive's source of $version"
	fi
	log "the source of postgresql-$major $version cannot be downloaded; trying older ones"
	tried="$tried $version"
done

# 2. any complete build of this major in the cache
cached=$(find "$cache" -maxdepth 1 -type d -name "pg-$major.*-$flavour" 2>/dev/null | sort -Vr)
for prefix in $cached; do
	complete "$prefix" && use "$prefix" "cached (the archive's source${tried:+ of$tried} could not be had)"
done

# 3. the pinned versions, by hash
while read -r m version file sha256; do
	case "$m" in "$major") ;; *) continue ;; esac
	prefix=$cache/pg-$version-$flavour
	fresh_work
	log "downloading $file, pinned in ${SHARDID_PG_SOURCES:-tools/pg/sources}"
	if /usr/lib/apt/apt-helper download-file "$uri/pool/main/p/postgresql-$major/$file" "$work/$file" >&2; then
		# a file that is there but not the one pinned is an error, never a skip
		got=$(sha256sum "$work/$file" | cut -d' ' -f1)
		if [ "$got" != "$sha256" ]; then
			log "$file from $uri has SHA-256 $got, not the pinned $sha256: refusing to build it"
			exit 1
		fi
		build "$version"
		use "$prefix" "built from the pinned source $file (SHA-256 checked)"
	fi
	tried="$tried $version"
done < <(grep -v '^#' "${SHARDID_PG_SOURCES:-$here/sources}")

cd "$cache"
rm -rf "$work"
unavailable "no source of postgresql-$major could be downloaded (tried:${tried:- nothing listed}) and no build of it is cached in $cache"
