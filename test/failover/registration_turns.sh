#!/usr/bin/env bash
# Registration (the registry's trigger) and the floor step after DDL or a
# write of explicit ids, in several sessions at once (src/floor.c,
# registration_turn()): the step waits for a registration of its schema
# and sees its row, and no session waits, or deadlocks, where the sessions'
# own locks make no circle.  One server, shardid preloaded (the hooks of
# writes of explicit ids), deadlock_timeout = 100ms; every session's steps
# are ordered by what the others hold or wait for in pg_locks (public.await()),
# never by sleeps:
#   index_first    an index built in an open transaction on a table of a
#                  schema, then the schema registered by another session:
#                  the registration waits for the index, and reads the id
#                  ahead of the clock through it
#   other_schema   a transaction holds an ACCESS EXCLUSIVE lock on a table
#                  of schema s1 (ALTER TABLE), the registry's rows are
#                  written for s1 by another session (pg_restore's COPY),
#                  whose trigger waits for that table; the transaction
#                  then builds an index in schema public
#   other_register the same, the registration by register_shard() of two
#                  schemas in one transaction, the first one registered
#   same_schema    the same, the index built on another table of s1
#   key_after_read the registry's row written for schema s6 (pg_restore's
#                  COPY) reads s6.b, which has no key yet, then waits for
#                  s6.a, which a transaction holds (ALTER TABLE); a third
#                  session adds s6.b's PRIMARY KEY meanwhile: it waits for
#                  the registration's row, then reads s6.b through its key
#   upgrade        two transactions each build an index in public, then
#                  each registers a schema of its own
#   write_then_ddl a registration in an open transaction, an INSERT of an
#                  explicit id into a table of that schema by another
#                  session, then ALTER TABLE of that table by the first
#   unrelated      an explicit-id INSERT into a table of an unregistered
#                  schema, and an index on a temporary table, while a
#                  registration is open (lock_timeout = '1s')
#   temp_index     a role that is no superuser holds an index on her
#                  temporary table in an open transaction; add_shards()
#                  (lock_timeout = '1s')
# Found on ba883c5: other_schema, other_register, same_schema, upgrade and
# write_then_ddl ended in "deadlock detected", unrelated and temp_index in
# "canceling statement due to lock timeout" (one lock for every schema of
# the database, held by registration to its transaction's end, shared by
# every step after an index on any table, temporary ones too).  Before
# ba883c5, index_first left the shard's floor NULL; before a registration
# kept the locks of the tables it read until its row was in place,
# key_after_read did (the third session's step, which holds ACCESS
# EXCLUSIVE on s6.b, went on before the row was written).
# shellcheck disable=SC2034  # read by test/lib.sh
SHARDID_PRELOAD=1
. "$(dirname "$0")/../lib.sh" failover

port=$((SHARDID_PORT_BASE + 181))
app_server x "$port" "shardid.max_lead_ms = 10000" "deadlock_timeout = '100ms'" ||
	{ fail "server did not start"; finish; }
{ q_at "$port" -c "CREATE EXTENSION shardid" && interleave_sql | q_at "$port"; } >/dev/null ||
	{ fail "setup"; finish; }
q_at "$port" >/dev/null <<'SQL' || { fail "setup"; finish; }
CREATE TABLE public.x (v int);
CREATE TABLE public.x2a (v int);
CREATE TABLE public.x2b (v int);
CREATE TABLE public.legacy (id bigint PRIMARY KEY DEFAULT shardid.next_id(99), v int);
CREATE ROLE mallory LOGIN;
CREATE SCHEMA app_template;
CREATE TABLE app_template.t (id bigint PRIMARY KEY, v int);
CREATE SCHEMA s0; CREATE TABLE s0.t (id bigint NOT NULL, v int);
INSERT INTO s0.t VALUES (public.ahead(10, 8000), 1);
CREATE SCHEMA s1; CREATE TABLE s1.a (id bigint PRIMARY KEY, v int); CREATE TABLE s1.b (id bigint PRIMARY KEY, v int);
CREATE SCHEMA s1b; CREATE TABLE s1b.a (id bigint PRIMARY KEY, v int); CREATE SCHEMA s1c;
CREATE SCHEMA s1d; CREATE TABLE s1d.a (id bigint PRIMARY KEY, v int); CREATE TABLE s1d.b (id bigint PRIMARY KEY, v int);
CREATE SCHEMA s2a; CREATE SCHEMA s2b;
CREATE SCHEMA s3; CREATE TABLE s3.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(3), v int);
CREATE SCHEMA s4;
CREATE SCHEMA s6; CREATE TABLE s6.b (id bigint NOT NULL, v int); CREATE TABLE s6.a (id bigint PRIMARY KEY, v int);
INSERT INTO s6.b VALUES (public.ahead(6, 8000), 1);
SQL


echo "== index_first"
session i0 "BEGIN; CREATE INDEX ON s0.t (id); SELECT public.await('SELECT public.waits(NULL) OR EXISTS (SELECT FROM public.gate WHERE name = ''r0'')'); COMMIT"
wait_until "i0's index" holds s0.t ShareLock
session r0 "SELECT shardid.register_shard(10, 's0')"
wait $!
q_at "$port" -c "INSERT INTO public.gate VALUES ('r0')" >/dev/null
wait
sessions_clean i0 r0
expect "$(q_at "$port" -c "SELECT shardid.next_id(10) > (SELECT max(id) FROM s0.t)")" = t \
	"index_first: the next id of shard 10 sorts after the id of s0.t"

echo "== other_schema"
session d1 "BEGIN; ALTER TABLE s1.a ADD COLUMN c int; SELECT public.await('SELECT public.waits(''s1.a'')'); CREATE INDEX ON public.x (v); COMMIT"
wait_until "d1's ALTER TABLE" holds s1.a AccessExclusiveLock
session r1 "INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (1, 's1')"
wait
sessions_clean d1 r1

