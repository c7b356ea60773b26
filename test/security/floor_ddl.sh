#!/usr/bin/env bash
# What a table owner's DDL in a shard's schema does through the event
# trigger shardid_floor, which reads the table and writes the registry as
# the bootstrap superuser.
#
# app (no superuser) owns schemas s5 and s6, both registered; the server
# follows ids up to shardid.max_lead_ms = 10000 (plus 1250 ms) ahead.
# 1. Bound: app stores one id 30 days ahead and one 5 s ahead in s5.t and
#    makes an index on it: a WARNING names s5.t, the shard's ids start past
#    the id 5 s ahead (strict mode; the registry's row is a superuser's DDL's
#    to write), H stays within an hour of the clock.
# 2. Her code: an index on (app.imm(v), id) (id a later key column, read by
#    a scan) and a partial index whose predicate calls app.imm(): her
#    functions run while PostgreSQL builds the indexes, as app; the floor
#    read that follows never runs them as a superuser.
# 3. Her open transaction: app makes an index on s5.u (whose newest id is
#    above the floor) and keeps her transaction open.  A superuser's CREATE
#    INDEX on another table of shard 5 (what a restore into the schema
#    does) must not wait for her: found on 108764a, it waits on the
#    registry row her event trigger updated (lock_timeout = '2s': "canceling
#    statement due to lock timeout ... while locking tuple ... in relation
#    shard_registry"), as every raise_floor(), apply_floors(), registration
#    and shardid-move of the shard does, for as long as she likes.
# 4. Two migrations of app on two tables of shard 6, which PostgreSQL runs
#    one after the other (A: CREATE INDEX on s6.t1, then ALTER TABLE s6.t2;
#    B: ALTER TABLE s6.t2 ADD CONSTRAINT ... UNIQUE) must not deadlock:
#    found on 108764a, B's event trigger waits for A's registry row while
#    holding s6.t2, A waits for s6.t2: "deadlock detected".
# 5. DDL that brings no rows reads no index: ALTER TABLE ... ADD CONSTRAINT
#    ... CHECK ... NOT VALID (an ACCESS EXCLUSIVE lock PostgreSQL holds for
#    a moment) and the ATTACH PARTITION of an empty table (which brings
#    nothing the other partitions did not hold): found on 108764a, each
#    scans every index of the table (of every partition) in which a bigint
#    column is a later key column, twice per column (the newest id, and the
#    newest beyond the bound), under the command's lock: 1.2 s for 3M rows
#    of PRIMARY KEY (tenant_id, id) on a debug build, 2.4 s to attach an
#    empty partition next to two of 1M rows.  Counted with pg_stat's
#    idx_scan, never timed.
SHARDID_TMP=""		# a server of its own
. "$(dirname "$0")/../lib.sh" servers
chmod 777 "$SHARDID_TMP"

strict_server floorddl $((SHARDID_PORT_BASE + 171))
cluster_conf floorddl "shardid.max_lead_ms = 10000"
cluster_conf floorddl "deadlock_timeout = '200ms'"
cluster_stop floorddl && cluster_start floorddl || { fail "restart with shardid.max_lead_ms = 10000"; finish; }
export PGDATABASE=app
attacker_setup app >/dev/null
q >/dev/null <<'SQL'
CREATE EXTENSION shardid;
-- an id of a shard a given time from now
CREATE FUNCTION public.id_at(shard int, ahead interval, seq int) RETURNS bigint LANGUAGE sql AS $$
    SELECT shardid.make_id((extract(epoch FROM clock_timestamp() + ahead) * 1000)::bigint
                           - (SELECT i.epoch_ms FROM shardid.info() i), shard, seq) $$;
