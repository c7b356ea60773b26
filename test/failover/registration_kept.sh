#!/usr/bin/env bash
# The tables a registration read, kept locked (ACCESS SHARE) until its row
# is in place (src/stored.c, shardid_stored_keep_locks(); src/floor.c,
# registration_lock()'s comment): kept no longer than that, never while
# the registration waits for another table, never piled up.  One server,
# shardid preloaded, deadlock_timeout = 100ms; sessions ordered by what
# they hold or wait for in pg_locks (public.await()), never by sleeps:
#   key_during_read      a transaction holds s6.b (ALTER TABLE), the
#                        registry's row for s6 is written (it reads s6.a,
#                        which has no key yet, then waits for s6.b); the
#                        transaction then adds s6.a's PRIMARY KEY and
#                        commits: both end without an error and the floor
#                        covers s6.a's id, which is ahead of the clock
#   migrate_during_read  the same, the transaction's second statement an
#                        ADD COLUMN of s7.a
#   partition_during_read  the same, the table held (LOCK TABLE) a
#                        partition of s18.p, s18.a altered after
#   held_open            register_shard() in a transaction that stays open:
#                        another session's ALTER TABLE of a table of that
#                        schema does not wait for it (lock_timeout = '1s')
#   prepared             the same, the transaction prepared (PREPARE
#                        TRANSACTION) before the ALTER TABLE
#   savepoints           registrations in savepoints released or rolled
#                        back, and in a PL/pgSQL block with an EXCEPTION
#                        clause: no lock kept after each statement, none
#                        at the transaction's end, no WARNING
#   error_in_trigger     a registration's trigger fails (lock timeout) in
#                        a block with an EXCEPTION clause after reading a
#                        table: nothing kept, and a later read of another
#                        shard (stored_ids()) keeps nothing either
#   many                 500 schemas of 3 tables registered by one INSERT,
#                        then all updated by one UPDATE: each row's trigger
#                        holds the 3 tables of its own schema (a probe, a
#                        later BEFORE ROW trigger, counts them), none after
#                        the statement
# Found on 3761e49: key_during_read, migrate_during_read and
# partition_during_read ended in "deadlock detected" (the registration
# held s6.a, s7.a, s18.a while it waited for the other table), held_open
# and prepared in "canceling statement due to lock timeout" (the last
# schema's tables kept to the transaction's end), savepoints,
# error_in_trigger and many with locks kept after the statements.  Before 3761e49, key_during_read
# left shard 6's floor NULL (the key's step ran before the row existed, the
# trigger had read s6.a before the key).
# shellcheck disable=SC2034  # read by test/lib.sh
SHARDID_PRELOAD=1
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 187))
app_server x "$port" "shardid.max_lead_ms = 10000" "deadlock_timeout = '100ms'" "max_prepared_transactions = 2" ||
	{ fail "server did not start"; finish; }
{ q_at "$port" -c "CREATE EXTENSION shardid" && interleave_sql | q_at "$port"; } >/dev/null ||
	{ fail "setup"; finish; }
q_at "$port" >/dev/null <<'SQL' || { fail "setup"; finish; }
-- this session's ACCESS SHARE locks on the tables of the schemas named like pattern
CREATE FUNCTION public.mine(pattern text) RETURNS bigint LANGUAGE sql AS
$$ SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE l.pid = pg_backend_pid() AND l.mode = 'AccessShareLock' AND c.relkind = 'r' AND n.nspname LIKE pattern $$;
CREATE SCHEMA s6; CREATE TABLE s6.a (id bigint NOT NULL, v int); CREATE TABLE s6.b (id bigint PRIMARY KEY, v int);
INSERT INTO s6.a VALUES (public.ahead(6, 8000), 1);
DO $$ BEGIN FOR s IN 7..17 LOOP
  EXECUTE format('CREATE SCHEMA s%s; CREATE TABLE s%s.a (id bigint PRIMARY KEY, v int); CREATE TABLE s%s.b (id bigint PRIMARY KEY, v int)', s, s, s);
