#!/usr/bin/env bash
# Writes of explicit ids into a registered shard's tables, by the paths the
# executor's hooks (src/floor.c, "Writes of explicit ids") must see: after
# each, the shard's next id sorts after every id of the table, with no step
# to remember (shardid preloaded, strict mode).
#
# One server, shardid.max_lead_ms = 10000; shard 7 in schema s.  Each case
# writes into a table of its own one id of shard 7 ahead of the clock by
# 1.5 s plus 100 ms per case (every case further ahead than the ones
# before, so that a floor one case raised cannot hide another's miss, and
# within what strict mode follows), then compares the shard's next id with
# the table's newest:
#   before_insert_trigger  a BEFORE ROW INSERT trigger sets NEW.id (the
#                          plan has the DEFAULT's next_id() call)
#   before_update_trigger  a BEFORE ROW UPDATE trigger sets NEW.id on an
#                          UPDATE that does not name the column
#   partition_insert       INSERT into a partition attached from a table
#                          without the DEFAULT (its parent has it), directly
#   partition_copy         COPY into such a partition
#   partition_update       UPDATE ... SET id through the parent of such a
#                          partition
#   inherit_child          INSERT into a table that INHERITs the shard
#                          table's DEFAULT-less after ALTER TABLE ... INHERIT
#   rule, view, instead_of, plpgsql, sql_function, generic_plan,
#   select_values, explain_analyze, savepoint, exception_block, merge_update,
#   numeric, on_conflict_other_key, copy_where: forms the hooks see (pinned)
#   tenants_many, tenant_null, tenant_collation, tenant_desc: the id column
#                          second in its index's key (100,000 rows of 10
#                          tenants; a NULL tenant; a text tenant under a
#                          non-C collation; a DESC leading column)
#   tenant_trigger         a BEFORE ROW INSERT trigger sets NEW.id in a
#                          table keyed (tenant_id, id)
# then a seeded randomized check of the skip scan against max(id) (below).
# Then a write of explicit ids through a partitioned table, while another
# role holds a lock on a partition the write does not touch, must not wait
# for it (lock_timeout = '1s': the INSERT succeeds).
# Found on 931231c: before_insert_trigger, before_update_trigger,
# partition_insert, partition_copy, partition_update and inherit_child gave
# a next id at or below the row just written (the others pass), and the
# INSERT under the lock failed with "canceling statement due to lock
# timeout" (the floor step reads every partition); before 931231c it
# succeeded.  Found on 5b1a2d3: tenant_trigger gave a next id below the row
# just written (a write where only a trigger sets ids read no later key
# column).
# shellcheck disable=SC2034  # read by test/lib.sh
SHARDID_PRELOAD=1	# the hooks are in sessions that load the library
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 173))
app_server x "$port" "shardid.max_lead_ms = 10000" || { fail "server did not start"; finish; }
q_at "$port" >/dev/null <<'SQL' || { fail "setup"; finish; }
CREATE EXTENSION shardid;
CREATE SCHEMA s;
SELECT shardid.register_shard(7, 's');
-- an id of shard 7, ms milliseconds ahead of the clock
CREATE FUNCTION public.ahead(ms int) RETURNS bigint LANGUAGE sql AS
$$ SELECT shardid.make_id(shardid.id_millis(shardid.min_id(clock_timestamp())) + ms, 7, 0) $$;
-- whether the shard's next id sorts after every id of table t
CREATE FUNCTION public.after(t regclass) RETURNS boolean LANGUAGE plpgsql AS
$$ DECLARE newest bigint; BEGIN
   EXECUTE format('SELECT max(id) FROM %s', t) INTO newest;
   RETURN shardid.next_id(7) > newest; END $$;
SQL