GRANT EXECUTE ON FUNCTION public.id_at(int, interval, int) TO app;
CREATE SCHEMA s5 AUTHORIZATION app;
CREATE SCHEMA s6 AUTHORIZATION app;
CREATE SCHEMA s7 AUTHORIZATION app;
SET ROLE app;
CREATE FUNCTION app.imm(int) RETURNS int IMMUTABLE LANGUAGE plpgsql AS 'BEGIN PERFORM app.hit(); RETURN $1; END';
CREATE TABLE s5.t (id bigint, v int);
CREATE TABLE s5.u (id bigint, v int);
CREATE TABLE s6.t1 (id bigint PRIMARY KEY, v int);
CREATE TABLE s6.t2 (id bigint PRIMARY KEY, v int);
CREATE TABLE s7.big (tenant_id bigint, id bigint, v int, PRIMARY KEY (tenant_id, id));
CREATE TABLE s7.p (tenant_id bigint, id bigint, m int, PRIMARY KEY (m, tenant_id, id)) PARTITION BY LIST (m);
CREATE TABLE s7.p1 PARTITION OF s7.p FOR VALUES IN (1);
CREATE TABLE s7.p3 (tenant_id bigint, id bigint, m int, PRIMARY KEY (m, tenant_id, id));
RESET ROLE;
SELECT shardid.register_shard(5, 's5'), shardid.register_shard(6, 's6'), shardid.register_shard(7, 's7');
SQL

# 1. an id 30 days ahead and one 5 s ahead, then an index
q -U app -c "INSERT INTO s5.t VALUES (public.id_at(5, '30 days', 0), 1), (public.id_at(5, '5 s', 0), 2)" >/dev/null ||
	fail "app's rows in s5.t"
out=$(q -U app -c "CREATE INDEX ON s5.t (id)" 2>&1)
echo "1. app's CREATE INDEX on s5.t: $(echo "$out" | head -1)"
echo "$out" | grep -q '^WARNING:  table s5\.t holds an id of shard 5 that is [0-9]* ms ahead' ||
	fail "1. no WARNING naming s5.t for the id 30 days ahead"
# her DDL raises the shard's state and H (strict mode), never the registry's
# row, which her open transaction would hold (part 3)
expect "$(q -c "SELECT floor_id IS NULL FROM shardid.shard_registry WHERE shard = 5")" = t \
	"1. the registry's floor, which her DDL does not write"
if [ "$(q -c "SELECT mode FROM shardid.info()")" != session ]; then
	expect "$(q -c "SELECT last_id >= (SELECT id FROM s5.t WHERE v = 2) AND last_id < (SELECT id FROM s5.t WHERE v = 1)
	               FROM shardid.shard_state WHERE shard = 5")" = t \
		"1. the shard's ids start past the id 5 s ahead, not past the one 30 days ahead"
fi
ahead=$(q -c "SELECT coalesce(round(extract(epoch FROM high_water_mark - clock_timestamp()) / 3600), 0) FROM shardid.info()")
expect_le "${ahead:-999}" 1 "1. hours H is ahead of the clock"

# 2. her functions in an index's expression and predicate
q -U app -c "CREATE INDEX ON s5.t (app.imm(v), id)" -c "CREATE INDEX ON s5.t (id) WHERE app.imm(v) > 0" \
	-c "INSERT INTO s5.t VALUES (public.id_at(5, '6 s', 0), 3)" -c "CREATE INDEX ON s5.t (v, id)" >/dev/null 2>&1 ||
	fail "2. app's indexes on s5.t"
echo "2. app's functions ran $(attacker_runs app) times (index builds, as app)"
not_superuser app "2. app's index expression and predicate during the floor read"

# a session of its own, fed through a fifo: session NAME ROLE; say NAME SQL
declare -A fd
session() {
	local fifo=$SHARDID_TMP/$1.fifo
	mkfifo "$fifo"
	"$PG_BIN/psql" -X -q -At -U "$2" <"$fifo" >"$SHARDID_TMP/$1.out" 2>&1 &
	exec {fd[$1]}>"$fifo"
}
say() { echo "$2" >&"${fd[$1]}"; }
done_with() { grep -q "^$2$" "$SHARDID_TMP/$1.out"; }
lock_waiters() { q -c "SELECT count(*) FROM pg_stat_activity WHERE usename = 'app' AND wait_event_type = 'Lock'"; }
waits() { [ "$(lock_waiters)" -ge "$1" ]; }

