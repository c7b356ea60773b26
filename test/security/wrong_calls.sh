#!/usr/bin/env bash
# A seeded fuzzer of wrong calls: add_shards() (and the names of 1.2),
# convert_table(), the id functions, the epoch and shardid.max_lead_ms,
# with shard numbers out of range, NULLs, wrong types, unknown schemas,
# empty templates, a template of int ids, views and sequences for
# convert_table(), moments before the epoch, settings out of range; now and
# then inside a transaction block.  Every call must end in either
#  - an error that says what to do: one raised by shardid (by its C code,
#    or with a CONTEXT in one of its functions) has a HINT; an error that
#    PostgreSQL raises before shardid runs (an argument's input syntax, no
#    function of those types, a setting's range) is PostgreSQL's own and
#    is counted by kind; and the error leaves nothing behind: the registry,
#    the schemas, the tables and their DEFAULTs, legacy_ids are as before
#    (add_shards() may have committed the batches before the failing one,
#    as its error says: then doctor() finds nothing new);
#  - or a correct result: add_shards() registered every shard it was given
#    (shards out of range refused) and its tables make ids of the shard, an
#    id decodes to what it was made from, and doctor(scan_rows => false)
#    finds nothing new unless the call said so (a WARNING, or convert_table()'s
#    NOTICE that the shard is not registered to the table's schema).
# Prints its seed: WRONG_CALLS_SEED=N repeats a run, WRONG_CALLS=N sets the
# number of calls (default 300; a few seconds).  Exit 1 when any call broke
# the rules, naming the call and what it printed.
. "$(dirname "$0")/../lib.sh" servers

seed=${WRONG_CALLS_SEED:-$(( ($(date +%s%N) / 1000) % 1000000 ))}
calls=${WRONG_CALLS:-300}
echo "wrong_calls.sh: seed $seed, $calls calls (WRONG_CALLS_SEED=$seed repeats them)"
src_files=$(cd "$(dirname "$0")/../../src" && ls *.c *.h | tr '\n' ' ')

sql=$SHARDID_TMP/wrong_calls.$$.sql
out=$SHARDID_TMP/wrong_calls.$$.out
python3 - "$seed" "$calls" >"$sql" <<'PY' || { fail "generating the calls"; finish; }
import random, sys

seed, calls = int(sys.argv[1]), int(sys.argv[2])
rnd = random.Random(seed)
pick = rnd.choice

print(r"""\set VERBOSITY verbose
\set SHOW_CONTEXT always
SET client_min_messages = notice;
SET shardid.epoch = '2026-01-01 00:00:00+00';
CREATE SCHEMA fz_t;
CREATE TABLE fz_t.users (id bigint PRIMARY KEY, name text NOT NULL);
CREATE TABLE fz_t.photos (id bigint PRIMARY KEY, user_id bigint NOT NULL REFERENCES fz_t.users (id), caption text);
CREATE INDEX ON fz_t.photos (user_id);
CREATE TABLE fz_t.settings (key text PRIMARY KEY, value text);
CREATE SCHEMA fz_empty;
CREATE SCHEMA fz_int;
CREATE TABLE fz_int.t (id integer PRIMARY KEY, v text);
CREATE SCHEMA fz_viewonly;
CREATE VIEW fz_viewonly.v AS SELECT 1::bigint AS id;
CREATE SCHEMA fz_c;
CREATE SCHEMA fuzz_tools;
-- what a failed call must leave as it was: the registry, every schema but
-- the system's and their relations with their DEFAULTs, legacy_ids
CREATE FUNCTION fuzz_tools.state() RETURNS text LANGUAGE sql AS $$
SELECT md5(coalesce(string_agg(x, E'\n' ORDER BY x), ''))
FROM (SELECT format('registry %s %s', r.shard, r.schema_name) FROM shardid.shard_registry r
      UNION ALL
      SELECT format('schema %s %s', n.nspname, n.nspowner) FROM pg_namespace n
      WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname NOT IN ('information_schema', 'shardid', 'public', 'fuzz_tools')
      UNION ALL
      SELECT format('rel %s %s %s %s', n.nspname, c.relname, c.relkind,
                    (SELECT string_agg(format('%s=%s', a.attname, pg_get_expr(d.adbin, d.adrelid)), ',' ORDER BY a.attnum)
                     FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                     WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped))
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname NOT IN ('information_schema', 'shardid', 'fuzz_tools')
        AND c.relkind IN ('r', 'p', 'v', 'S')
      UNION ALL
      SELECT format('legacy %s %s %s', l.tab, l.shard, l.legacy_below) FROM shardid.legacy_ids l) s(x)
$$;
SELECT '@@doctor0 ' || count(*) FROM shardid.doctor(scan_rows => false);
""")

