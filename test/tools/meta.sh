#!/usr/bin/env bash
# META.json meets PGXN's Meta Spec 1.0.0 (test/packages/meta_spec.py, which
# test/packages/pgxn.sh also runs on the release file), here on the tree,
# without root or a server; and the checker refuses what the spec refuses:
# copies of META.json each with one fault.  Needs python3.
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh servers

out=$(python3 test/packages/meta_spec.py .) || fail "META.json does not meet PGXN's Meta Spec: $out"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shardid-meta.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# refused FAULT PYTHON WANT: META.json changed by PYTHON (on m) is refused
# with a line that contains WANT
refused() {
	rm -rf "$tmp/d" && mkdir -p "$tmp/d/src/sql" && cp README.md "$tmp/d/" && cp src/sql/shardid.sql "$tmp/d/src/sql/"
	python3 - "$2" <<'PY' || { fail "$1: the fault could not be made"; return; }
import json, os, sys
m = json.load(open("META.json"))
exec(sys.argv[1])
json.dump(m, open(os.environ["META_OUT"], "w"), indent=4)
PY
	local got
	got=$(python3 test/packages/meta_spec.py "$tmp/d")
	[ $? = 1 ] || fail "$1: accepted"
	case "$got" in *"$3"*) ;; *) fail "$1: got '$got', want a line with '$3'" ;; esac
}
export META_OUT=$tmp/d/META.json
refused "release status beta" 'm["release_status"] = "beta"' "release_status: 'beta' is not stable, testing or unstable"
refused "empty resources" 'm["resources"] = {}' "resources: has none of homepage, bugtracker, repository"
refused "custom resources only" 'm["resources"] = {"x_docs": "README.md"}' "resources: has none of homepage, bugtracker, repository"
refused "homepage not a URL" 'm["resources"] = {"homepage": "the README"}' "resources.homepage: is not a URL"
refused "version of two parts" 'm["version"] = "1.4"' "version: '1.4' is not a semantic version"
refused "provided file missing" 'm["provides"]["shardid"]["file"] = "sql/shardid.sql"' "provides.shardid.file: sql/shardid.sql is not a file"
refused "unknown key" 'm["homepage"] = "https://example.com/"' "unknown key 'homepage'"
refused "unknown license" 'm["license"] = "PostgreSQL License"' "license: 'PostgreSQL License' is not a license"
refused "prereq range" 'm["prereqs"]["runtime"]["requires"]["PostgreSQL"] = "15+"' "prereqs.runtime.requires.PostgreSQL: '15+' is not a version range"
finish
