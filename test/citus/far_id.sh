#!/usr/bin/env bash
# test/citus/far_id.sh: one id far ahead in a tenant table does not hold up
# the tenant's inserts.
#
# A role that may only INSERT into tenant_8.keyed stores an id of shard 8
# thirty days ahead (an id given in the statement is kept).  The set_id()
# trigger reads, at a backend's first insert into the table, the newest id
# of the shard in it: only at or below the bound (shardid.max_lead_ms plus
# 1.25 s ahead of the clock), so the far id is not followed and hides
# nothing.  Fresh connections through every node then insert at once,
# with ids near the clock and after the tenant's earlier ids.  (1.2 read
# the newest id overall: every backend's first insert waited for the
# clock up to 60 s and then failed, "the newest id of table ... is ... ms
# ahead of this server's clock".)
. "$(dirname "$0")/../lib.sh" citus

citus_start || { fail "the Citus cluster did not start"; finish; }
at "$COORD" -c "CREATE SCHEMA tenant_8" \
	-c "CREATE TABLE tenant_8.keyed (id bigint PRIMARY KEY, v int)" \
	-c "SELECT shardid.citus_use_trigger('tenant_8.keyed', 8)" \
	-c "INSERT INTO tenant_8.keyed (v) SELECT 1 FROM generate_series(1, 100)" \
	-c "CREATE ROLE mallory LOGIN" \
	-c "GRANT USAGE ON SCHEMA tenant_8 TO mallory" \
	-c "GRANT INSERT ON tenant_8.keyed TO mallory" >/dev/null || { fail "setup"; finish; }
before=$(at "$COORD" -c "SELECT max(id) FROM tenant_8.keyed")
far=$(at "$COORD" -c "SELECT shardid.make_id(shardid.id_millis(shardid.min_id(now() + interval '30 days')), 8, 0)")
at "$COORD" -U mallory -c "INSERT INTO tenant_8.keyed (id, v) VALUES ($far, 0)" >/dev/null ||
	fail "mallory's far id"
for port in "$COORD" "$W1" "$W2"; do
	out=$(timeout 30 "$PG_BIN/psql" -X -q -At -h "$SHARDID_TMP" -p "$port" -U postgres -d app \
		-c "INSERT INTO tenant_8.keyed (v) VALUES (2) RETURNING id" 2>&1)
	echo "a fresh connection through port $port inserts: $out"
	case "$out" in *ERROR*|"") fail "insert through port $port: $out" ;; esac
done
read -r rows after near <<<"$(at "$COORD" -F' ' -c "
	SELECT count(*), bool_and(id > $before), bool_and(shardid.id_time(id) < now() + interval '1 minute')
	FROM tenant_8.keyed WHERE v = 2")"
echo "new rows: $rows, all after the earlier ids: $after, all within a minute of the clock: $near"
expect "$rows $after $near" = "3 t t" "inserts beside a far id"
finish
