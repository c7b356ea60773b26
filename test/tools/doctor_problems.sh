#!/usr/bin/env bash
# Every problem doctor() (and citus_doctor()) can return is documented in
# exactly one table row, and every such row names a problem that exists.
# The problems are read from src/sql/shardid.sql: each value given to a
# column "problem" (problem := '...', a CASE of literals, '...' AS problem);
# a problem named in a form this script cannot read (format(), a variable
# other than citus_doctor()'s rows passed through) fails, so that no form
# goes unchecked.  The tables: every Markdown table of README.md and
# doc/*.md whose first column is "problem"; each of their rows names one
# problem, in backquotes, in its first cell.  No problem may begin a row of
# any other table either.  No server.
. "$(dirname "$0")/../lib.sh" servers
cd "$(dirname "$0")/../.." || exit 1

python3 - src/sql/shardid.sql README.md doc/*.md <<'PY' || fail "the doctor's problems and their table differ (above)"
import re, sys

sql = open(sys.argv[1]).read()
# drop comments: a "problem" in a comment names nothing
sql = re.sub(r"--[^\n]*", "", sql)
lit = r"'((?:[^']|'')*)'"
unq = lambda s: s.replace("''", "'")
problems, bad = set(), 0

# problem := <expression>;
for m in re.finditer(r"\bproblem\s*:=\s*([^;]*);", sql):
    rhs = m.group(1).strip()
    line = sql.count("\n", 0, m.start()) + 1
    if re.fullmatch(lit, rhs):
        problems.add(unq(re.fullmatch(lit, rhs).group(1)))
    elif re.fullmatch(r"r\.problem", rhs):
        pass  # doctor_citus() passes citus_doctor()'s rows on, read above
    elif re.match(r"CASE\b", rhs, re.I) and not re.search(r"format|\|\|", rhs, re.I):
        found = re.findall(r"(?:THEN|ELSE)\s+" + lit, rhs, re.I)
        if not found:
            print("src/sql/shardid.sql:%d: problem := %s: no literal to read" % (line, rhs))
            bad = 1
        problems.update(unq(f) for f in found)
    else:
        print("src/sql/shardid.sql:%d: problem := %s: a form this test cannot read; name the problem with a literal" % (line, rhs))
        bad = 1
# '<literal>' AS problem (a SELECT or RETURN QUERY that names its column)
for m in re.finditer(lit + r"(?:::text)?\s+AS\s+problem\b", sql, re.I):
    problems.add(unq(m.group(1)))
# anything else AS problem
for m in re.finditer(r"([^\s,(]+)\s+AS\s+problem\b", sql, re.I):
    if not m.group(1).endswith("'") and not m.group(1).endswith("::text"):
        line = sql.count("\n", 0, m.start()) + 1
        print("src/sql/shardid.sql:%d: %s AS problem: a form this test cannot read" % (line, m.group(1)))
        bad = 1

if len(problems) < 40:
    print("only %d problems found in src/sql/shardid.sql, want at least 40" % len(problems))
    bad = 1

def cells(row):
    # split a Markdown table row on | not escaped and not inside backquotes
    out, cur, code, i = [], "", False, 0
    row = row.strip()
    if row.startswith("|"):
        row = row[1:]
    while i < len(row):
        c = row[i]
        if c == "\\" and i + 1 < len(row):
            cur += row[i:i + 2]
            i += 2
            continue
        if c == "`":
            code = not code
        if c == "|" and not code:
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    if cur.strip():
        out.append(cur.strip())
    return out

rows = {}      # problem -> ["file:line", ...]
tables = 0
for path in sys.argv[2:]:
    lines = open(path).read().split("\n")
    header = None
    for n, line in enumerate(lines, 1):
        if not line.startswith("|"):
            header = None
            continue
        c = cells(line)
        if header is None:
            header = c
            if c and c[0] == "problem":
                tables += 1
            continue
        if re.fullmatch(r"[-: |]+", line):
            continue
        first = c[0] if c else ""
        names = re.findall(r"`([^`]*)`", first)
        where = "%s:%d" % (path, n)
        if header[0] == "problem":
            if len(names) != 1 or re.sub(r"`[^`]*`", "", first).strip():
                print("%s: a row of the problem table names one problem, in backquotes, alone in its first cell: %s" % (where, first))
                bad = 1
                continue
            if names[0] not in problems:
                print("%s: %s is no problem doctor() or citus_doctor() returns" % (where, names[0]))
                bad = 1
                continue
            rows.setdefault(names[0], []).append(where)
        else:
            for name in names:
                if name == first.strip("`") and name in problems:
                    print("%s: %s begins a row of a table that is not the problem table" % (where, name))
                    bad = 1

if tables == 0:
    print("README.md and doc/*.md have no table whose first column is \"problem\"")
    bad = 1
for p in sorted(problems):
    where = rows.get(p, [])
    if len(where) == 0:
        print("problem %s is in no row of the problem table" % p)
        bad = 1
    elif len(where) > 1:
        print("problem %s is in %d rows: %s" % (p, len(where), ", ".join(where)))
        bad = 1
print("%d problems in src/sql/shardid.sql, %d documented once" % (len(problems), sum(1 for p in problems if len(rows.get(p, [])) == 1)))
sys.exit(bad)
PY
finish