echo "== other_register"
session d1b "BEGIN; ALTER TABLE s1b.a ADD COLUMN c int; SELECT public.await('SELECT public.waits(''s1b.a'')'); CREATE INDEX ON public.x (v); COMMIT"
wait_until "d1b's ALTER TABLE" holds s1b.a AccessExclusiveLock
session r1b "BEGIN; SELECT shardid.register_shard(12, 's1c'); SELECT shardid.register_shard(11, 's1b'); COMMIT"
wait
sessions_clean d1b r1b

echo "== same_schema"
session d1d "BEGIN; ALTER TABLE s1d.a ADD COLUMN c int; SELECT public.await('SELECT public.waits(''s1d.a'')'); CREATE INDEX ON s1d.b (v); COMMIT"
wait_until "d1d's ALTER TABLE" holds s1d.a AccessExclusiveLock
session r1d "INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (13, 's1d')"
wait
sessions_clean d1d r1d

echo "== key_after_read"
session a6 "BEGIN; ALTER TABLE s6.a ADD COLUMN c int; SELECT public.await('SELECT public.waits(''s6.b'') OR EXISTS (SELECT FROM public.gate WHERE name = ''b6'')'); COMMIT"
wait_until "a6's ALTER TABLE" holds s6.a AccessExclusiveLock
session r6 "INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (6, 's6')"
wait_until "r6 waiting for s6.a" waits_for s6.a
session b6 "ALTER TABLE s6.b ADD PRIMARY KEY (id)"
wait $!
q_at "$port" -c "INSERT INTO public.gate VALUES ('b6')" >/dev/null
wait
sessions_clean a6 r6 b6
expect "$(q_at "$port" -c "SELECT shardid.next_id(6) > (SELECT max(id) FROM s6.b)")" = t \
	"key_after_read: the next id of shard 6 sorts after the id of s6.b"

echo "== upgrade"
# each registers once the other holds its index, or has registered (and committed)
session d2a "BEGIN; CREATE INDEX ON public.x2a (v); SELECT public.await('SELECT public.holds(''public.x2b'', ''ShareLock'') OR EXISTS (SELECT FROM shardid.shard_registry WHERE shard = 22)'); SELECT shardid.register_shard(21, 's2a'); COMMIT"
session d2b "BEGIN; CREATE INDEX ON public.x2b (v); SELECT public.await('SELECT public.holds(''public.x2a'', ''ShareLock'') OR EXISTS (SELECT FROM shardid.shard_registry WHERE shard = 21)'); SELECT shardid.register_shard(22, 's2b'); COMMIT"
wait
sessions_clean d2a d2b

echo "== write_then_ddl"
session r3 "BEGIN; SELECT shardid.register_shard(3, 's3'); SELECT public.await('SELECT public.waits(NULL) OR EXISTS (SELECT FROM public.gate WHERE name = ''w3'')'); ALTER TABLE s3.t ADD COLUMN z int; COMMIT"
wait_until "r3's registration" holds shardid.shard_registry RowExclusiveLock
q_at "$port" >"$SHARDID_TMP/w3.out" 2>&1 -c "INSERT INTO s3.t (id, v) VALUES (public.ahead(3, 3500), 1)" &&
	q_at "$port" -c "INSERT INTO public.gate VALUES ('w3')" >/dev/null
wait
sessions_clean r3 w3
expect "$(q_at "$port" -c "SELECT shardid.next_id(3) > (SELECT max(id) FROM s3.t)")" = t \
	"write_then_ddl: the next id of shard 3 sorts after the id written"

echo "== unrelated"
session r4 "BEGIN; SELECT shardid.register_shard(4, 's4'); SELECT public.await('SELECT EXISTS (SELECT FROM public.gate WHERE name = ''r4'')'); COMMIT"
wait_until "r4's registration" holds shardid.shard_registry RowExclusiveLock
q_at "$port" >"$SHARDID_TMP/w4.out" 2>&1 -c "SET lock_timeout = '1s'" -c "INSERT INTO public.legacy (id) VALUES (public.ahead(99, 100))"
q_at "$port" >"$SHARDID_TMP/i4.out" 2>&1 -c "SET lock_timeout = '1s'" -c "CREATE TEMP TABLE tt (v int)" -c "CREATE INDEX ON tt (v)"
q_at "$port" -c "INSERT INTO public.gate VALUES ('r4')" >/dev/null
wait
sessions_clean r4 w4 i4

echo "== temp_index"
PGUSER=mallory q_at "$port" >"$SHARDID_TMP/m5.out" 2>&1 -c "BEGIN" -c "CREATE TEMP TABLE m (v int)" -c "CREATE INDEX ON m (v)" \
	-c "SELECT public.await('SELECT EXISTS (SELECT FROM public.gate WHERE name = ''m5'')')" -c "COMMIT" &
temp_index_held() {
	# her table is not hers to see in pg_class yet: her lock, by her role
	[ "$(q_at "$port" -c "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
	                         WHERE a.usename = 'mallory' AND l.locktype = 'relation' AND l.mode = 'ShareLock' AND l.granted")" = 1 ]
}
wait_until "mallory's index" temp_index_held
q_at "$port" >"$SHARDID_TMP/a5.out" 2>&1 -c "SET client_min_messages = warning" -c "SET lock_timeout = '1s'" \
	-c "CALL shardid.add_shards('app_template', first_shard => 50, last_shard => 51)"
q_at "$port" -c "INSERT INTO public.gate VALUES ('m5')" >/dev/null
wait
sessions_clean m5 a5
finish
