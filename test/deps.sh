#!/usr/bin/env bash
# test/deps.sh: install the Debian packages that building, the demo, the
# tests need; `test/deps.sh bench` adds what the benchmark needs.  Does
# nothing when they are all present.
set -eu

PG_MAJOR=${PG_MAJOR:-15}
packages="make gcc postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR
	postgresql-client-$PG_MAJOR libfaketime util-linux clang-14 libclang-rt-14-dev
	valgrind"
[ "${1:-}" = bench ] && packages="$packages gnuplot-nox"

missing=""
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
	echo "missing Debian packages:$missing (install them as root: apt-get install$missing)" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $missing >/dev/null
