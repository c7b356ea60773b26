#!/usr/bin/env bash
# test/client/node.sh: run test/client/ids.js against the running cluster,
# with the `pg` package installed from the npm registry into a temporary
# directory.  Exits 77 (skipped) when Node.js or the registry is unavailable.
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null && command -v npm >/dev/null ||
	{ echo "skipped: node and npm are not installed"; exit 77; }
mods=$(mktemp -d "${TMPDIR:-/tmp}/shardid-node.XXXXXX")
trap 'rm -rf "$mods"' EXIT
if ! timeout 180 npm install --silent --no-save --no-package-lock --no-audit --no-fund \
	--prefix "$mods" pg@8 >"$mods/npm.log" 2>&1; then
	echo "skipped: could not install the pg package from the npm registry"
	tail -3 "$mods/npm.log"
	exit 77
fi
echo "node $(node --version), pg $(node -p "require('$mods/node_modules/pg/package.json').version")"
NODE_PATH="$mods/node_modules" node "$here/ids.js"
