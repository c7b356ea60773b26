#!/usr/bin/env bash
# test/cluster/review_verify_sql_ascii.sh: a move between a database in
# SQL_ASCII and one in another encoding (LATIN1) is verified on the bytes
# it carried.
#
# Into or out of SQL_ASCII PostgreSQL converts nothing: the copy stores the
# bytes as they were.  shardid-move at 6629de7 hashed the UTF-8 of each
# row's text where the encodings differ, and convert_to(text, 'UTF8') of a
# byte above 127 in SQL_ASCII is an error: the move of an exact copy failed
# ("could not hash the rows of table ... invalid byte sequence for encoding
# "UTF8": 0xe9"), both ways, SQL_ASCII -> LATIN1 and LATIN1 -> SQL_ASCII.
# Now it hashes the bytes where either side is SQL_ASCII: both moves
# succeed, the byte 0xe9 ('é' in LATIN1) the same on both servers.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 668 2 || exit 1
for pe in "$a SQL_ASCII" "$b LATIN1"; do
	read -r p enc <<<"$pe"
	"$PG_BIN/psql" -X -q -d "host=$SHARDID_TMP port=$p user=postgres dbname=postgres" -c "DROP DATABASE app" \
		-c "CREATE DATABASE app ENCODING '$enc' LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0" || exit 1
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
SELECT shardid.register_shard(6, 'shard_0006');
CREATE TABLE shard_0006.t (id bigint PRIMARY KEY, v text);
INSERT INTO shard_0006.t VALUES (1, E'caf\351'), (2, 'plain');
SQL
bytes() { on "$1" -c "SELECT string_agg(convert_to(v, current_setting('server_encoding'))::text, ',' ORDER BY id) FROM shard_0006.t"; }
expect "$(bytes "$a")" = '\x636166e9,\x706c61696e' "the bytes on the SQL_ASCII server (test of the test)"
for dir in "$a $b SQL_ASCII to LATIN1" "$b $a LATIN1 to SQL_ASCII"; do
	read -r from to what <<<"$dir"
	"$move" --shard 6 --from "$(conn "$from")" --to "$(conn "$to")" --move-and-drop-source --yes >"$SHARDID_TMP/move.log" 2>&1
	status=$?
	sed 's/^/  | /' "$SHARDID_TMP/move.log"
	expect "$status" = 0 "the move $what: exit status"
	expect "$(bytes "$to")" = '\x636166e9,\x706c61696e' "the bytes after the move $what"
done
finish