def shard():
    return pick([str(rnd.randint(0, 24)), str(rnd.randint(0, 24)), str(rnd.randint(0, 8191)),
                 '8191', '8192', '-1', 'NULL', '2147483647', '-2147483648'])

def literal_name():
    return pick(["'fz_t'", "'fz_t'", "'fz_t'", "'fz_empty'", "'fz_none'", "'pg_catalog'", "'shardid'",
                 'NULL', "'fz_int'", "'fz_viewonly'", "''", "'FZ_T'"])

def provisioning(n):
    """add_shards() or a 1.2 name; returns (statement, kind, shards expression or None)"""
    template = literal_name()
    opts = []
    shards_expr = None
    form = rnd.randrange(4)
    ok = lambda e: e != 'NULL' and 0 <= int(e) <= 8191
    if form < 2:
        elems = [shard() for _ in range(rnd.randrange(5))]
        lit = "'{%s}'" % ', '.join(elems)
        opts.append(lit)
        # shards out of range must be refused: 'invalid' is checked for
        shards_expr = "%s::integer[]" % lit if all(ok(e) for e in elems) else 'invalid'
    elif form == 2:
        first, last = shard(), shard()
        if ok(first) and ok(last) and abs(int(last) - int(first)) > 4:
            # a few shards: each one made costs its tables
            last = str(min(8191, int(first) + rnd.randrange(4)) if rnd.random() < 0.8 else max(0, int(first) - 1))
        opts.append('first_shard => %s' % first)
        opts.append('last_shard => %s' % last)
        shards_expr = ("ARRAY(SELECT generate_series(%s, %s))" % (first, last)
                       if ok(first) and ok(last) else 'invalid')
    else:
        if rnd.random() < 0.5:
            opts.append('first_shard => %s' % shard())
    if rnd.random() < 0.3:
        opts.append('distribute => %s' % pick(['NULL', 'true', 'false']))
    in_batches = 'true'
    if rnd.random() < 0.4:
        in_batches = pick(['true', 'false', 'false', 'NULL'])
        opts.append('in_batches => %s' % in_batches)
    if rnd.random() < 0.35:
        opts.append('prefix => %s' % pick(["'fz_'", "'fz_'", "''", 'NULL', "repeat('x', 60)", "'fz x'", "'FZ\"q'"]))
    if rnd.random() < 0.3:
        opts.append('digits => %s' % pick(['4', '0', '1', '5', '-1', 'NULL']))
    if rnd.random() < 0.35:
        opts.append('id_column => %s' % pick(["'id'", "'nope'", 'NULL', "'name'", "''"]))
    if rnd.random() < 0.4:
        opts.append('use_sequence => %s' % pick(['NULL', 'true', 'false']))
    if rnd.random() < 0.1 and form < 2:
        # the names of 1.2, deprecated: a row per table, or a procedure
        name = pick(['create_shards', 'create_local_shards'])
        opts = [o for o in opts if not o.startswith(('distribute', 'in_batches', 'first_shard', 'last_shard'))]
        return ("SELECT count(*) FROM shardid.%s(%s);" % (name, ', '.join([template] + opts)), 'rows', shards_expr)
    stmt = "CALL shardid.add_shards(%s);" % ', '.join([template] + opts)
    wrapped = rnd.random() < 0.2
    if wrapped:
        stmt = "BEGIN;\n%s\nROLLBACK;" % stmt
    kind = 'batches' if in_batches == 'true' else 'call'
    return stmt, kind, None if wrapped else shards_expr