END LOOP; END $$;
CREATE SCHEMA s18; CREATE TABLE s18.a (id bigint PRIMARY KEY, v int);
CREATE TABLE s18.p (id bigint NOT NULL, v int) PARTITION BY RANGE (v);
CREATE TABLE s18.p1 PARTITION OF s18.p FOR VALUES FROM (0) TO (10);
CREATE TABLE s18.p2 PARTITION OF s18.p FOR VALUES FROM (10) TO (20);
DO $$ BEGIN FOR s IN 100..599 LOOP
  EXECUTE format('CREATE SCHEMA m%s; CREATE TABLE m%s.a (id bigint PRIMARY KEY); CREATE TABLE m%s.b (id bigint PRIMARY KEY); CREATE TABLE m%s.c (id bigint PRIMARY KEY)', s, s, s, s);
END LOOP; END $$;
-- the probe of "many": fires after registry_set_floor (triggers fire in name order)
CREATE TABLE public.probe (shard int, locks bigint);
CREATE FUNCTION public.probe() RETURNS trigger LANGUAGE plpgsql AS
$$ BEGIN INSERT INTO public.probe VALUES (NEW.shard, public.mine('m%')); RETURN NEW; END $$;
SQL


echo "== key_during_read"
session d6 "BEGIN; ALTER TABLE s6.b ADD COLUMN c int; SELECT public.await('SELECT public.waits(''s6.b'')'); ALTER TABLE s6.a ADD PRIMARY KEY (id); COMMIT"
wait_until "d6's ALTER TABLE" holds s6.b AccessExclusiveLock
session r6 "INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (6, 's6')"
wait
sessions_clean -w d6 r6
expect "$(q_at "$port" -c "SELECT shardid.next_id(6) > (SELECT max(id) FROM s6.a) AND EXISTS (SELECT FROM shardid.shard_registry WHERE shard = 6)")" = t \
	"key_during_read: shard 6 registered, its next id sorts after the id of s6.a"

echo "== migrate_during_read"
session d7 "BEGIN; ALTER TABLE s7.b ADD COLUMN c int; SELECT public.await('SELECT public.waits(''s7.b'')'); ALTER TABLE s7.a ADD COLUMN d int; COMMIT"
wait_until "d7's ALTER TABLE" holds s7.b AccessExclusiveLock
session r7 "INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (7, 's7')"
wait
sessions_clean -w d7 r7

echo "== partition_during_read"
session d18 "BEGIN; LOCK TABLE s18.p2 IN ACCESS EXCLUSIVE MODE; SELECT public.await('SELECT public.waits(''s18.p2'')'); ALTER TABLE s18.a ADD COLUMN d int; COMMIT"
wait_until "d18's ALTER TABLE" holds s18.p2 AccessExclusiveLock
session r18 "INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (18, 's18')"
wait
sessions_clean -w d18 r18

echo "== held_open"
session r8 "BEGIN; SELECT shardid.register_shard(8, 's8'); SELECT public.await('SELECT EXISTS (SELECT FROM public.gate WHERE name = ''r8'')'); COMMIT"
wait_until "r8's registration" holds shardid.shard_registry RowExclusiveLock
q_at "$port" >"$SHARDID_TMP/d8.out" 2>&1 -c "SET lock_timeout = '1s'" -c "ALTER TABLE s8.a ADD COLUMN c int"
q_at "$port" -c "INSERT INTO public.gate VALUES ('r8')" >/dev/null
wait
sessions_clean -w r8 d8

echo "== prepared"
q_at "$port" >"$SHARDID_TMP/p9.out" 2>&1 -c "BEGIN" -c "SELECT shardid.register_shard(9, 's9')" -c "PREPARE TRANSACTION 'p9'"
q_at "$port" >"$SHARDID_TMP/d9.out" 2>&1 -c "SET lock_timeout = '1s'" -c "ALTER TABLE s9.a ADD COLUMN c int"
q_at "$port" >>"$SHARDID_TMP/p9.out" 2>&1 -c "COMMIT PREPARED 'p9'"
sessions_clean -w p9 d9

