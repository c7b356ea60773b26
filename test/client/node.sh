#!/usr/bin/env bash
# test/client/node.sh: run test/client/ids.js against the running cluster,
# with the `pg` package of test/client's package-lock.json, which `make deps`
# installs (tools/deps.sh: npm ci into $SHARDID_CACHE/node-<lock's hash>),
# so every run uses the same versions, the checkout stays clean and the
# suite installs nothing.  Exits 77 (skipped) when Node.js or the package is
# not there.
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null ||
	{ echo "skipped: node is not installed"; exit 77; }
mods="${SHARDID_CACHE:-/var/cache/shardid}/node-$(sha256sum "$here/package-lock.json" | cut -c1-16)/node_modules"
[ -d "$mods/pg" ] ||
	{ echo "skipped: the pg package is not installed in $mods (make deps installs it)"; exit 77; }
echo "node $(node --version), pg $(node -p "require('$mods/pg/package.json').version")"
NODE_PATH="$mods" node "$here/ids.js"
