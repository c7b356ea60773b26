#!/usr/bin/env bash
# The version is said in one place and repeated where packaging needs it:
# shardid.control's default_version X.Y is the version every file below
# names, as X.Y.0 where the format wants three parts:
#   META.json        "version" and provides.shardid.version (PGXN), and
#                    provides.shardid.file, which must exist; its
#                    release_status is "stable" (PGXN's client installs
#                    only stable releases by name: `pgxn install shardid`)
#   debian/changelog the newest entry, X.Y.0-N
#   CHANGELOG.md     the first "## X.Y" heading
#   shardid--X.Y.sql the install script, built by make (its sources exist)
#   shardid-move.1   the man page's header, "shardid X.Y" (from
#                    shardid-move --version), when make has built it
#                    (test/tools/man.sh builds it and checks the rest)
# and that no file holds a merge's conflict markers.
# Needs python3 and dpkg-parsechangelog (dpkg-dev).
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh servers

control=$(sed -n "s/^default_version = '\(.*\)'$/\1/p" shardid.control)
[ -n "$control" ] || fail "no default_version in shardid.control"
read -r meta provides file status <<<"$(python3 -c '
import json
m = json.load(open("META.json"))
p = m["provides"]["shardid"]
print(m["version"], p["version"], p["file"], m.get("release_status", "stable"))')"
deb=$(dpkg-parsechangelog -l debian/changelog -S Version)
changelog=$(sed -n 's/^## \([0-9][0-9.]*\).*/\1/p' CHANGELOG.md | head -1)
echo "control $control, META.json $meta (provides $provides, $file, $status), debian $deb, CHANGELOG $changelog"
expect "$meta" = "$control.0" "META.json version"
expect "$provides" = "$control.0" "META.json provides.shardid.version"
expect "${deb%-*}" = "$control.0" "debian/changelog's upstream version"
expect "$changelog" = "$control" "CHANGELOG.md's newest release"
expect "$status" = stable "META.json release_status"
[ -f "$file" ] || fail "META.json provides.shardid.file $file does not exist"
if [ -f src/move/shardid-move.1 ]; then
	expect "$(sed -n 's/^\.TH [^ ]* 1 "[^"]*" "\([^"]*\)".*/\1/p' src/move/shardid-move.1)" = "shardid $control" \
		"src/move/shardid-move.1's header (make it again)"
else
	echo "src/move/shardid-move.1 is not built: its version not checked here"
fi
make -s -n "shardid--$control.sql" >/dev/null 2>&1 || fail "make cannot build shardid--$control.sql"
# no merge left its conflict markers in a file of the tree (one reached
# CHANGELOG.md's 1.3 entry)
markers=$(git grep -n -I -E '^(<<<<<<<|>>>>>>>) ' -- . 2>/dev/null | head -5)
[ -z "$markers" ] || fail "merge conflict markers in the tree: $markers"
finish
