#!/usr/bin/env bash
# test/deps.sh [bench]: install, on Debian, the packages that building shardid
# and running its suites need (`make deps`); `test/deps.sh bench` adds what
# the benchmark needs.  Does nothing when they are all present.  What each
# part needs:
#   build            make gcc, and a server with its development files: Debian's
#                    postgresql-15 postgresql-server-dev-15 postgresql-client-15,
#                    left out when PG_CONFIG names a working pg_config
#   test/unit        a C compiler; clang-14 libclang-rt-14-dev for fuzzing
#   test/strict      libfaketime (clock steps), util-linux (runuser)
#   test/sanitize.sh valgrind (and gcc's UBSan runtime)
#   test/client      node and npm (skipped when missing; not installed here)
#   test/bench       gnuplot-nox
set -eu

PG_MAJOR=${PG_MAJOR:-15}
packages="make gcc libfaketime util-linux clang-14 libclang-rt-14-dev valgrind"
if [ -z "${PG_CONFIG:-}" ] || ! "$PG_CONFIG" --pgxs >/dev/null 2>&1; then
	packages="$packages postgresql-$PG_MAJOR postgresql-server-dev-$PG_MAJOR postgresql-client-$PG_MAJOR"
fi
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