# 3. her transaction stays open after an index on s5.u
session held app
say held "BEGIN; INSERT INTO s5.u VALUES (public.id_at(5, '7 s', 0), 1); CREATE INDEX ON s5.u (id); SELECT 'held';"
wait_until "3. app's index on s5.u" done_with held held
q -c "CREATE TABLE s5.w (id bigint, v int)" -c "INSERT INTO s5.w VALUES (public.id_at(5, '8 s', 0), 1)" >/dev/null
out=$(q -c "SET lock_timeout = '2s'" -c "CREATE INDEX ON s5.w (id)" 2>&1)
echo "3. a superuser's CREATE INDEX on s5.w while app's transaction is open: ${out:-done}" | head -3
expect "$out" = "" "3. a superuser's index build in shard 5 while app's transaction is open"
say held "ROLLBACK;"

# 4. two migrations on two tables of shard 6
q -c "INSERT INTO s6.t1 VALUES (public.id_at(6, '1 s', 0), 1)" -c "INSERT INTO s6.t2 VALUES (public.id_at(6, '2 s', 0), 1)" >/dev/null
session a app
session b app
say a "BEGIN; CREATE INDEX ON s6.t1 (v); SELECT 'a1';"
wait_until "4. A's index on s6.t1" done_with a a1
say b "BEGIN; ALTER TABLE s6.t2 ADD CONSTRAINT t2_id_v UNIQUE (id, v); SELECT 'b1'; COMMIT; SELECT 'b2';"
sleep 0.5
say a "ALTER TABLE s6.t2 ADD COLUMN note text; SELECT 'a2'; COMMIT; SELECT 'a3';"
finished() { { done_with a a3 || grep -q ERROR "$SHARDID_TMP/a.out"; } && { done_with b b2 || grep -q ERROR "$SHARDID_TMP/b.out"; }; }
wait_until "4. both migrations ended" finished
errors=$(cat "$SHARDID_TMP/a.out" "$SHARDID_TMP/b.out" | grep -m1 ERROR)
echo "4. two migrations on shard 6: ${errors:-both committed}"
expect "$errors" = "" "4. two migrations on two tables of shard 6"
for s in held a b; do exec {fd[$s]}>&-; done
wait

# 5. DDL that brings no rows
q >/dev/null <<'SQL'
INSERT INTO s7.big SELECT g % 10, public.id_at(7, '0 s', g % 1024), g FROM generate_series(1, 1000) g ON CONFLICT DO NOTHING;
INSERT INTO s7.p SELECT g % 10, public.id_at(7, '0 s', g % 1024), 1 FROM generate_series(1, 1000) g ON CONFLICT DO NOTHING;
SQL
# scans INDEX: its idx_scan (each session below ends its DDL with
# pg_stat_force_next_flush(), so that its counts are in)
scans() { q -c "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelid = '$1'::regclass"; }
before=$(scans s7.big_pkey)
q -U app -c "CREATE INDEX ON s7.big (v)" -c "SELECT pg_stat_force_next_flush()" >/dev/null
after=$(scans s7.big_pkey)
echo "5. CREATE INDEX on s7.big: idx_scan of its primary key $before -> $after (test of the test: it reads the new rows' ids)"
expect "$((after > before))" = 1 "5. (test of the test) an index build reads the table's id columns"
before=$after
q -U app -c "ALTER TABLE s7.big ADD CONSTRAINT positive CHECK (v > 0) NOT VALID" -c "SELECT pg_stat_force_next_flush()" >/dev/null
after=$(scans s7.big_pkey)
echo "5. ALTER TABLE s7.big ADD CONSTRAINT ... CHECK ... NOT VALID: idx_scan of its primary key $before -> $after"
expect "$after" = "$before" "5. scans of s7.big's primary key by ADD CONSTRAINT ... CHECK ... NOT VALID"
before=$(scans s7.p1_pkey)
q -U app -c "ALTER TABLE s7.p ATTACH PARTITION s7.p3 FOR VALUES IN (3)" -c "SELECT pg_stat_force_next_flush()" >/dev/null
after=$(scans s7.p1_pkey)
echo "5. ATTACH PARTITION of the empty s7.p3: idx_scan of s7.p1's primary key $before -> $after"
expect "$after" = "$before" "5. scans of the other partition's primary key by attaching an empty one"
finish
