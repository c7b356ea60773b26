#!/usr/bin/env bash
# Roles that may write a shard's rows, or lock its tables, must neither
# push the shard's floor (and the server's ids) ahead of the clock, nor
# hide the newest legitimate id from it, nor make a registration skip it.
#
# Registering a shard (shardid.register_shard()) reads the newest id of the
# shard stored in its schema and raises the shard's floor to it; strict
# mode then starts the shard past it and raises the durable, server-wide
# mark H.  Each shard here holds rows a superuser restored, their ids 5 s
# ahead of the clock (within the bound, shardid.max_lead_ms = 10000 plus
# 1250 ms), and:
# 1. shard 5: app (INSERT on s5.t, nothing more) commits one row of the
#    shard 30 days ahead, and 1,000 rows of shard 6 and 1,000 of shard 4
#    whose ids sort above the shard's newest.  Registration warns naming
#    s5.t, the floor is the newest restored id, new ids follow it and stay
#    near the clock; doctor() (superuser) reports 'stored id beyond the
#    bound' with a fix that says another role may have written it.
# 2. shard 7: app's row 30 days ahead is kept uncommitted during the
#    registration, then rolled back: the same floor, ids near the clock.
# 3. shard 8: its table's owner holds LOCK TABLE ... IN ACCESS EXCLUSIVE
#    MODE during the registration: with lock_timeout = '1s' it fails with
#    the lock timeout error, without it waits (no registry row meanwhile),
#    and once the lock is gone raises the floor to the newest restored id.
# 4. an ordinary role may not call shardid.raise_floor() or
#    shardid.stored_ids(), nor UPDATE the registry.
# 5. shard 9: the database owner (who may write the registry, not a
#    superuser) INSERTs a registry row with a floor_id 30 days ahead, then
#    with the largest bigint: the floor becomes what the tables hold.
# H stays within an hour of the clock throughout, and after a restart
# another shard's ids too.
#
# 1.2 read stored ids lazily, at a backend's first id of a shard: one row
# far ahead written by an INSERT-only role made it follow nothing at all
# (new ids sorted before the restored ones), 1,000 rows of another shard on
# top of the index hid the shard's newest id, and a plain LOCK TABLE during
# a backend's first id made it skip the table for good.  Exit 0: every
# attack failed.
SHARDID_TMP=""		# a server of its own: a successful attack spoils H
. "$(dirname "$0")/../lib.sh" servers
chmod 777 "$SHARDID_TMP"

strict_server hostile $((SHARDID_PORT_BASE + 104))
cluster_conf hostile "shardid.max_lead_ms = 10000"
cluster_stop hostile && cluster_start hostile || { fail "restart with shardid.max_lead_ms = 10000"; finish; }
export PGDATABASE=app
q -c "CREATE ROLE app LOGIN" -c "CREATE ROLE tenant LOGIN" -c "CREATE ROLE plain LOGIN" \
	-c "CREATE ROLE dbo LOGIN" >/dev/null
q >/dev/null <<'SQL'
CREATE EXTENSION shardid;
-- an id of a shard a given time from now (milliseconds since the epoch)
CREATE FUNCTION public.id_at(shard int, ahead interval, seq int) RETURNS bigint LANGUAGE sql AS $$
    SELECT shardid.make_id((extract(epoch FROM clock_timestamp() + ahead) * 1000)::bigint
                           - (SELECT i.epoch_ms FROM shardid.info() i), shard, seq) $$;
REVOKE EXECUTE ON FUNCTION public.id_at(int, interval, int) FROM PUBLIC;
CREATE TABLE public.legit (shard int PRIMARY KEY, newest bigint);
SQL
for shard in 5 7 8 9; do
	q >/dev/null <<SQL || fail "schema s$shard"
CREATE SCHEMA s$shard;
CREATE TABLE s$shard.t (id bigint PRIMARY KEY DEFAULT shardid.next_id($shard), v int);
GRANT USAGE ON SCHEMA s$shard TO app, tenant;
GRANT INSERT ON s$shard.t TO app;
-- the restored rows: 100 ids of one millisecond 5 s ahead
WITH ms AS (SELECT public.id_at($shard, interval '5 s', 0) AS first)
INSERT INTO s$shard.t SELECT first + g, 0 FROM ms, generate_series(0, 99) g;
INSERT INTO public.legit SELECT $shard, max(id) FROM s$shard.t;
SQL
done
q -c "ALTER TABLE s8.t OWNER TO tenant" >/dev/null
legit() { q -c "SELECT newest FROM public.legit WHERE shard = $1"; }

