#!/usr/bin/env bash
# test/citus/failover.sh: the worker that holds a tenant is replaced by its
# promoted streaming standby, whose clock is 15 s behind (libfaketime; more
# than the failover takes, so that ids made by the standby's clock alone
# would sort below the old ones).
# Rows written before the failover (ids made on the old worker by the
# shardid.set_id() trigger) are all on the standby; the worker is crashed,
# the standby promoted and put in its place (citus_update_node).  Every id
# made afterwards, through any node, must sort above every id made before,
# and none may repeat.
. "$(dirname "$0")/../lib.sh" citus

citus_start || { fail "the Citus cluster did not start"; finish; }
at "$COORD" -c "CREATE SCHEMA tenant_7" \
	-c "CREATE TABLE tenant_7.f (id bigint PRIMARY KEY, v int, tag text)" \
	-c "CREATE TABLE tenant_7.src (v int)" \
	-c "INSERT INTO tenant_7.src SELECT generate_series(1, 3)" \
	-c "CREATE TABLE public.ref (v int)" \
	-c "SELECT create_reference_table('public.ref')" \
	-c "INSERT INTO public.ref SELECT generate_series(1, 3)" \
	-c "SELECT shardid.citus_use_trigger('tenant_7.f', 7)" >/dev/null ||
	{ fail "setup"; finish; }
old=$(node_of tenant_7)
oldname=w1
[ "$old" = "$W2" ] && oldname=w2
SB=$((SHARDID_PORT_BASE + 3))

# a streaming standby of the tenant's worker, its clock 15 s behind
as_pg "$PG_BIN/pg_basebackup" -h "$SHARDID_TMP" -p "$old" -U postgres -D "$SHARDID_TMP/standby" -R -X stream \
	>"$SHARDID_TMP/basebackup.log" 2>&1 || { cat "$SHARDID_TMP/basebackup.log"; fail "pg_basebackup"; finish; }
cluster_conf standby "port = $SB"
citus_node_start standby "$(faketime_env -15s)" || { fail "the standby did not start"; finish; }

failed=$(writers tenant_7.f 30 "$COORD" "$COORD" "$W1" "$W2")
expect "$failed" = 0 "writers before the failover"
# drive until the standby has replayed everything the worker wrote (120 s)
lsn=$(at "$old" -c "SELECT pg_current_wal_lsn()")
for i in $(seq 1200); do
	[ "$(at "$SB" -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t ] && break
	sleep 0.1
done
expect "$(at "$SB" -c "SELECT pg_last_wal_replay_lsn() >= '$lsn'")" = t "the standby caught up in 120 s"

read -r before newest <<<"$(at "$COORD" -F' ' -c "SELECT count(*), max(id) FROM tenant_7.f")"
cluster_stop "$oldname" immediate
at "$SB" -c "SELECT pg_promote()" >/dev/null || fail "promotion"
at "$COORD" -c "SELECT citus_update_node(nodeid, '127.0.0.1', $SB) FROM pg_dist_node WHERE nodeport = $old" >/dev/null ||
	fail "citus_update_node"
metadata_synced || fail "the workers did not get the new node metadata in 60 s"
echo "worker on port $old crashed, its standby (clock -15 s) promoted on port $SB"

others=("$COORD" "$COORD")
[ "$old" = "$W1" ] && others+=("$W2") || others+=("$W1")
others+=("$SB")
failed=$(writers tenant_7.f 30 "${others[@]}")
expect "$failed" = 0 "writers after the failover (first error: $(cat "$SHARDID_TMP"/writer.*.err | head -1))"
read -r rows distinct below <<<"$(at "$COORD" -F' ' -c "
	SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id <= $newest) FROM tenant_7.f")"
echo "$before rows before the failover, $((rows - before)) after, $distinct distinct ids, $((below - before)) new ids not above the newest old one"
expect "$before" = $((4 * 30 * 14)) "rows before the failover"
expect "$rows" = $((2 * 4 * 30 * 14)) "rows"
expect "$distinct" = "$rows" "distinct ids"
expect "$below" = "$before" "rows whose id is not above the newest id made before the failover"
finish
