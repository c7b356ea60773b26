#!/usr/bin/env bash
# A subscription that applies rows into a shard's tables gives shardid no
# moment to raise the shard's floor (the apply worker runs no executor hook
# and no statement trigger): while it is enabled, the shard refuses ids,
# naming the subscription and the step; disabling or dropping it raises
# the floor, and ids flow again with no further step.
#
# Server a, its clock 40 s ahead of the real one, publishes table s_005.t
# (DEFAULT shardid.next_id(5), 2,000 rows) and s_007.t (shard 7, 1 row).  Server b (right clock,
# shardid.max_lead_ms = 60000, so that a's ids lie within what strict mode
# follows) has s_005.t and s_006.t (shard 6) registered, and subscribes to
# a's publication.  Checks, on b:
#   - a backend that made an id of shard 5 before the subscription existed
#     is refused after it (the invalidation reaches it), with the message
#     pinned below; so is a new backend, and an INSERT by the DEFAULT
#   - a subscribed table s_007.t without a DEFAULT on b: a backend makes ids
#     of shard 7 until the table gets DEFAULT next_id(7), then is refused
#   - shard 6, which the subscription does not feed, makes ids
#   - ALTER SUBSCRIPTION ... DISABLE: 2,000 ids of shard 5, none at or
#     below the newest replicated id
#   - ENABLE again: refused again; DROP SUBSCRIPTION: ids again, above
# Found on 15230ef: with the subscription enabled, next_id(5) on b made
# ids below the replicated ones (2,000 of 2,000), with no message.
. "$(dirname "$0")/../lib.sh" failover

port_a=$((SHARDID_PORT_BASE + 195))
port_b=$((SHARDID_PORT_BASE + 196))
app_server -c +40s a "$port_a" "wal_level = logical" || { fail "server a did not start"; finish; }
q_at "$port_a" <<'SQL' >/dev/null || fail "filling server a failed"
CREATE EXTENSION shardid;
CREATE SCHEMA s_005;
CREATE TABLE s_005.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), v int);
SELECT shardid.register_shard(5, 's_005');
INSERT INTO s_005.t (v) SELECT g FROM generate_series(1, 2000) g;
CREATE SCHEMA s_007;
CREATE TABLE s_007.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(7), v int);
INSERT INTO s_007.t (v) VALUES (1);
CREATE PUBLICATION pub FOR TABLE s_005.t, s_007.t;
SQL

app_server b "$port_b" "shardid.max_lead_ms = 60000" || { fail "server b did not start"; finish; }
q_at "$port_b" <<'SQL' >/dev/null || fail "setting up server b failed"
CREATE EXTENSION shardid;
CREATE SCHEMA s_005;
CREATE SCHEMA s_006;
CREATE TABLE s_005.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(5), v int);
CREATE TABLE s_006.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(6), v int);
CREATE SCHEMA s_007;
CREATE TABLE s_007.t (id bigint PRIMARY KEY, v int);
SELECT shardid.register_shard(5, 's_005'), shardid.register_shard(6, 's_006');
CREATE TABLE public.gate (name text);
CREATE FUNCTION public.await(cond text) RETURNS void LANGUAGE plpgsql AS
$$ DECLARE ok boolean; BEGIN
   FOR i IN 1..2400 LOOP
       EXECUTE cond INTO ok;
       EXIT WHEN ok;
       PERFORM pg_sleep(0.05);
   END LOOP; END $$;
SQL

want_error='ERROR:  shard 5 receives rows from subscription "sub"'
want_detail="DETAIL:  The subscription applies rows with ids of their own into table s_005.t, whose new rows get ids of shard 5: new ids could repeat them or sort below them, and nothing raises the shard's floor while the subscription applies."
want_hint="HINT:  Once the publisher no longer writes shard 5: ALTER SUBSCRIPTION sub DISABLE, or DROP SUBSCRIPTION sub; either raises the shard's floor, and its ids are made again."

# refused LABEL OUTPUT: OUTPUT is the refusal, its three lines as pinned
refused() {
	echo "$1: $(echo "$2" | grep -m1 ERROR)"
	expect "$(echo "$2" | grep -m1 '^ERROR:')" = "$want_error" "$1: the error"
	expect "$(echo "$2" | grep -m1 '^DETAIL:')" = "$want_detail" "$1: its detail"
	expect "$(echo "$2" | grep -m1 '^HINT:')" = "$want_hint" "$1: its hint"
}

# below LABEL: b makes 2,000 ids of shard 5 by the DEFAULT; none may sort
# at or below $replicated_max
below() {
	local out
	out=$(q_at "$port_b" -c "CREATE TEMP TABLE new AS WITH i AS (INSERT INTO s_005.t (v) SELECT g FROM generate_series(1, 2000) g RETURNING id) SELECT id FROM i" \
		-c "SELECT count(*) FILTER (WHERE id <= $replicated_max) || ' ' || count(*) FROM new" 2>&1)
	echo "$1: new ids at or below the replicated ones: $out (of 2000)"
	expect "$out" = "0 2000" "$1: new ids at or below the replicated ones"
}

