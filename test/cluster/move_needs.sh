#!/usr/bin/env bash
# test/cluster/move_needs.sh: what the shard's ids need on the --to server
# is checked before anything changes, and a refusal says what and why.
#
# Server a runs shardid in strict mode (preloaded); b without shardid in
# shared_preload_libraries, which is session mode before PostgreSQL 17
# (strict mode through the shared memory registry from 17 on).
#   1. shard 6 made by add_shards() in strict mode: its DEFAULT is
#      shardid.next_id(6), without a sequence.  Into b in session mode
#      (PostgreSQL 15, 16) the move is refused, naming the table, the
#      column and what to do; nothing changes on either server.  shardid-move
#      1.3 moved it with exit status 0, and every INSERT on b then failed
#      ("needs shardid in shared_preload_libraries") while a refused writes:
#      the shard took writes nowhere.  The same for the set_id() trigger of
#      a table of the shard.  From 17 on b holds strict mode: the move runs
#      and b takes writes.
#   2. c with shardid 1.2, which keeps no legacy boundaries and lacks
#      functions of 1.3: shard 4, whose table was converted
#      (shardid.convert_table()) and another calls shardid.id_is_legacy()
#      in a CHECK, is refused up front, naming both; shardid-move 1.3
#      failed in pg_restore (or copied the shard and gave up at the cutover).
#   3. c with a shardid newer than this shardid-move knows: refused.
#   4. a column of type oid (or a domain over it) pointing at large objects
#      that b lacks: refused, naming it (4 runs before 3).
. "$(dirname "$0")/../lib.sh" cluster
move_servers 190 3 || exit 1
cluster_stop s0 && cluster_conf s0 "shared_preload_libraries = 'shardid'" && cluster_start s0 || exit 1
version=$(on "$a" -c "SHOW server_version_num")
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null || exit 1
done
on "$c" -c "CREATE EXTENSION shardid VERSION '1.2'" >/dev/null || exit 1
expect "$(on "$a" -c "SELECT mode FROM shardid.info()")" = strict "a's mode"
bmode=$(on "$b" -c "SELECT mode FROM shardid.info()")
expect "$bmode" = "$([ "$version" -ge 170000 ] && echo strict || echo session)" "b's mode"

on "$a" >/dev/null 2>&1 <<'SQL' || exit 1
CREATE SCHEMA app_template;
CREATE TABLE app_template.events (id bigint PRIMARY KEY, n int NOT NULL);
CALL shardid.add_shards('app_template', '{6}');
INSERT INTO shard_0006.events (n) SELECT g FROM generate_series(1, 20) g;
SQL
expect "$(on "$a" -c "SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef WHERE adrelid = 'shard_0006.events'::regclass")" \
	= "shardid.next_id(6)" "add_shards() in strict mode: the DEFAULT"

# unchanged WHAT SHARD [TO]: nothing of a refused move of SHARD on a or TO (b)
unchanged() {
	local to=${3:-$b}
	expect "$(on "$to" -c "SELECT count(*) FROM shardid.move_journal WHERE shard = $2")" = 0 "$1: journal rows on the --to server"
	expect "$(on "$to" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_000$2'")" = 0 "$1: schema on the --to server"
	expect "$(on "$a" -c "SELECT count(*) FROM pg_trigger WHERE tgname = 'shardid_moving' AND tgrelid::regclass::text LIKE 'shard_000$2.%'")" = 0 \
		"$1: freeze on a"
	expect "$(on "$a" -c "SELECT count(*) FROM shardid.move_journal WHERE shard = $2")" = 0 "$1: journal rows on a"
}