# after_floor SHARD WHAT: the registry's floor of SHARD is its newest
# restored id, and its next id follows it and is within a minute of the clock
after_floor() {
	local floor later near
	read -r floor later near <<<"$(q -F' ' -c "
	    SELECT coalesce(r.floor_id::text, 'none'), n > $(legit "$1"), shardid.id_time(n) < clock_timestamp() + interval '1 minute'
	    FROM shardid.shard_registry r, shardid.next_id($1) n WHERE r.shard = $1")"
	echo "$2: floor ${floor:-?} (newest restored $(legit "$1")), next id after it: ${later:-?}, within a minute of the clock: ${near:-?}"
	expect "${floor:-}" = "$(legit "$1")" "$2: the floor is the newest restored id"
	expect "${later:-} ${near:-}" = "t t" "$2: the next id after the restored ones and near the clock"
}
h_near() {	# h_near WHAT: H is within an hour of the clock
	local ahead
	ahead=$(q -c "SELECT coalesce(round(extract(epoch FROM high_water_mark - clock_timestamp()) / 3600), 0) FROM shardid.info()")
	expect_le "${ahead:-999}" 1 "$1: hours H is ahead of the clock"
}

# 1. a committed row 30 days ahead, and other shards' rows on top
far5=$(q -c "SELECT public.id_at(5, interval '30 days', 0)")
top=$(q -c "SELECT string_agg(format('(%s, 1)', id), ', ') FROM (
              SELECT (SELECT newest FROM public.legit WHERE shard = 5) + ((g + 1)::bigint << 23) + ((s - 5)::bigint << 10) AS id
              FROM generate_series(0, 999) g, (VALUES (4), (6)) sh(s)) x")
out=$(q -U app -c "INSERT INTO s5.t VALUES ($far5, 1)" -c "INSERT INTO s5.t VALUES $top" 2>&1)
expect "$out" = "" "app's inserts into s5.t"
q -c "SELECT shardid.id_shard(id), count(*) FROM s5.t WHERE id > (SELECT newest FROM public.legit WHERE shard = 5) GROUP BY 1 ORDER BY 1" \
	2>/dev/null | tr '\n' ' ' | sed 's/^/s5.t above the restored ids, rows by shard: /'; echo
out=$(q -c "SELECT shardid.register_shard(5, 's5')" 2>&1)
echo "register_shard(5, 's5'): $out"
echo "$out" | grep -q '^WARNING:  table s5\.t holds an id of shard 5 that is [0-9]* ms ahead of this server'"'"'s clock$' ||
	fail "register_shard(5) with a row 30 days ahead: no WARNING naming s5.t"
after_floor 5 "shard 5 (a committed row 30 days ahead, 2,000 rows of shards 4 and 6 on top)"
h_near "after registering shard 5"
read -r n fix <<<"$(q -F' ' -c "
    SELECT count(*), bool_and(fix LIKE '%another role may have written%')
    FROM shardid.doctor() WHERE problem = 'stored id beyond the bound' AND object = 'shard 5: s5.t.id'")"
echo "doctor(): 'stored id beyond the bound' rows for s5.t: $n, the fix says another role may have written it: $fix"
expect "$n $fix" = "1 t" "doctor()'s row for the far id in s5.t"

# 2. a row 30 days ahead, uncommitted during the registration, rolled back
far7=$(q -c "SELECT public.id_at(7, interval '30 days', 0)")
q -U app -c "BEGIN" -c "INSERT INTO s7.t VALUES ($far7, 1)" -c "SELECT pg_sleep(600)" -c "ROLLBACK" \
	>"$SHARDID_TMP/app7.log" 2>&1 &
app7=$!
holding() {	# holding ROLE MODE TABLE: ROLE's session holds the lock
	[ "$(q -c "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
	           WHERE a.usename = '$1' AND l.granted AND l.mode = '$2' AND l.relation = '$3'::regclass")" -ge 1 ]
}
wait_until "app's uncommitted row in s7.t" holding app RowExclusiveLock s7.t
out=$(q -c "SELECT shardid.register_shard(7, 's7')" 2>&1)
echo "register_shard(7, 's7') during app's uncommitted row: $out"
expect "$(echo "$out" | grep -c '^ERROR')" = 0 "register_shard(7) during app's uncommitted row"
q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = 'app'" >/dev/null
wait $app7
expect "$(q -c "SELECT count(*) FROM s7.t WHERE id = $far7")" = 0 "app's row 30 days ahead rolled back"
after_floor 7 "shard 7 (a row 30 days ahead uncommitted during the registration, then rolled back)"
h_near "after registering shard 7"

# 3. the table's owner holds ACCESS EXCLUSIVE during the registration
q -U tenant -c "BEGIN" -c "LOCK TABLE s8.t IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(600)" -c "COMMIT" \
	>"$SHARDID_TMP/tenant.log" 2>&1 &
