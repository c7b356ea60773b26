#!/usr/bin/env bash
# tools/deb.sh [OUTDIR]: build the Debian packages of shardid (`make deb`):
# postgresql-MAJOR-shardid for every PostgreSQL major that debian/pgversions
# names and the machine has the server development files of
# (postgresql-server-dev-MAJOR; Debian 12 has 15), with debhelper and
# postgresql-common's pg_buildext (`make deps` installs them).  The files git
# tracks are copied into a temporary directory, as a clean clone would have
# them (nothing built in the checkout goes into a package), built there with
# `dpkg-buildpackage -b -us -uc`, and the .deb files are moved to OUTDIR
# (default dist/).  Prints their paths.  The suite runs against the
# installed package, not during the build (debian/rules says why):
# debian/tests/installcheck, which test/packages/deb.sh runs.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
for tool in dpkg-buildpackage pg_buildext dh; do
	command -v "$tool" >/dev/null || {
		echo "tools/deb.sh: $tool is missing: run make deps (as root) first" >&2
		exit 1
	}
done
version=$(dpkg-parsechangelog -l debian/changelog -S Version)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-deb.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
src=$tmp/shardid-${version%-*}
mkdir -p "$src"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	git ls-files -z | tar --null -T - -cf - | tar -xf - -C "$src"
else
	cp -a . "$src"
	make -s -C "$src" clean >/dev/null 2>&1 || true
fi
# the test clusters of the build run as a user that must read the tree
chmod -R a+rX "$tmp"
echo "tools/deb.sh: building shardid $version for PostgreSQL $(cd "$src" && pg_buildext supported-versions | tr '\n' ' ')" >&2
(cd "$src" && dpkg-buildpackage -b -us -uc) >"$tmp/build.log" 2>&1 || {
	tail -60 "$tmp/build.log" >&2
	echo "tools/deb.sh: dpkg-buildpackage failed (the last lines of its log are above)" >&2
	exit 1
}
for deb in "$tmp"/*.deb; do
	mv "$deb" "$out/"
	echo "$out/$(basename "$deb")"
done
