#!/usr/bin/env bash
# test/client/node.sh: run test/client/ids.js against the running cluster.
# The `pg` package is installed with `npm ci` from test/client's
# package-lock.json into a temporary directory, so every run uses the same
# versions and the checkout stays clean.  Exits 77 (skipped) when Node.js
# or the registry is unavailable.
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null && command -v npm >/dev/null ||
	{ echo "skipped: node and npm are not installed"; exit 77; }
mods=$(mktemp -d "${TMPDIR:-/tmp}/shardid-node.XXXXXX")
trap 'rm -rf "$mods"' EXIT
cp "$here/package.json" "$here/package-lock.json" "$mods/"
if ! (cd "$mods" && timeout 180 npm ci --silent --no-audit --no-fund) >"$mods/npm.log" 2>&1; then
	echo "skipped: could not install the locked pg package from the npm registry"
	tail -3 "$mods/npm.log"
	exit 77
fi
echo "node $(node --version), pg $(node -p "require('$mods/node_modules/pg/package.json').version")"
NODE_PATH="$mods/node_modules" node "$here/ids.js"