# a backend of b that makes an id of shard 5 before the subscription exists,
# then waits for it and tries again
q_at "$port_b" -c "SELECT shardid.next_id(5) > 0 AS early_id" \
	-c "INSERT INTO public.gate VALUES ('early')" \
	-c "SELECT public.await('SELECT EXISTS (SELECT FROM public.gate WHERE name = ''subscribed'')')" \
	-c "SELECT shardid.next_id(5)" >"$SHARDID_TMP/early.out" 2>&1 &
early=$!
gate() { [ "$(q_at "$port_b" -c "SELECT count(*) FROM public.gate WHERE name = '$1'")" = 1 ]; }
wait_until "the early backend's id of shard 5" gate early

q_at "$port_b" -c "CREATE SUBSCRIPTION sub CONNECTION 'host=$SHARDID_TMP port=$port_a dbname=app user=postgres' PUBLICATION pub" \
	>/dev/null || fail "CREATE SUBSCRIPTION"
synced() { [ "$(q_at "$port_b" -c "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate = 'r'")" = 2 ] &&
	[ "$(q_at "$port_b" -c "SELECT count(*) FROM s_005.t")" = 2000 ]; }
wait_until "the subscription copied s_005.t" synced
replicated_max=$(q_at "$port_b" -c "SELECT max(id) FROM s_005.t")
echo "replicated: $(q_at "$port_b" -c "SELECT count(*) || ' rows, the newest ' || max(id) FROM s_005.t")"

# a backend that made ids of shard 7 while the subscription fed s_007.t,
# which had no DEFAULT; then s_007.t gets one
q_at "$port_b" -c "SELECT shardid.next_id(7) > 0 AS before_default" \
	-c "INSERT INTO public.gate VALUES ('seven')" \
	-c "SELECT public.await('SELECT EXISTS (SELECT FROM public.gate WHERE name = ''default'')')" \
	-c "SELECT shardid.next_id(7)" >"$SHARDID_TMP/seven.out" 2>&1 &
seven=$!

q_at "$port_b" -c "INSERT INTO public.gate VALUES ('subscribed')" >/dev/null
wait "$early"
expect "$(head -1 "$SHARDID_TMP/early.out")" = t "the early backend's id of shard 5 before the subscription"
refused "a backend that made ids before the subscription" "$(cat "$SHARDID_TMP/early.out")"

wait_until "the backend's id of shard 7" gate seven
q_at "$port_b" -c "ALTER TABLE s_007.t ALTER id SET DEFAULT shardid.next_id(7)" \
	-c "INSERT INTO public.gate VALUES ('default')" >/dev/null || fail "the DEFAULT of s_007.t"
wait "$seven"
expect "$(head -1 "$SHARDID_TMP/seven.out")" = t "the backend's id of shard 7 before s_007.t had its DEFAULT"
echo "a backend that made ids of shard 7 before s_007.t had its DEFAULT: $(grep -m1 ERROR "$SHARDID_TMP/seven.out")"
expect "$(grep -m1 '^ERROR:' "$SHARDID_TMP/seven.out")" = 'ERROR:  shard 7 receives rows from subscription "sub"' \
	"a backend that made ids of shard 7 before s_007.t had its DEFAULT: the error"

out=$(q_at "$port_b" -c "SELECT shardid.next_id(5)" 2>&1) && echo "next_id(5) while subscribed: $out"
refused "next_id(5) while subscribed" "$out"
out=$(q_at "$port_b" -c "INSERT INTO s_005.t (v) VALUES (0)" 2>&1)
refused "an INSERT by the DEFAULT while subscribed" "$out"
expect "$(q_at "$port_b" -c "SELECT shardid.next_id(6) > 0")" = t "shard 6, not fed by the subscription, makes ids"
if ! echo "$out" | grep -q ERROR; then
	# the old code: how far below the replicated ids the new ones are
	below "while subscribed"
fi

q_at "$port_b" -c "ALTER SUBSCRIPTION sub DISABLE" >/dev/null || fail "ALTER SUBSCRIPTION DISABLE"
below "after DISABLE"

q_at "$port_b" -c "ALTER SUBSCRIPTION sub ENABLE" >/dev/null || fail "ALTER SUBSCRIPTION ENABLE"
out=$(q_at "$port_b" -c "SELECT shardid.next_id(5)" 2>&1)
refused "next_id(5) after ENABLE" "$out"

q_at "$port_b" -c "DROP SUBSCRIPTION sub" >/dev/null || fail "DROP SUBSCRIPTION"
replicated_max=$(q_at "$port_b" -c "SELECT max(id) FROM s_005.t")
below "after DROP SUBSCRIPTION"
finish
