#!/usr/bin/env bash
# tools/deps.sh [--check] [bench]: install, on Debian, the packages that
# building shardid and running its suites need (`make deps`, the one make
# target that installs); `tools/deps.sh bench` adds what the benchmark
# needs.  Does nothing when they are all present.  With --check (`make test`,
# `make soak`, `make sanitize`, `make bench`) it installs nothing: it names
# what is missing and fails.  What each part needs:
#   build            make, the C compiler pg_config names, and PostgreSQL's
#                    server headers ($(pg_config --includedir-server)/postgres.h)
#                    and PGXS: Debian's postgresql-server-dev-MAJOR (pgxs.mk
#                    alone comes with postgresql-client-MAJOR, the headers do
#                    not); MAJOR from `pg_config --version`, 15 when there is
#                    no pg_config (PG_MAJOR=NN to choose)
#   demo and suites  the server itself: postgresql-MAJOR
#   test/unit        a C compiler; clang-14 libclang-rt-14-dev for fuzzing
#   test/strict      libfaketime (clock steps), util-linux (runuser)
#   test/cluster     locales (localedef and es_AR: move_values.sh)
#   test/sanitize.sh valgrind (and gcc's UBSan runtime)
#   test/client      node and npm (skipped when missing; not installed here),
#                    and the `pg` package of test/client/package-lock.json,
#                    which this installs (npm ci) into a cache of its own,
#                    $SHARDID_CACHE/node-<lock's hash> (/var/cache/shardid)
#   test/citus       liblz4-dev, libzstd-dev (Citus's build)
#   test/bench       gnuplot-nox, bc
#   make deb, dist   debhelper, postgresql-server-dev-all (pg_buildext),
#                    dpkg-dev; the package tests: pgxnclient, unzip
#   test/tools       man-db, groff-base (the man page of shardid-move)
# A pg_config of a server built from source (PG_CONFIG=/path/to/pg_config)
# must have its headers already: nothing from Debian would match it.
set -eu

pg_config=${PG_CONFIG:-pg_config}
check=false
[ "${1:-}" = --check ] && { check=true; shift; }
packages="make gcc libfaketime util-linux locales clang-14 libclang-rt-14-dev valgrind
	debhelper dpkg-dev postgresql-server-dev-all pgxnclient unzip man-db groff-base
	liblz4-dev libzstd-dev"
[ "${1:-}" = bench ] && packages="$packages gnuplot-nox bc"

if command -v "$pg_config" >/dev/null 2>&1 && major=$("$pg_config" --version 2>/dev/null); then
	major=$(echo "$major" | sed -n 's/^PostgreSQL \([0-9]*\).*/\1/p')
	headers="$("$pg_config" --includedir-server)/postgres.h"
	pgxs=$("$pg_config" --pgxs)
	server="$("$pg_config" --bindir)/postgres"
	cc=$("$pg_config" --cc | awk '{print $1}')
	case "$headers" in
	/usr/include/postgresql/*)	# Debian's: the packages of that major
		[ -f "$headers" ] && [ -f "$pgxs" ] || packages="$packages postgresql-server-dev-$major"
		[ -x "$server" ] || packages="$packages postgresql-$major"
		;;
	*)
		for f in "$headers" "$pgxs" "$server"; do
			[ -e "$f" ] || { echo "$pg_config: $f is missing; that installation is incomplete" >&2; exit 1; }
		done
		;;
	esac
	command -v "$cc" >/dev/null 2>&1 || echo "note: pg_config's compiler $cc is not on PATH" >&2
else
	major=${PG_MAJOR:-15}
	packages="$packages postgresql-$major postgresql-server-dev-$major postgresql-client-$major"
fi

# the client test's `pg` package, locked, where test/client/node.sh finds
# it; npm needs the registry, so a failure here is a note, and that test
# is skipped saying why
node_modules() {
	local lock dir
	lock="$(dirname "$0")/../test/client/package-lock.json"
	command -v npm >/dev/null 2>&1 || return 0
	dir="${SHARDID_CACHE:-/var/cache/shardid}/node-$(sha256sum "$lock" | cut -c1-16)"
	[ -d "$dir/node_modules/pg" ] && return 0
	mkdir -p "$dir" 2>/dev/null && [ -w "$dir" ] ||
		{ echo "note: $dir is not writable: test/client is skipped (make deps as root)" >&2; return 0; }
	cp "$lock" "$(dirname "$lock")/package.json" "$dir/"
	(cd "$dir" && timeout 300 npm ci --silent --no-audit --no-fund) >/dev/null 2>&1 ||
		{ rm -rf "$dir/node_modules"; echo "note: npm ci of test/client's pg package failed: test/client is skipped" >&2; }
}
$check || node_modules

missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if $check; then
	echo "missing Debian packages:$missing; install them first, as root: apt-get install$missing (make deps installs all but the benchmark's)" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "missing Debian packages:$missing (install them as root: apt-get install$missing)" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $missing >/dev/null
