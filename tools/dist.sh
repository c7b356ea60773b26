#!/usr/bin/env bash
# tools/dist.sh [OUTDIR]: the PGXN release file (`make dist`):
# OUTDIR/shardid-X.Y.Z.zip (default dist/), made by `git archive` from the
# commit checked out, every file under shardid-X.Y.Z/, X.Y.Z from META.json.
# Upload it at PGXN Manager; `pgxn install ./shardid-X.Y.Z.zip` installs it.
# Refuses a tree with uncommitted changes to tracked files: the zip would
# not hold them.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mkdir -p "${1:-dist}" && cd "${1:-dist}" && pwd)
version=$(python3 -c 'import json; print(json.load(open("META.json"))["version"])')
if ! git diff --quiet HEAD --; then
	echo "tools/dist.sh: tracked files have uncommitted changes, which the zip would not hold; commit them first" >&2
	exit 1
fi
git archive --format zip --prefix="shardid-$version/" -o "$out/shardid-$version.zip" HEAD
echo "$out/shardid-$version.zip"
