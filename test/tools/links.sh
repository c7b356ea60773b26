#!/usr/bin/env bash
# Every relative link of README.md, CHANGELOG.md and doc/*.md leads to a file
# or directory of the tree and, when it names one, to a heading of that
# file (GitHub's anchors: lower case, punctuation dropped, spaces as
# hyphens, a repeated heading numbered).  Links in code are not links.
# No server.
. "$(dirname "$0")/../lib.sh" servers
cd "$(dirname "$0")/../.." || exit 1

python3 - README.md CHANGELOG.md doc/*.md <<'PY' || fail "broken links (above)"
import os, re, sys

def anchors(path):
    out, seen, code = set(), {}, False
    for line in open(path).read().split("\n"):
        if line.startswith("```"):
            code = not code
            continue
        m = None if code else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not m:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
        slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out

bad = links = 0
for path in sys.argv[1:]:
    text = open(path).read()
    text = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    for n, line in enumerate(text.split("\n"), 1):
        line = re.sub(r"`[^`]*`", "", line)
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target):
                continue
            links += 1
            file, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            if not os.path.exists(dest):
                print("%s:%d: %s: no file %s" % (path, n, target, dest))
                bad = 1
            elif anchor and (os.path.isdir(dest) or anchor not in anchors(dest)):
                print("%s:%d: %s: no heading #%s in %s" % (path, n, target, anchor, dest))
                bad = 1
print("%d relative links checked" % links)
sys.exit(bad)
PY
finish