n=0
# check NAME TABLE SQL: run SQL (:ahead, replaced here, is the id to write), then the next
# id of shard 7 must sort after every id of TABLE
check() {
	local name=$1 table=$2 sql=$3 got
	n=$((n + 1))
	sql=${sql//:ahead/(public.ahead($((1500 + 100 * n))))}
	got=$(printf '%s;\nSELECT public.after(%s);\n' "$sql" "'$table'" | q_at "$port" 2>&1 | tail -1)
	echo "$name: next id after the table's ids: $got"
	expect "$got" = t "$name: the next id of shard 7 sorts after the id just written"
}

q_at "$port" >/dev/null <<'SQL' || fail "tables"
CREATE TABLE s.trg (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE FUNCTION s.set_id() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN NEW.id := public.ahead(TG_ARGV[0]::int); RETURN NEW; END $$;
CREATE TABLE s.upd (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
INSERT INTO s.upd (v) VALUES (1);
CREATE TABLE s.p (id bigint DEFAULT shardid.next_id(7), v int, PRIMARY KEY (id, v)) PARTITION BY RANGE (v);
CREATE TABLE s.p1 (id bigint, v int, PRIMARY KEY (id, v));
ALTER TABLE s.p ATTACH PARTITION s.p1 FOR VALUES FROM (0) TO (100);
CREATE TABLE s.par (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE s.ch (id bigint PRIMARY KEY, v int);
ALTER TABLE s.ch INHERIT s.par;
CREATE TABLE s.r (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE s.r_in (id bigint, v int);
CREATE RULE r_in AS ON INSERT TO s.r_in DO INSTEAD INSERT INTO s.r VALUES (NEW.id, NEW.v);
CREATE TABLE s.uv (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE VIEW s.uvv AS SELECT * FROM s.uv;
CREATE TABLE s.it (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE VIEW s.itv AS SELECT id, v FROM s.it;
CREATE FUNCTION s.itf() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN INSERT INTO s.it VALUES (NEW.id, NEW.v); RETURN NEW; END $$;
CREATE TRIGGER itv INSTEAD OF INSERT ON s.itv FOR EACH ROW EXECUTE FUNCTION s.itf();
CREATE TABLE s.pl (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE s.sf (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE FUNCTION s.put(bigint) RETURNS void LANGUAGE sql AS $$ INSERT INTO s.sf VALUES ($1, 1) $$;
CREATE TABLE s.gp (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE s.sv (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE s.ea (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE s.sp (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE s.eb (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE s.mg (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
INSERT INTO s.mg (v) VALUES (1);
CREATE TABLE s.nu (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
CREATE TABLE s.oc (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int UNIQUE);
CREATE TABLE s.cw (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
SQL

check before_insert_trigger s.trg "CREATE TRIGGER b BEFORE INSERT ON s.trg FOR EACH ROW EXECUTE FUNCTION s.set_id($((1500 + 100 * (n + 1))));
INSERT INTO s.trg (v) VALUES (1)"
check before_update_trigger s.upd "CREATE TRIGGER b BEFORE UPDATE ON s.upd FOR EACH ROW EXECUTE FUNCTION s.set_id($((1500 + 100 * (n + 1))));
UPDATE s.upd SET v = 2"
check partition_insert s.p "INSERT INTO s.p1 VALUES (:ahead, 1)"
check partition_copy s.p "DO \$\$ BEGIN EXECUTE format('COPY s.p1 FROM PROGRAM %L (FORMAT csv)', 'echo ' || :ahead || ',2'); END \$\$"
check partition_update s.p "UPDATE s.p SET id = :ahead WHERE v = 1"
check inherit_child s.par "INSERT INTO s.ch VALUES (:ahead, 1)"
check rule s.r "INSERT INTO s.r_in VALUES (:ahead, 1)"
check view s.uv "INSERT INTO s.uvv VALUES (:ahead, 1)"
check instead_of s.it "INSERT INTO s.itv VALUES (:ahead, 1)"
check plpgsql s.pl "DO \$\$ DECLARE x bigint := :ahead; BEGIN INSERT INTO s.pl VALUES (x, 1); END \$\$"
check sql_function s.sf "SELECT s.put(:ahead)"
check generic_plan s.gp "SET plan_cache_mode = force_generic_plan;
PREPARE g(bigint) AS INSERT INTO s.gp VALUES (\$1, 1); EXECUTE g(:ahead)"
check select_values s.sv "INSERT INTO s.sv SELECT * FROM (VALUES (:ahead, 1)) x"
check explain_analyze s.ea "EXPLAIN (ANALYZE, COSTS OFF) INSERT INTO s.ea VALUES (:ahead, 1)"
check savepoint s.sp "BEGIN; SAVEPOINT a; INSERT INTO s.sp VALUES (:ahead - 1, 1); ROLLBACK TO a;
INSERT INTO s.sp VALUES (:ahead, 2); COMMIT"
check exception_block s.eb "DO \$\$ BEGIN BEGIN INSERT INTO s.eb VALUES (:ahead - 1, 1); PERFORM 1 / 0;
EXCEPTION WHEN division_by_zero THEN NULL; END; INSERT INTO s.eb VALUES (:ahead, 2); END \$\$"
check merge_update s.mg "MERGE INTO s.mg t USING (SELECT 1 AS v) s ON t.v = s.v WHEN MATCHED THEN UPDATE SET id = :ahead"
check numeric s.nu "INSERT INTO s.nu VALUES (:ahead::numeric, 1)"
check on_conflict_other_key s.oc "INSERT INTO s.oc VALUES (:ahead, 1) ON CONFLICT (v) DO UPDATE SET v = 2"
check copy_where s.cw "DO \$\$ BEGIN EXECUTE format('COPY s.cw FROM PROGRAM %L (FORMAT csv) WHERE v > 0', 'echo ' || :ahead || ',2'); END \$\$"

# The id column second in its index's key (PRIMARY KEY (tenant_id, id)),
# read by a skip scan (src/stored.c, newest_by_skipping()): 100,000 rows
# of 10 tenants; a NULL tenant (a UNIQUE index); a text tenant under a
# case-insensitive ICU collation where the server has ICU, else C.utf8; a
# DESC leading column; a BEFORE ROW trigger that sets NEW.id on a table
# keyed (tenant_id, id), whose column such a write did not read before.
q_at "$port" >/dev/null <<'SQL' || fail "tables of tenants"
DO $$ BEGIN
  CREATE COLLATION s.ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
EXCEPTION WHEN feature_not_supported THEN
  CREATE COLLATION s.ci (provider = libc, locale = 'C.utf8');
END $$;
CREATE TABLE s.tk (tenant_id bigint, id bigint DEFAULT shardid.next_id(7), PRIMARY KEY (tenant_id, id));
INSERT INTO s.tk (tenant_id) SELECT g % 10 FROM generate_series(1, 100000) g;
CREATE TABLE s.tn (tenant_id bigint, id bigint DEFAULT shardid.next_id(7), UNIQUE (tenant_id, id));
INSERT INTO s.tn (tenant_id) SELECT nullif(g % 5, 0) FROM generate_series(1, 1000) g;
CREATE TABLE s.tt (tenant_id text COLLATE s.ci, id bigint DEFAULT shardid.next_id(7), UNIQUE (tenant_id, id));
INSERT INTO s.tt (tenant_id) SELECT (ARRAY['a', 'B', 'b', 'A', 'c'])[1 + g % 5] FROM generate_series(1, 1000) g;
CREATE TABLE s.td (tenant_id bigint, id bigint DEFAULT shardid.next_id(7));
CREATE UNIQUE INDEX ON s.td (tenant_id DESC, id);
INSERT INTO s.td (tenant_id) SELECT g % 5 FROM generate_series(1, 1000) g;
CREATE TABLE s.tg (tenant_id bigint, id bigint DEFAULT shardid.next_id(7), PRIMARY KEY (tenant_id, id));
INSERT INTO s.tg (tenant_id) SELECT g % 10 FROM generate_series(1, 1000) g;
SQL
check tenants_many s.tk "INSERT INTO s.tk VALUES (3, :ahead)"
check tenant_null s.tn "INSERT INTO s.tn VALUES (NULL, :ahead)"
check tenant_collation s.tt "INSERT INTO s.tt VALUES ('a', :ahead)"
check tenant_desc s.td "INSERT INTO s.td VALUES (0, :ahead)"
check tenant_trigger s.tg "CREATE TRIGGER b BEFORE INSERT ON s.tg FOR EACH ROW EXECUTE FUNCTION s.set_id($((1500 + 100 * (n + 1))));
INSERT INTO s.tg (tenant_id) VALUES (4)"

# A write of explicit ids through a partitioned table waits for no lock on
# a partition it does not write: role other, who may only UPDATE s.q2,
# holds LOCK TABLE s.q2 IN ACCESS EXCLUSIVE MODE while the superuser
# INSERTs explicit ids routed to s.q1, under lock_timeout = '1s'.
q_at "$port" >/dev/null <<'SQL' || fail "partitions q"
CREATE TABLE s.q (id bigint DEFAULT shardid.next_id(7), d int, PRIMARY KEY (id, d)) PARTITION BY RANGE (d);
CREATE TABLE s.q1 PARTITION OF s.q FOR VALUES FROM (0) TO (10);
CREATE TABLE s.q2 PARTITION OF s.q FOR VALUES FROM (10) TO (20);
CREATE ROLE other LOGIN;
GRANT USAGE ON SCHEMA s TO other;
GRANT UPDATE ON s.q2 TO other;
SQL
PGOPTIONS="-c statement_timeout=20s" q_at "$port" -U other -c "BEGIN" -c "LOCK s.q2 IN ACCESS EXCLUSIVE MODE" \
	-c "SELECT pg_sleep(20)" >/dev/null 2>&1 &
locker=$!
locked() { [ "$(q_at "$port" -c "SELECT count(*) FROM pg_locks WHERE relation = 's.q2'::regclass AND granted")" = 1 ]; }
wait_until "other's lock on s.q2" locked
got=$(q_at "$port" -c "SET lock_timeout = '1s'" \
	-c "INSERT INTO s.q VALUES (public.ahead($((1500 + 100 * (n + 1)))), 1)" -c "SELECT 'written'" 2>&1)
echo "explicit ids into s.q1 while s.q2 is locked: $got"
expect "$got" = written "an INSERT of explicit ids into s.q1 under another role's lock on s.q2"
q_at "$port" -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = 'other'" >/dev/null
wait "$locker"

# Seeded randomized check of what the floor step reads where the id column
# is second in its index's key: in schema r (shard 9), tables whose
# leading column is bigint NULLS LAST, text under the collation above,
# bigint DESC (NULLS FIRST), bigint NULLS FIRST with id DESC, text DESC
# NULLS LAST with id DESC; each round inserts rows of random tenants (NULL
# among them) with ids of shard 9 and of other shards (2% far ahead, above
# the bound: beyond_id), deletes rows (sometimes the shard's newest),
# aborts an insert of a newer id, then compares shardid.stored_ids(9)'s
# newest_id and beyond_id of each table with max(id) of the shard.  The
# rounds read by skip scans; table r.f (300 tenants in a small index)
# must be read by the scan instead (the DEBUG1 line), with the same result.
q_at "$port" >/dev/null <<'SQL' || fail "randomized tables"
CREATE SCHEMA r;
SELECT shardid.register_shard(9, 'r');
-- the collation of the text leading column: a case-insensitive ICU one
-- where the server has ICU ('a' = 'A' < 'b' = 'B'), else C.utf8
DO $$ BEGIN
  CREATE COLLATION r.coll (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
EXCEPTION WHEN feature_not_supported THEN
  CREATE COLLATION r.coll (provider = libc, locale = 'C.utf8');
END $$;
CREATE TABLE r.a (tenant_id bigint, id bigint);
CREATE UNIQUE INDEX ON r.a (tenant_id, id);
CREATE TABLE r.b (tenant_id text COLLATE r.coll, id bigint);
CREATE INDEX ON r.b (tenant_id, id);
CREATE TABLE r.c (tenant_id bigint, id bigint);
CREATE INDEX ON r.c (tenant_id DESC, id);
CREATE TABLE r.d (tenant_id bigint, id bigint);
CREATE INDEX ON r.d (tenant_id NULLS FIRST, id DESC);
CREATE TABLE r.e (tenant_id text COLLATE r.coll, id bigint);
CREATE INDEX ON r.e (tenant_id DESC NULLS LAST, id DESC);
-- one round: rows of random tenants (NULL among them) with ids of shard 9
-- and of other shards, a few far ahead, deletions, an aborted insert; then
-- the floor step's newest id of the shard in each table against max(id)
CREATE FUNCTION r.round(tenants int, rows_ int) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  now_ms bigint := shardid.id_millis(shardid.min_id(clock_timestamp()));
  t text; tenant text; bad text := ''; got record; want_newest bigint; want_beyond bigint;
BEGIN
  FOREACH t IN ARRAY ARRAY['r.a', 'r.b', 'r.c', 'r.d', 'r.e'] LOOP
    -- a tenant of k in 1..$1: a letter of either case, or a number
    tenant := CASE WHEN t IN ('r.b', 'r.e') THEN '(ARRAY[''a'', ''B'', ''b'', ''A'', ''c'', ''D'', ''E'', ''f'', ''G'', ''h''])[k]'
                   ELSE 'k * 1000003 - 5000000' END;
    EXECUTE format($i$INSERT INTO %s
      SELECT CASE WHEN random() < 0.1 THEN NULL ELSE %s END,
             shardid.make_id(CASE WHEN random() < 0.02 THEN $3 + 864000000 + (random() * 1000)::bigint
                                  ELSE $3 - 1000 - (random() * 200)::bigint END,
                             (ARRAY[9, 9, 9, 8, 10, 0, 8191])[1 + (random() * 6)::int],
                             (random() * 1023)::int)
      FROM (SELECT 1 + (random() * ($1 - 1))::int AS k FROM generate_series(1, $2)) g
      ON CONFLICT DO NOTHING$i$,
      t, tenant) USING tenants, rows_, now_ms;
    -- deletions: random rows, and sometimes the shard's newest ones
    EXECUTE format('DELETE FROM %s WHERE random() < 0.1', t);
    IF random() < 0.5 THEN
      EXECUTE format('DELETE FROM %s WHERE id IN (SELECT id FROM %s WHERE shardid.id_shard(id) = 9 ORDER BY id DESC LIMIT 3)', t, t);
    END IF;
    -- an aborted insert of a newer id of the shard
    BEGIN
      EXECUTE format('INSERT INTO %s SELECT NULL, shardid.make_id($1 - 10, 9, 5) UNION ALL SELECT %s, shardid.make_id($1 - 10, 9, 6) FROM (SELECT 1 AS k) g', t, tenant)
        USING now_ms;
      RAISE EXCEPTION 'undo';
    EXCEPTION WHEN raise_exception THEN NULL;
    END;
    EXECUTE format('SELECT max(id) FILTER (WHERE shardid.id_millis(id) < $1), max(id) FILTER (WHERE shardid.id_millis(id) >= $1)
                    FROM %s WHERE shardid.id_shard(id) = 9', t) INTO want_newest, want_beyond USING now_ms;
    SELECT newest_id, beyond_id INTO got FROM shardid.stored_ids(9) s WHERE s.tab = t::regclass AND s.id_column = 'id';
    IF got.newest_id IS DISTINCT FROM want_newest OR got.beyond_id IS DISTINCT FROM want_beyond THEN
      bad := bad || format(' %s: read %s/%s, max(id) %s/%s;', t, got.newest_id, got.beyond_id, want_newest, want_beyond);
    END IF;
  END LOOP;
  RETURN bad;
END $$;
SQL
got=$(q_at "$port" 2>&1 <<'SQL'
SET client_min_messages = debug1;
SELECT setseed(0.25);
SELECT 'mismatches:' || string_agg(r.round(t, n), '')
  FROM (VALUES (2, 500), (5, 2000), (10, 3000), (10, 3000), (3, 1000), (10, 5000)) v(t, n);
SQL
)
echo "$got" | grep -v '^DEBUG:  shardid: reading the ids'
expect "$(echo "$got" | grep '^mismatches:')" = "mismatches:" "skip scans: the newest id of shard 9 in each random table (every table matches max(id))"
expect "$(echo "$got" | grep -c 'by a scan, its skip scan past')" = 0 "index reads past the skip scan's budget in the rounds"
got=$(q_at "$port" 2>&1 <<'SQL'
CREATE TABLE r.f (tenant_id bigint, id bigint, PRIMARY KEY (tenant_id, id));
INSERT INTO r.f SELECT g % 300, shardid.make_id(shardid.id_millis(shardid.min_id(clock_timestamp())) - 5000 + g % 7,
                                                 9 + g % 2, g % 1000) FROM generate_series(1, 3000) g;
SET client_min_messages = debug1;
SELECT 'newest:' || (newest_id = (SELECT max(id) FROM r.f WHERE shardid.id_shard(id) = 9))
  FROM shardid.stored_ids(9) WHERE tab = 'r.f'::regclass AND id_column = 'id';
SQL
)
echo "$got"
expect "$(echo "$got" | grep '^newest:')" = newest:true "r.f read by the scan: its newest id of shard 9"
expect "$(echo "$got" | grep -c 'by a scan, its skip scan past')" = 2 "index reads past the skip scan's budget (r.f: at and above the bound)"
finish
