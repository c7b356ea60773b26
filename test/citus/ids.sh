#!/usr/bin/env bash
# test/citus/ids.sh: one tenant, ids made by the shardid.set_id() trigger
# (shardid.citus_use_trigger()), written through all three nodes of a Citus
# cluster at once (3 clients on each), in every statement shape (one-row and
# multi-row VALUES, prepared, COPY, INSERT ... SELECT from a tenant table and
# from a reference table, ON CONFLICT, RETURNING): with a primary key no
# client fails on a duplicate key, without one no id repeats, every id
# decodes to the tenant's shard, and an id given in the statement is kept.
# With the id as a column DEFAULT (shardid 1.1) the same writers repeat ids:
# Citus evaluates the DEFAULT on whichever node received the statement.
. "$(dirname "$0")/../lib.sh" citus

citus_start || { fail "the Citus cluster did not start"; finish; }
at "$COORD" -c "CREATE SCHEMA tenant_7" \
	-c "CREATE TABLE tenant_7.keyed (id bigint PRIMARY KEY, v int, tag text)" \
	-c "CREATE TABLE tenant_7.unkeyed (id bigint, v int, tag text)" \
	-c "CREATE TABLE tenant_7.src (v int)" \
	-c "INSERT INTO tenant_7.src SELECT generate_series(1, 3)" \
	-c "CREATE TABLE public.ref (v int)" \
	-c "SELECT create_reference_table('public.ref')" \
	-c "INSERT INTO public.ref SELECT generate_series(1, 3)" \
	-c "SELECT shardid.citus_use_trigger('tenant_7.keyed', 7)" \
	-c "SELECT shardid.citus_use_trigger('tenant_7.unkeyed', 7)" >/dev/null ||
	{ fail "setup"; finish; }

rounds=${CITUS_ROUNDS:-100}
nodes=("$COORD" "$COORD" "$COORD" "$W1" "$W1" "$W1" "$W2" "$W2" "$W2")
want=$((${#nodes[@]} * rounds * 14))
for tab in keyed unkeyed; do
	failed=$(writers "tenant_7.$tab" "$rounds" "${nodes[@]}")
	expect "$failed" = 0 "$tab: clients that failed (first error: $(cat "$SHARDID_TMP"/writer.*.err | head -1))"
	read -r rows distinct other <<<"$(at "$COORD" -F' ' -c "
		SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE shardid.id_shard(id) <> 7)
		FROM tenant_7.$tab")"
	echo "$tab: $rows rows from 9 clients on 3 nodes, $distinct distinct ids, $other of another shard"
	expect "$rows" = "$want" "$tab: rows"
	expect "$distinct" = "$want" "$tab: distinct ids"
	expect "$other" = 0 "$tab: ids of another shard"
done

# an id given in the statement is kept; RETURNING shows the id the worker made
given=$(at "$COORD" -c "SELECT shardid.make_id(1000, 7, 1)")
got=$(at "$W1" -c "INSERT INTO tenant_7.keyed (id, v, tag) VALUES ($given, 0, 'given') RETURNING id")
expect "$got" = "$given" "an id given in the statement"
for port in "$COORD" "$W1" "$W2"; do
	got=$(at "$port" -c "INSERT INTO tenant_7.keyed (v, tag) VALUES (0, 'returning') RETURNING id")
	stored=$(at "$COORD" -c "SELECT count(*) FROM tenant_7.keyed WHERE id = $got AND tag = 'returning'")
	expect "$stored" = 1 "RETURNING through port $port gives the stored id ($got)"
	expect "$(at "$COORD" -c "SELECT shardid.id_shard($got)")" = 7 "RETURNING through port $port: shard"
done

# the trigger is on the shard tables on the worker, and Citus knows it everywhere
for port in "$COORD" "$W1" "$W2"; do
	n=$(at "$port" -c "SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_set_id'
		AND tgrelid = 'tenant_7.keyed'::regclass")
	expect "$n" = 1 "trigger on tenant_7.keyed on port $port"
done
finish