tenant=$!
wait_until "tenant's lock on s8.t" holding tenant AccessExclusiveLock s8.t
out=$(q -c "SET lock_timeout = '1s'" -c "SELECT shardid.register_shard(8, 's8')" 2>&1)
echo "register_shard(8, 's8') with lock_timeout = '1s' under tenant's lock: $out"
expect "$(echo "$out" | head -1)" = "ERROR:  canceling statement due to lock timeout" "register_shard(8) under tenant's lock with lock_timeout"
q -c "SELECT shardid.register_shard(8, 's8')" >"$SHARDID_TMP/register8.log" 2>&1 &
register8=$!
waiting() {	# the registration of shard 8 waits for a lock
	[ "$(q -c "SELECT count(*) FROM pg_stat_activity
	           WHERE wait_event_type = 'Lock' AND query LIKE '%register_shard(8, %'")" = 1 ]
}
wait_until "register_shard(8) waiting for tenant's lock" waiting
expect "$(q -c "SELECT count(*) FROM shardid.shard_registry WHERE shard = 8")" = 0 "registry rows of shard 8 while the registration waits"
q -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = 'tenant'" >/dev/null
wait $tenant
wait $register8 || fail "register_shard(8) after tenant's lock: $(cat "$SHARDID_TMP/register8.log")"
echo "register_shard(8, 's8') waited for tenant's lock, then: $(cat "$SHARDID_TMP/register8.log")"
after_floor 8 "shard 8 (registered after waiting for tenant's ACCESS EXCLUSIVE lock)"

# 4. what an ordinary role may not do
for call in "SELECT shardid.raise_floor(5)" "SELECT * FROM shardid.stored_ids(5)"; do
	out=$(q -U plain -c "$call" 2>&1)
	echo "plain: $call: $out"
	expect "$out" = "ERROR:  permission denied for function $(echo "$call" | sed 's/.*shardid\.\([a-z_]*\)(.*/\1/')" "plain: $call"
done
out=$(q -U plain -c "UPDATE shardid.shard_registry SET floor_id = $far5 WHERE shard = 5" 2>&1)
expect "$out" = "ERROR:  permission denied for table shard_registry" "plain: UPDATE of the registry"

# 5. the database owner writes a registry row with a floor of its own.
# Reading ids is reading rows: first without SELECT on the schema's table
# (refused: the floor would show its values), then with it
q -c "ALTER DATABASE app OWNER TO dbo" >/dev/null
q -U dbo -c "DELETE FROM shardid.shard_registry WHERE shard = 9" >/dev/null
out=$(q -U dbo -c "INSERT INTO shardid.shard_registry (shard, schema_name) VALUES (9, 's9')" 2>&1)
echo "dbo registers s9 without SELECT on s9.t: $(echo "$out" | head -1)"
expect "$(echo "$out" | head -1)" = "ERROR:  permission denied to read the ids of table s9.t" "dbo registers a schema it may not read"
q -c "GRANT USAGE ON SCHEMA s9 TO dbo" -c "GRANT SELECT ON s9.t TO dbo" >/dev/null
far9=$(q -c "SELECT public.id_at(9, interval '30 days', 0)")
for given in "$far9" 9223372036854775807; do
	q -U dbo -c "DELETE FROM shardid.shard_registry WHERE shard = 9" >/dev/null
	out=$(q -U dbo -c "INSERT INTO shardid.shard_registry (shard, schema_name, floor_id) VALUES (9, 's9', $given)" 2>&1)
	echo "dbo inserts shard 9's registry row with floor_id $given: ${out:-done}"
	expect "$out" = "" "dbo's INSERT into the registry"
	after_floor 9 "shard 9 (dbo gave floor_id $given)"
done
out=$(q -U dbo -c "SELECT shardid.raise_floor(9)" 2>&1)
expect "$out" = "ERROR:  permission denied for function raise_floor" "dbo: raise_floor()"
out=$(q -U dbo -c "UPDATE shardid.shard_registry SET floor_id = $far9 WHERE shard = 9" 2>&1)
expect "$out" = "ERROR:  permission denied for table shard_registry" "dbo: UPDATE of the registry"
h_near "after dbo's registry rows"

cluster_stop hostile fast
cluster_start hostile || { fail "restart"; finish; }
ahead=$(q -c "SELECT round(extract(epoch FROM shardid.id_time(shardid.next_id(11)) - clock_timestamp()) / 60)")
echo "after a restart, shard 11's next id is $ahead minutes ahead of the clock"
expect_le "${ahead:-999}" 1 "minutes shard 11's next id is ahead of the clock after a restart"
cluster_stop hostile
finish