def conversion(n):
    """a fresh table made (before the state is read), then convert_table()"""
    shape = pick(["(id bigserial PRIMARY KEY, v text)", "(id serial PRIMARY KEY, v text)",
                  "(id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, v text)",
                  "(id bigint PRIMARY KEY, v text)", "(id text PRIMARY KEY, v text)", "(v text)",
                  "(id bigint, at date) PARTITION BY RANGE (at)"])
    # in fz_c, or in the schema of a registered shard (when there is one)
    where = pick(["'fz_c'", "'fz_c'",
                  "coalesce((SELECT r.schema_name FROM shardid.shard_registry r ORDER BY r.shard LIMIT 1 OFFSET %d), 'fz_c')"
                  % rnd.randrange(4)])
    table = 'cv%d' % n
    setup = ["DO $$BEGIN EXECUTE format('CREATE TABLE %%I.%s %s', %s); END$$;" % (table, shape.replace("'", "''"), where)]
    if 'PARTITION' not in shape and shape != "(v text)" and rnd.random() < 0.5:
        setup.append("DO $$BEGIN EXECUTE format('INSERT INTO %%s (v) SELECT ''x'' FROM generate_series(1, %d)', "
                     "(SELECT c.oid::regclass FROM pg_class c WHERE c.relname = '%s')); EXCEPTION WHEN OTHERS THEN NULL; END$$;"
                     % (rnd.randint(1, 5), table))
    if shape.startswith('(id bigint PRIMARY KEY') and rnd.random() < 0.5:
        setup.append("DO $$BEGIN EXECUTE format('INSERT INTO %%s (id) VALUES (%s)', "
                     "(SELECT c.oid::regclass FROM pg_class c WHERE c.relname = '%s')); END$$;"
                     % (pick(['shardid.min_id(now() + interval ''1 day'')', 'shardid.next_id(3, 1)', '42']), table))
    target = pick(["(SELECT c.oid::regclass FROM pg_class c WHERE c.relname = '%s')" % table] * 4 +
                  ["'fz_c.nope'", "'fz_viewonly.v'", "'fz_c.%s_id_seq'" % table, "'pg_class'",
                   "(SELECT l.tab FROM shardid.legacy_ids l ORDER BY l.legacy_below LIMIT 1)", 'NULL'])
    args = [target, shard()]
    if rnd.random() < 0.4:
        args.append(pick(["'id'", "'v'", "'nope'", 'NULL', "'at'"]))
    stmt = "SELECT legacy_below FROM shardid.convert_table(%s);" % ', '.join(args)
    if rnd.random() < 0.15:
        stmt = "BEGIN;\n%s\nROLLBACK;" % stmt
    return setup, stmt

def moment():
    return pick(["'1969-12-31 23:59:59+00'", "'infinity'", "'-infinity'", "now()", "'2026-01-01 00:00:00+00'",
                 "'2025-12-31 23:59:59.999+00'", "'3000-01-01'", 'NULL', "'2060-01-01'"])

def bigint():
    return pick(['0', '-1', '1', '9223372036854775807', '-9223372036854775808', '1023', '1024',
                 str(rnd.randint(0, 2**62)), 'NULL', '2199023255551', '2199023255552'])

def ids(n):
    """an id function; a result is checked against what it was made from"""
    s = shard()
    k = rnd.randrange(11)
    if k == 0:
        return "SELECT '@@ok ' || (shardid.id_shard(shardid.next_id(%s)) = %s);" % (s, s)
    if k == 1:
        return "SELECT '@@ok ' || (shardid.id_shard(shardid.next_id(%s, %s)) = %s);" % (s, bigint(), s)
    if k == 2:
        m = pick(['1', '0', '-1', '5', '1000', '1000001', 'NULL', pick(['1000000', '7'])])
        return "SELECT '@@ok ' || (count(*) = %s AND bool_and(shardid.id_shard(i) = %s)) FROM shardid.next_ids(%s, %s) i;" % (m, s, s, m)
    if k == 3:
        m, q = bigint(), bigint()
        return ("SELECT '@@ok ' || (shardid.id_millis(x) = %s AND shardid.id_shard(x) = %s AND shardid.id_seq(x) = (%s)::bigint %% 1024) "
                "FROM shardid.make_id(%s, %s, %s) x;" % (m, s, q, m, s, q))
    if k == 4:
        t = moment()
        return "SELECT '@@ok ' || (shardid.min_id(%s) <= shardid.max_id(%s));" % (t, t)
    if k == 5:
        return "SELECT '@@ok ' || (shardid.id_time(%s) IS NOT NULL OR (%s) IS NULL);" % ((bigint(),) * 2)
    if k == 6:
        return "SELECT '@@ok ' || ((shardid.decode(%s)).shard BETWEEN 0 AND 8191);" % bigint()
    if k == 7:
        # near misses: the shard as bigint, the seq as a sequence's name
        return pick(["SELECT shardid.next_id(5::bigint);", "SELECT shardid.next_id(5::bigint, 1);",
                     "SELECT shardid.next_id(5, 'fz_c.some_seq');", "SELECT shardid.next_id('five');",
                     "SELECT shardid.next_ids(5, 10::bigint);", "SELECT shardid.next_id();"])
    if k == 8:
        return "SELECT '@@ok ' || (shardid.id_schema(%s) IS NULL OR true);" % bigint()
    if k == 9:
        return "SELECT count(*) >= 0 AS ok FROM shardid.doctor(scan_rows => %s);" % pick(['true', 'false', 'NULL'])
    return "SELECT '@@ok ' || (shardid.shard_schema(%s) IS NULL OR true);" % s

