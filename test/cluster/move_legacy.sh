#!/usr/bin/env bash
# test/cluster/move_legacy.sh: shardid-move carries the legacy boundaries of
# converted tables.
#
# shardid.convert_table() records in shardid.legacy_ids, outside the shard's
# schema, that the ids of a table below a boundary were made before its
# conversion (by its bigserial): they route nowhere (id_schema() is NULL),
# id_is_legacy() says so, and the doctor does not take them for another
# shard's rows.  The move copies the schema only: 1.3 before this test lost
# the boundary on the --to server, where the old ids 1..3000 then decoded
# as ids of shards 0 to 2 (id_schema(5) answered shard 0's schema there),
# and left the row of the dropped table behind on the --from server after
# --drop-source.  Shard 4 moves offline from a to b, then online back:
#   - on the server that holds the shard after each move, the boundary is
#     recorded for the moved table, id_is_legacy(5) is true, id_schema(5)
#     NULL (shard 0 is registered there, so a lost boundary routes to it),
#     the new ids route to the shard's schema, and the doctor reports no
#     rows of another shard;
#   - --drop-source leaves no row of the dropped table in shardid.legacy_ids.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 170 2 "${LOGICAL[@]}" || exit 1
shard0_servers "$a" "$b" || exit 1
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0004;
CREATE TABLE shard_0004.orders (id bigserial PRIMARY KEY, n int NOT NULL);
INSERT INTO shard_0004.orders (n) SELECT g FROM generate_series(1, 3000) g;
SELECT shardid.register_shard(4, 'shard_0004');
SELECT shardid.convert_table('shard_0004.orders', 4);
INSERT INTO shard_0004.orders (n) SELECT g FROM generate_series(1, 10) g;
SQL

holds() {	# holds PORT WHAT: the server holding shard 4 keeps its legacy ids apart
	local p=$1 what=$2
	expect "$(on "$p" -c "SELECT count(*) FROM shardid.legacy_ids WHERE tab = 'shard_0004.orders'::regclass AND shard = 4 AND legacy_below = 3001")" = 1 \
		"$what: the boundary of shard_0004.orders"
	expect "$(on "$p" -c "SELECT shardid.id_is_legacy(5), shardid.id_schema(5) IS NULL")" = "t|t" \
		"$what: id 5 is a legacy id and routes nowhere"
	expect "$(on "$p" -c "SELECT count(*) FILTER (WHERE shardid.id_schema(id) = 'shard_0004'), count(*) FILTER (WHERE shardid.id_is_legacy(id)) FROM shard_0004.orders")" = "10|3000" \
		"$what: new ids route to shard_0004, old ones are legacy"
	expect "$(on "$p" -c "SELECT count(*) FROM shardid.doctor() WHERE object LIKE 'shard_0004.%'")" = 0 \
		"$what: the doctor's rows about shard_0004"
}
holds "$a" "before the move"

out=$("$move" --shard 4 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1) || fail "offline move: $out"
echo "$out" | grep "legacy" | sed 's/^/  | /'
holds "$b" "after the offline move"
"$move" --shard 4 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes >/dev/null || fail "--drop-source failed"
expect "$(on "$a" -c "SELECT count(*) FROM shardid.legacy_ids")" = 0 "rows of legacy_ids on a after --drop-source"

out=$("$move" --shard 4 --from "$(conn "$b")" --to "$(conn "$a")" --online 2>&1) || fail "online move: $out"
holds "$a" "after the online move back"
"$move" --shard 4 --from "$(conn "$b")" --to "$(conn "$a")" --drop-source --yes >/dev/null || fail "--drop-source failed"
expect "$(on "$b" -c "SELECT count(*) FROM shardid.legacy_ids")" = 0 "rows of legacy_ids on b after --drop-source"
finish
