#!/usr/bin/env bash
# What a PGXN user installs: `make dist` makes shardid-X.Y.Z.zip from the
# commit checked out; its META.json holds what PGXN's Meta spec 1.0.0
# requires (and names files that are in the zip: test/packages/meta_spec.py);
# pgxnclient installs the zip into the server PG_CONFIG names (the extension,
# shardid-move and its man page), a throwaway cluster creates the extension
# from it, and `pgxn uninstall` removes every file again.
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh packages

uninstall_source_build
zip=$(tools/dist.sh "$pkg_tmp") || { fail "make dist failed"; finish; }
version=$(python3 -c 'import json; print(json.load(open("META.json"))["version"])')
expect "$(basename "$zip")" = "shardid-$version.zip" "the zip's name"
unzip -q "$zip" -d "$pkg_tmp/unzipped" || fail "unzip $zip"
top=$pkg_tmp/unzipped/shardid-$version
python3 test/packages/meta_spec.py "$top" || fail "META.json does not meet PGXN's Meta Spec"

echo "--- pgxn install $(basename "$zip")"
(cd "$pkg_tmp" && pgxn install --yes --pg_config "$PG_CONFIG" --make make "./$(basename "$zip")") \
	>"$pkg_tmp/pgxn-install.log" 2>&1 || { tail -30 "$pkg_tmp/pgxn-install.log"; fail "pgxn install failed"; finish; }
[ -f "$("$PG_CONFIG" --sharedir)/extension/shardid.control" ] || fail "pgxn install left no shardid.control"
[ -f "$("$PG_CONFIG" --mandir)/man1/shardid-move.1" ] || fail "pgxn install left no man page of shardid-move"
smoke "installed from PGXN's zip" pgxn

(cd "$pkg_tmp" && pgxn uninstall --yes --pg_config "$PG_CONFIG" --make make "./$(basename "$zip")") \
	>"$pkg_tmp/pgxn-uninstall.log" 2>&1 || { tail -30 "$pkg_tmp/pgxn-uninstall.log"; fail "pgxn uninstall failed"; }
expect "$(shardid_files)" = "" "shardid files left after pgxn uninstall"
finish
