#!/usr/bin/env bash
# shardid.convert_table() while 4 clients insert (prepared statements) into
# a serial table: the conversion widens the column and switches the DEFAULT
# under its lock; no insert fails, no id repeats, the ids below the
# recorded boundary are exactly the old ones (1..boundary-1) and every id
# above it is of shard 7.  Then pg_dump | psql into a new database carries
# the boundary: the old ids are still legacy and route nowhere, the new
# ones route to their schema.
. "$(dirname "$0")/../lib.sh" servers

q <<'SQL'
CREATE SCHEMA cv;
CREATE TABLE cv.t (id serial PRIMARY KEY, v int);
INSERT INTO cv.t (v) SELECT g FROM generate_series(1, 20000) g;
SELECT shardid.register_shard(7, 'cv');
SQL
echo "INSERT INTO cv.t (v) VALUES (1);" >"$SHARDID_TMP/convert_insert.sql"
"$PG_BIN/pgbench" -n -M prepared -c 4 -j 2 -t 3000 -f "$SHARDID_TMP/convert_insert.sql" \
	>"$SHARDID_TMP/convert_pgbench.log" 2>&1 &
bench=$!
# convert once the clients are inserting
inserting() { [ "$(q -c 'SELECT count(*) FROM cv.t')" -gt 20200 ]; }
wait_until "the clients insert" inserting
below=$(q -c "SELECT legacy_below FROM shardid.convert_table('cv.t', 7)" 2>"$SHARDID_TMP/convert.err")
grep -q 'widened from integer to bigint' "$SHARDID_TMP/convert.err" || fail "no WARNING about the widening"
wait "$bench"
status=$?
read -r rows distinct old old_max wrong <<<"$(q -F' ' -c "
    SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE id < $below),
           max(id) FILTER (WHERE id < $below),
           count(*) FILTER (WHERE id >= $below AND shardid.id_shard(id) <> 7)
    FROM cv.t")"
echo "boundary=$below pgbench exit=$status rows=$rows distinct=$distinct old=$old (max $old_max) new_of_another_shard=$wrong"
expect "$status" = 0 "pgbench exit status (no failed insert)"
expect "$rows" = 32000 "rows"
expect "$distinct" = 32000 "distinct ids"
expect "$old" = "$((below - 1))" "old ids, 1 to the boundary"
expect "$old_max" = "$((below - 1))" "largest old id"
expect "$wrong" = 0 "new ids of another shard"
expect_ge "$old" 20200 "old ids (inserts before the conversion)"

# one id made after the conversion, whatever the clients made (on a fast
# machine they may all have finished before the conversion took its lock)
q -c "INSERT INTO cv.t (v) VALUES (2)" >/dev/null || fail "an INSERT after the conversion"

# pg_dump | psql into a new database: the boundary is carried
q -c "CREATE DATABASE convert_restored" >/dev/null
"$PG_BIN/pg_dump" "$PGDATABASE" | q -d convert_restored -v ON_ERROR_STOP=1 >/dev/null 2>"$SHARDID_TMP/convert_restore.err" ||
	{ cat "$SHARDID_TMP/convert_restore.err"; fail "pg_dump | psql failed"; }
read -r tab restored_below legacy1 route1 route_new problems <<<"$(q -d convert_restored -F' ' -c "
    SELECT (SELECT tab::text FROM shardid.legacy_ids), (SELECT legacy_below FROM shardid.legacy_ids),
           shardid.id_is_legacy(1), coalesce(shardid.id_schema(1)::text, 'NULL'),
           (SELECT coalesce(shardid.id_schema(max(id))::text, 'NULL') FROM cv.t),
           (SELECT count(*) FROM shardid.doctor() WHERE problem = 'rows of another shard')")"
echo "restored: $tab below $restored_below; id 1 legacy $legacy1 routes to $route1; newest id routes to $route_new; rows-of-another-shard problems $problems"
expect "$tab" = cv.t "restored legacy table"
expect "$restored_below" = "$below" "restored boundary"
expect "$legacy1" = t "id 1 legacy after the restore"
expect "$route1" = NULL "id 1 routes nowhere after the restore"
expect "$route_new" = cv "new ids route to their schema after the restore"
expect "$problems" = 0 "doctor: rows of another shard"
q -c "DROP DATABASE convert_restored" >/dev/null
q -c "SET client_min_messages = warning; DELETE FROM shardid.legacy_ids; DROP SCHEMA cv CASCADE; SELECT shardid.unregister_shard(7)" >/dev/null
finish
