# test/citus/clients.bash: writers for the Citus tests.  Source it after
# lib.bash; it is not a test itself.

# shapes_sql TABLE ROUNDS TAG: a psql script that inserts into TABLE
# (columns id, v, tag; no id given) ROUNDS times in every statement shape:
# one-row and multi-row VALUES, a prepared statement, COPY, INSERT ...
# SELECT from a table of the same tenant (tenant_7.src, 3 rows) and from a
# reference table (public.ref, 3 rows), ON CONFLICT DO NOTHING, RETURNING.
# 14 rows a round.
shapes_sql() {
	local tab=$1 rounds=$2 tag=$3 i
	echo "\\set ON_ERROR_STOP 1"
	echo "PREPARE ins(int) AS INSERT INTO $tab (v, tag) VALUES (\$1, '$tag');"
	for i in $(seq "$rounds"); do
		echo "INSERT INTO $tab (v, tag) VALUES ($i, '$tag');"
		echo "INSERT INTO $tab (v, tag) VALUES ($i, '$tag'), ($i, '$tag');"
		echo "EXECUTE ins($i);"
		echo "COPY $tab (v, tag) FROM STDIN;"
		printf '%s\t%s\n%s\t%s\n\\.\n' "$i" "$tag" "$i" "$tag"
		echo "INSERT INTO $tab (v, tag) SELECT v, '$tag' FROM tenant_7.src;"
		echo "INSERT INTO $tab (v, tag) SELECT v, '$tag' FROM public.ref;"
		echo "INSERT INTO $tab (v, tag) VALUES ($i, '$tag') ON CONFLICT DO NOTHING;"
		echo "INSERT INTO $tab (v, tag) VALUES ($i, '$tag') RETURNING id \\g /dev/null"
	done
}

# writers TABLE ROUNDS PORT...: one client per PORT given (repeat a port for
# several clients on a node), all at once, each running shapes_sql; waits
# for them and prints how many failed; their errors go to
# $SHARDID_TMP/writer.N.err
writers() {
	local tab=$1 rounds=$2 n=0 port pids=() failed=0 pid
	shift 2
	for port in "$@"; do
		n=$((n + 1))
		shapes_sql "$tab" "$rounds" "c$n" >"$SHARDID_TMP/writer.$n.sql"
		at "$port" -f "$SHARDID_TMP/writer.$n.sql" >/dev/null 2>"$SHARDID_TMP/writer.$n.err" &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do
		wait "$pid" || failed=$((failed + 1))
	done
	echo "$failed"
}
