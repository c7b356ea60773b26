#!/usr/bin/env bash
# README's Getting started shows what `make demo` prints: each "demo=#"
# statement of that block must be one tools/demo.sh runs, and its output the
# same, but for what changes from run to run (timestamps, ids, millis and
# the column widths they set), so that the block cannot rot; and README's
# Setup sets shardid.epoch with statements the demo shows.  Runs
# tools/demo.sh against the server PG_CONFIG names, with shardid installed.
cd "$(dirname "$0")/../.." || exit 1
. test/lib.sh servers

PG_CONFIG=$PG_CONFIG tools/demo.sh >"$SHARDID_TMP/demo.out" 2>&1 || {
	cat "$SHARDID_TMP/demo.out"
	fail "tools/demo.sh failed"
	finish
}
python3 - README.md "$SHARDID_TMP/demo.out" <<'PY' || fail "README's demo block differs from what make demo prints"
import re, sys

def blocks(text):
    out = {}
    for b in text.split("\ndemo=# ")[1:]:
        stmt, _, rest = b.partition("\n")
        body = []
        for line in rest.split("\n"):
            if line.startswith("-- ") or line.startswith("demo cluster") or line.startswith("```"):
                break
            body.append(line)
        out[stmt.strip()] = body
    return out

def norm(lines):
    r = []
    for line in lines:
        line = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?\+\d\d", "<time>", line)
        line = re.sub(r"\b\d{7,}\b", "<n>", line)
        line = re.sub(r"-+", "-", line)
        line = re.sub(r" +", " ", line).strip()
        if line:
            r.append(line)
    return r

readme = open(sys.argv[1]).read()
start = readme.index("What `make demo` prints")
block = readme[readme.index("```\n", start) + 4:]
block = block[:block.index("```")]
shown = blocks("\n" + block)
ran = blocks(open(sys.argv[2]).read())
bad = 0
if not shown:
    print("README shows no demo=# statement")
    bad = 1
for stmt, body in shown.items():
    if stmt not in ran:
        print("README shows a statement make demo does not run: " + stmt)
        bad = 1
    elif norm(body) != norm(ran[stmt]):
        print("README's output of: " + stmt)
        print("\n".join(norm(body)))
        print("make demo's:")
        print("\n".join(norm(ran[stmt])))
        bad = 1
print("%d statements of README's demo block checked" % len(shown))
sys.exit(bad)
PY

# README's Setup sets the epoch with the statements the demo shows, and the
# demo's doctor() then has no "epoch not set"
setup=$(sed -n '/^### Setup/,/^### /p' README.md | grep -E "^(ALTER SYSTEM SET shardid\.epoch|SELECT pg_reload_conf)" | sed 's/;$//')
expect "$(echo "$setup" | wc -l)" = 2 "statements of README's Setup that set the epoch: $setup"
while IFS= read -r stmt; do
	[ -n "$stmt" ] || continue
	grep -q -x -F "demo=# $stmt" "$SHARDID_TMP/demo.out" || fail "make demo does not show README's Setup statement: $stmt"
done <<<"$setup"
grep -q "epoch not set" "$SHARDID_TMP/demo.out" && fail "the demo's doctor() says: epoch not set"
finish
