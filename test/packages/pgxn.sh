#!/usr/bin/env bash
# What a PGXN user installs: `make dist` makes shardid-X.Y.Z.zip from the
# commit checked out; its META.json holds what PGXN's Meta spec 1.0.0
# requires (and names files that are in the zip); pgxnclient installs the zip
# into the server PG_CONFIG names, a throwaway cluster creates the extension
# from it, and `pgxn uninstall` removes every file again.
cd "$(dirname "$0")/../.." || exit 1
. test/lib_script.sh
. test/packages/lib.bash

uninstall_source_build
zip=$(tools/dist.sh "$pkg_tmp") || { fail "make dist failed"; finish; }
version=$(python3 -c 'import json; print(json.load(open("META.json"))["version"])')
expect "$(basename "$zip")" = "shardid-$version.zip" "the zip's name"
unzip -q "$zip" -d "$pkg_tmp/unzipped" || fail "unzip $zip"
top=$pkg_tmp/unzipped/shardid-$version
python3 - "$top" <<'PY' || fail "META.json does not meet PGXN's Meta spec"
import json, os, re, sys
top = sys.argv[1]
m = json.load(open(os.path.join(top, "META.json")))
semver = re.compile(r"^\d+\.\d+\.\d+$")
problems = []
for key in ("name", "abstract", "maintainer", "license", "provides", "version", "meta-spec"):
    if key not in m:
        problems.append("no " + key)
if m.get("meta-spec", {}).get("version") != "1.0.0":
    problems.append("meta-spec.version is not 1.0.0")
if not semver.match(m.get("version", "")):
    problems.append("version is not semantic: %r" % m.get("version"))
if m.get("release_status", "stable") not in ("stable", "testing", "unstable"):
    problems.append("release_status %r" % m.get("release_status"))
for ext, p in m.get("provides", {}).items():
    if not semver.match(p.get("version", "")):
        problems.append("provides.%s.version is not semantic" % ext)
    for key in ("file", "docfile"):
        if key in p and not os.path.isfile(os.path.join(top, p[key])):
            problems.append("provides.%s.%s %s is not in the zip" % (ext, key, p[key]))
    if "file" not in p:
        problems.append("provides.%s has no file" % ext)
for phase in m.get("prereqs", {}).values():
    for rel, reqs in phase.items():
        if rel not in ("requires", "recommends", "suggests", "conflicts"):
            problems.append("prereqs relation %s" % rel)
        for name, v in reqs.items():
            if not re.match(r"^(\d+(\.\d+){0,2}|0)$", str(v)) and not re.match(r"^[<>=!]", str(v)):
                problems.append("prereq %s version %r" % (name, v))
for p in problems:
    print("META.json: " + p)
sys.exit(1 if problems else 0)
PY

echo "--- pgxn install $(basename "$zip")"
(cd "$pkg_tmp" && pgxn install --yes --pg_config "$PG_CONFIG" --make make "./$(basename "$zip")") \
	>"$pkg_tmp/pgxn-install.log" 2>&1 || { tail -30 "$pkg_tmp/pgxn-install.log"; fail "pgxn install failed"; finish; }
[ -f "$("$PG_CONFIG" --sharedir)/extension/shardid.control" ] || fail "pgxn install left no shardid.control"
smoke "installed from PGXN's zip" pgxn

(cd "$pkg_tmp" && pgxn uninstall --yes --pg_config "$PG_CONFIG" --make make "./$(basename "$zip")") \
	>"$pkg_tmp/pgxn-uninstall.log" 2>&1 || { tail -30 "$pkg_tmp/pgxn-uninstall.log"; fail "pgxn uninstall failed"; }
expect "$(shardid_files)" = "" "shardid files left after pgxn uninstall"
finish