echo "== savepoints"
q_at "$port" >"$SHARDID_TMP/sp.out" 2>&1 <<'SQL'
BEGIN;
SAVEPOINT a;
SELECT shardid.register_shard(10, 's10');
SELECT 'register', public.mine('s1%');
ROLLBACK TO a;
SELECT 'rolled back', public.mine('s1%');
SAVEPOINT b;
INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (11, 's11'), (12, 's12');
RELEASE b;
SELECT 'released', public.mine('s1%');
DO $$ BEGIN PERFORM shardid.register_shard(13, 's13'); RAISE EXCEPTION 'rolled back'; EXCEPTION WHEN raise_exception THEN NULL; END $$;
SELECT 'block', public.mine('s1%');
SELECT shardid.register_shard(14, 's14');
COMMIT;
SELECT 'committed', public.mine('s1%'), (SELECT string_agg(shard::text, ',' ORDER BY shard) FROM shardid.shard_registry WHERE shard BETWEEN 10 AND 14);
SQL
sessions_clean -w sp
expect "$(grep -c '|0' "$SHARDID_TMP/sp.out")" = 5 "savepoints: no lock kept after any statement"
expect "$(grep -c '|0|11,12,14$' "$SHARDID_TMP/sp.out")" = 1 "savepoints: shards 11, 12 and 14 registered"

echo "== error_in_trigger"
q_at "$port" -c "SELECT shardid.register_shard(17, 's17')" >/dev/null
session h15 "BEGIN; ALTER TABLE s15.b ADD COLUMN c int; SELECT public.await('SELECT EXISTS (SELECT FROM public.gate WHERE name = ''h15'')'); COMMIT"
wait_until "h15's ALTER TABLE" holds s15.b AccessExclusiveLock
q_at "$port" >"$SHARDID_TMP/e15.out" 2>&1 <<'SQL'
BEGIN;
SET LOCAL lock_timeout = '300ms';
DO $$ BEGIN INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (15, 's15');
   EXCEPTION WHEN lock_not_available THEN RAISE NOTICE 'caught: %', SQLERRM; END $$;
SELECT 'after the error', public.mine('s1%');
SELECT count(*) FROM shardid.stored_ids(17);
SELECT 'after a read of s17', public.mine('s1%');
INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (16, 's16');
SELECT 'after s16', public.mine('s1%');
COMMIT;
SQL
q_at "$port" -c "INSERT INTO public.gate VALUES ('h15')" >/dev/null
wait
sessions_clean -w e15 h15
expect "$(grep -c 'caught: canceling statement due to lock timeout' "$SHARDID_TMP/e15.out")" = 1 "error_in_trigger: the trigger's lock timeout caught"
expect "$(grep -c '|0$' "$SHARDID_TMP/e15.out")" = 3 "error_in_trigger: no lock kept"

echo "== many"
q_at "$port" >"$SHARDID_TMP/many.out" 2>&1 <<'SQL'
CREATE TRIGGER registry_zz_probe BEFORE INSERT OR UPDATE ON shardid.shard_registry FOR EACH ROW EXECUTE FUNCTION public.probe();
BEGIN;
INSERT INTO shardid.shard_registry (shard, schema_name) SELECT s, 'm' || s FROM generate_series(100, 599) s;
SELECT 'after insert', public.mine('m%');
UPDATE shardid.shard_registry SET floor_id = NULL WHERE shard BETWEEN 100 AND 599;
SELECT 'after update', public.mine('m%');
COMMIT;
DROP TRIGGER registry_zz_probe ON shardid.shard_registry;
SELECT 'probe', count(*), min(locks), max(locks) FROM public.probe WHERE shard BETWEEN 100 AND 599;
SQL
sessions_clean -w many
expect "$(grep -c '^after .*|0$' "$SHARDID_TMP/many.out")" = 2 "many: no lock kept after the statements"
expect "$(grep '^probe' "$SHARDID_TMP/many.out")" = "probe|1000|3|3" "many: each row's trigger holds its own schema's 3 tables, no more"
finish