def settings(n):
    k = rnd.randrange(4)
    if k == 0:
        v = pick(["'garbage'", "'now'", "'-1'", "'2026-01-01 00:00:00.0005+00'", "'99999-01-01'", "''",
                  "'1314220021721'", "'2011-08-24 21:07:01.721+00'", "'tomorrow'", "'1e3'"])
        return "BEGIN;\nSET LOCAL shardid.epoch = %s;\nSELECT '@@ok ' || (shardid.id_shard(shardid.next_id(3, 1)) = 3);\nROLLBACK;" % v
    if k == 1:
        return "SET shardid.max_lead_ms = %s;" % pick(['5', '-1', "'abc'", '60001'])
    if k == 2:
        return "ALTER SYSTEM SET shardid.max_lead_ms = %s;" % pick(['-1', '60001', "'abc'", "'2min'", "'1 h'"])
    return "SHOW shardid.%s;" % pick(['max_lead_ms', 'epoch', 'nope'])

for n in range(1, calls + 1):
    r = rnd.random()
    setup, kind, shards_expr = [], 'value', None
    if r < 0.45:
        stmt, kind, shards_expr = provisioning(n)
    elif r < 0.7:
        setup, stmt = conversion(n)
        kind = 'convert'
    elif r < 0.9:
        stmt = ids(n)
    else:
        stmt = settings(n)
    for s in setup:
        print(s)
    # the doctor's rows are counted where the state changed (doctor() is
    # the slow part): before the call when its setup made something
    print("SELECT fuzz_tools.state() AS state \\gset before_")
    print("SELECT '@@before %d ' || :'before_state' || ' ' || %s;"
          % (n, "(SELECT count(*) FROM shardid.doctor(scan_rows => false))" if setup else "'-'"))
    print("\\echo @@call %d %s" % (n, kind))
    print(stmt)
    print("\\echo @@end %d" % n)
    if shards_expr == 'invalid':
        print("\\echo @@missing %d invalid" % n)
    elif shards_expr:
        # each shard registered, its schema making ids of it
        print("SELECT '@@missing %d ' || count(*) FROM unnest(%s) s(shard) "
              "WHERE NOT EXISTS (SELECT FROM shardid.id_defaults d WHERE d.shard = s.shard "
              "AND d.schema_name = shardid.shard_schema(s.shard));"
              % (n, shards_expr))
    print("SELECT '@@after %d ' || s.state || ' ' || CASE WHEN s.state = :'before_state' THEN '-' "
          "ELSE (SELECT count(*) FROM shardid.doctor(scan_rows => false))::text END FROM (SELECT fuzz_tools.state() AS state) s;" % n)
print("ALTER SYSTEM RESET shardid.max_lead_ms;")
print("\\echo @@doctor")
print("SELECT problem || ' | ' || object FROM shardid.doctor(scan_rows => false);")
PY

started=$(date +%s)
"$PG_BIN/psql" -X -At -f "$sql" >"$out" 2>&1
echo "wrong_calls.sh: $calls calls in $(($(date +%s) - started)) s"

python3 - "$out" "$sql" "$src_files" <<'PY' || script_failed=1
import re, sys
from collections import Counter

out = open(sys.argv[1]).read().split('\n')
sql = open(sys.argv[2]).read()
src_files = set(sys.argv[3].split())
stmts = {}
for m in re.finditer(r'\\echo @@call (\d+) (\w+)\n(.*?)\n\\echo @@end', sql, re.S):
    stmts[int(m.group(1))] = (m.group(2), m.group(3))