# 1. sequence-free ids into a server without strict mode
out=$("$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
if [ "$bmode" = session ]; then
	expect "$status" = 1 "strict-mode shard into session mode: exit status"
	for want in \
		"shardid-move: error: table shard_0006.events: the DEFAULT of column id calls shardid.next_id(integer), which makes ids without a sequence and needs strict mode, but shardid on the --to server runs in session mode (not in shared_preload_libraries): every INSERT into the table would fail there" \
		"shardid-move: hint: Add shardid to shared_preload_libraries on the --to server and restart it (strict mode; from PostgreSQL 17 on it needs no preloading), or give these tables a sequence (DEFAULT shardid.next_id(shard, nextval(...))) before the move." \
		"shardid-move: error: shard 6 cannot move as it is (see above); nothing was changed"; do
		echo "$out" | grep -qxF -- "$want" || fail "strict-mode shard into session mode: wanted \"$want\""
	done
	unchanged "strict-mode shard into session mode" 6
	expect "$(on "$a" -c "INSERT INTO shard_0006.events (n) VALUES (21) RETURNING shardid.id_shard(id)")" = 6 \
		"a takes writes after the refusal"
	# a trigger that makes ids without a sequence: the same refusal
	on "$a" >/dev/null <<'SQL' || exit 1
CREATE TABLE shard_0006.notes (id bigint PRIMARY KEY, body text);
CREATE TRIGGER shardid_set_id BEFORE INSERT ON shard_0006.notes FOR EACH ROW EXECUTE FUNCTION shardid.set_id(6, 'id');
SQL
	out=$("$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1)
	expect "$?" = 1 "set_id() trigger into session mode: exit status"
	want="shardid-move: error: table shard_0006.notes: trigger shardid_set_id calls shardid.set_id(), which makes ids without a sequence and needs strict mode, but shardid on the --to server runs in session mode (not in shared_preload_libraries): every INSERT into the table would fail there"
	echo "$out" | grep -qxF -- "$want" || fail "set_id() trigger into session mode: wanted \"$want\": $out"
	unchanged "set_id() trigger into session mode" 6
	on "$a" -c "DROP TABLE shard_0006.notes" || exit 1
	# b in strict mode: the move runs
	cluster_stop s1 && cluster_conf s1 "shared_preload_libraries = 'shardid'" && cluster_start s1 || exit 1
	out=$("$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1)
	expect "$?" = 0 "strict-mode shard into strict mode: exit status"
else
	expect "$status" = 0 "strict-mode shard into strict mode through the registry: exit status"
fi
expect "$(on "$b" -c "INSERT INTO shard_0006.events (n) VALUES (22) RETURNING shardid.id_shard(id)")" = 6 "b takes writes after the move"
expect "$(on "$b" -c "SELECT count(*) FROM shard_0006.events")" = "$([ "$bmode" = session ] && echo 22 || echo 21)" "rows on b"

# 2. c runs shardid 1.2: shard 4's converted table keeps a legacy boundary
# (1.3), and a CHECK calls shardid.id_is_legacy() (1.3)
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0004;
CREATE TABLE shard_0004.orders (id bigserial PRIMARY KEY, n int NOT NULL);
INSERT INTO shard_0004.orders (n) SELECT g FROM generate_series(1, 30) g;
SELECT shardid.register_shard(4, 'shard_0004');
SELECT shardid.convert_table('shard_0004.orders', 4);
CREATE TABLE shard_0004.fresh (id bigint PRIMARY KEY CHECK (NOT shardid.id_is_legacy(id)), n int);
SQL
out=$("$move" --shard 4 --from "$(conn "$a")" --to "$(conn "$c")" 2>&1)
expect "$?" = 1 "a shard that needs shardid 1.3 into 1.2: exit status"
echo "$out" | sed 's/^/  | /'
for want in \
	"shardid-move: error: function shardid.id_is_legacy(bigint) does not exist on the --to server, whose shardid is 1.2: constraint fresh_id_check on table shard_0004.fresh calls it; run ALTER EXTENSION shardid UPDATE there" \
	"shardid-move: error: schema \"shard_0004\" holds tables converted by shardid.convert_table() (shard_0004.orders), whose legacy boundaries the --to server's shardid 1.2 cannot keep (it needs 1.3 or later): run ALTER EXTENSION shardid UPDATE there first" \
	"shardid-move: error: shard 4 cannot move as it is (see above); nothing was changed"; do
	echo "$out" | grep -qxF -- "$want" || fail "shardid 1.2 on the --to server: wanted \"$want\""
done
unchanged "shardid 1.2 on the --to server" 4 "$c"

# 4. large objects: an oid column (or a domain over oid) pointing at large
# objects that b lacks is refused, naming the column, how many and the
# step; once they are copied to b under the same oids, the move runs and
# the copied oids read the same contents.  shardid-move up to 15230ef
# moved the shard with exit status 0, its oids pointing at nothing on b.
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0008;
CREATE DOMAIN shard_0008.lo_ref AS oid;
CREATE TABLE shard_0008.docs (id bigint PRIMARY KEY, body oid, att shard_0008.lo_ref, n oid);
INSERT INTO shard_0008.docs VALUES
    (1, lo_from_bytea(0, 'first'), NULL, 1), (2, lo_from_bytea(0, 'second'), lo_from_bytea(0, 'third'), 2),
    (3, NULL, NULL, 3);
SELECT shardid.register_shard(8, 'shard_0008');
SQL
body=$(on "$a" -c "SELECT min(body) FROM shard_0008.docs")
att=$(on "$a" -c "SELECT min(att) FROM shard_0008.docs")
out=$("$move" --shard 8 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1)
expect "$?" = 1 "large objects b lacks: exit status"
echo "$out" | sed 's/^/  | /'
for want in \
	"shardid-move: error: column att of table shard_0008.docs points at large objects that the --to server lacks (1, oid $att): a move carries no large object (pg_dump --schema leaves them out), and the copied oids would point at nothing" \
	"shardid-move: error: column body of table shard_0008.docs points at large objects that the --to server lacks (2, the first oid $body): a move carries no large object (pg_dump --schema leaves them out), and the copied oids would point at nothing" \
	"shardid-move: hint: Copy them to the --to server under the same oids first (there, SELECT pg_catalog.lo_from_bytea(oid, data) for each, with data from SELECT pg_catalog.lo_get(oid) on the --from server), or keep their contents in a bytea column; then move the shard again." \
	"shardid-move: error: shard 8 cannot move as it is (see above); nothing was changed"; do
	echo "$out" | grep -qxF -- "$want" || fail "large objects b lacks: wanted \"$want\""
done
unchanged "large objects b lacks" 8
on "$a" -c "SELECT format('SELECT lo_from_bytea(%s, %L::bytea);', oid, lo_get(oid)) FROM pg_largeobject_metadata" | on "$b" >/dev/null ||
	fail "copying the large objects to b"
"$move" --shard 8 --from "$(conn "$a")" --to "$(conn "$b")" >/dev/null 2>&1
expect "$?" = 0 "large objects copied to b first: exit status"
expect "$(on "$b" -c "SELECT string_agg(convert_from(lo_get(body), 'UTF8') || '/' || coalesce(convert_from(lo_get(att), 'UTF8'), '-'), ' ' ORDER BY id)
                      FROM shard_0008.docs WHERE body IS NOT NULL")" = "first/- second/third" "the large objects the moved oids point at on b"

# 3. a shardid newer than this shardid-move knows, on either server
mine=$("$move" --version | sed 's/.* //')
on "$c" -c "UPDATE pg_extension SET extversion = '9.9' WHERE extname = 'shardid'" >/dev/null || exit 1
out=$("$move" --shard 4 --from "$(conn "$a")" --to "$(conn "$c")" 2>&1)
expect "$?" = 1 "shardid 9.9 on the --to server: exit status"
expect "$out" = "shardid-move: error: shardid 9.9 on the --to server is newer than this shardid-move, which knows shardid up to $mine: use the shardid-move of shardid 9.9" \
	"shardid 9.9 on the --to server"
unchanged "shardid 9.9 on the --to server" 4 "$c"
finish