msg = re.compile(r'^(?:psql:[^:]*:\d+: )?(ERROR|WARNING|NOTICE):\s+([0-9A-Z]{5}): (.*)$')
blocks, before, after, missing = {}, {}, {}, {}
cur = None
doctor_rows = None
for line in out:
    m = re.match(r'^@@doctor0 (\d+)$', line)
    if m:
        doctor0 = int(m.group(1))
        continue
    m = re.match(r'^@@(before|after|missing) (\d+) (.*)$', line)
    if m:
        {'before': before, 'after': after, 'missing': missing}[m.group(1)][int(m.group(2))] = m.group(3)
        continue
    m = re.match(r'^@@call (\d+)', line)
    if m:
        cur = int(m.group(1))
        blocks[cur] = []
        continue
    if line.startswith('@@end'):
        cur = None
        continue
    if line == '@@doctor':
        doctor_rows = []
        continue
    if cur is not None:
        blocks[cur].append(line)
    elif doctor_rows is not None and line:
        doctor_rows.append(line)

bad = []
own = Counter()
outcomes = Counter()
doctor_now = doctor0
for n, (kind, stmt) in sorted(stmts.items()):
    lines = blocks.get(n)
    if lines is None or n not in before or n not in after:
        bad.append((n, stmt, 'no output for the call', lines or []))
        continue
    # the messages of the block: (level, sqlstate, text, [following lines])
    msgs = []
    for l in lines:
        m = msg.match(l)
        if m:
            msgs.append([m.group(1), m.group(2), m.group(3), []])
        elif msgs:
            msgs[-1][3].append(l)
    errors = [x for x in msgs if x[0] == 'ERROR']
    said = any(x[0] == 'WARNING' for x in msgs) or \
        any(x[0] == 'NOTICE' and 'is not registered to schema' in x[2] for x in msgs)
    b_hash, b_doc = before[n].split()
    a_hash, a_doc = after[n].split()
    # the doctor's rows before and after: counted where the state changed
    b_doc = doctor_now if b_doc == '-' else int(b_doc)
    a_doc = b_doc if a_doc == '-' else int(a_doc)
    doctor_now = a_doc
    if errors:
        level, state, text, rest = errors[0]
        location = next((l for l in rest if l.startswith('LOCATION:')), '')
        loc_file = re.sub(r':\d+$', '', location.split(',')[-1].strip()) if location else ''
        context = ' '.join(l for l in rest if l.startswith('CONTEXT:') or l.startswith('PL/pgSQL') or l.startswith('SQL '))
        by_shardid = loc_file in src_files or 'shardid.' in context or 'function shardid' in context
        has_hint = any(l.startswith('HINT:') for l in rest)
        if by_shardid:
            outcomes['error of shardid with a HINT' if has_hint else 'error of shardid without a HINT'] += 1
            if not has_hint:
                bad.append((n, stmt, 'an error of shardid without a HINT', lines))
        else:
            outcomes["PostgreSQL's own error"] += 1
            own['%s %s' % (state, re.sub(r'"[^"]*"|\d+', '_', text)[:70])] += 1
        if a_hash != b_hash:
            if kind == 'batches' and text.startswith('provisioning shard'):
                if a_doc > b_doc:
                    bad.append((n, stmt, 'committed batches the doctor reports (%s rows, were %s)' % (a_doc, b_doc), lines))
            else:
                bad.append((n, stmt, 'the error left something behind', lines))
    else:
        outcomes['correct result' if not said else 'result, with a WARNING'] += 1
        if any(l.strip() == '@@ok f' for l in lines):
            bad.append((n, stmt, 'a wrong result', lines))
        if missing.get(n) == 'invalid':
            bad.append((n, stmt, 'shards out of range or NULL were not refused', lines))
        elif missing.get(n, '0') != '0':
            bad.append((n, stmt, '%s of its shards not registered, or making no ids' % missing[n], lines))
        if a_doc > b_doc and not said:
            bad.append((n, stmt, 'doctor() finds %s new rows, and the call said nothing' % (a_doc - b_doc), lines))

print('wrong_calls.sh: %s' % ', '.join('%d %s' % (v, k) for k, v in sorted(outcomes.items())))
for k, v in sorted(own.items()):
    print("  PostgreSQL's own: %3d x %s" % (v, k))
print('  doctor() at the end: %s' % ('; '.join(doctor_rows) if doctor_rows else 'no rows'))
for why, count in sorted(Counter(why for _, _, why, _ in bad).items()):
    print('FAIL: %d calls: %s' % (count, why))
for n, stmt, why, lines in bad[:20]:
    print('FAIL: call %d: %s\n  %s\n    %s' % (n, why, stmt.replace('\n', '\n  '), '\n    '.join(lines[:14])))
if bad:
    print('FAIL: %d of %d calls broke the rules' % (len(bad), len(stmts)))
    sys.exit(1)
PY
finish
