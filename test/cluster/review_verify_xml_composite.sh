#!/usr/bin/env bash
# test/cluster/review_verify_xml_composite.sh: the verification reads the
# xml attributes of a composite column as they are stored.
#
# xml keeps its input as given (x::text reads it so), but its output drops
# a declaration that says only the version 1.0 and an encoding, with the
# newline after it; COPY and logical replication carry the output.  The
# hash reads a column of xml, of a domain over it or an array of either as
# text (review_verify_xml.sh), but a composite's text is record_out()'s,
# which reads each attribute by its output.  Table c holds a column of
# composite type public.xdoc (id int, x xml); table c2 a column of a domain
# over public.xouter (inner_ public.xdoc, xs xml[], "Q x" public.dx), the
# declaration deeper down.  shardid-move at 6629de7 (and after the fix of
# xml columns) ended the offline move verified, exit status 0, the
# declaration gone on the --to server.  Now the hash reads each xml
# attribute reached through composites and domains by its path, as text:
# each move fails naming the table, and is undone; after each failure the
# value is made plain on the --from server, and the last move succeeds.
# (An xml attribute of a composite in an array is still read by its
# output.)  Skipped on a server built without libxml.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 676 2 || exit 1
for p in $a $b; do
	on "$p" >/dev/null <<'SQL' || exit 1
CREATE EXTENSION shardid;
CREATE DOMAIN public.dx AS xml;
CREATE TYPE public.xdoc AS (id int, x xml);
CREATE TYPE public.xouter AS (inner_ public.xdoc, xs xml[], "Q x" public.dx);
CREATE DOMAIN public.dxouter AS public.xouter;
SQL
done
if ! on "$a" -c "SELECT '<a/>'::xml" >/dev/null 2>&1; then
	echo "skipped: the server was built without libxml (no xml values)"
	exit 77
fi
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
SELECT shardid.register_shard(6, 'shard_0006');
CREATE TABLE shard_0006.c (id bigint PRIMARY KEY, p public.xdoc);
INSERT INTO shard_0006.c VALUES (1, ROW(1, E'<?xml version="1.0" encoding="UTF-8"?>\n<doc/>')::public.xdoc),
    (2, ROW(2, '<b/>')::public.xdoc);
CREATE TABLE shard_0006.c2 (id bigint PRIMARY KEY, q public.dxouter);
INSERT INTO shard_0006.c2 VALUES (1, ROW(ROW(1, '<a/>'), '{<b/>}', E'<?xml version="1.0"?>\n<doc/>')::public.xouter),
    (2, ROW(ROW(2, '<a/>'), '{<b/>}', '<c/>')::public.xouter);
SQL
expect "$(on "$a" -c "SELECT ((p).x)::text FROM shard_0006.c WHERE id = 1" | tail -1)" = "<doc/>" "the declaration stored (test of the test)"
for tp in "c UPDATE shard_0006.c SET p = ROW(1, '<doc/>')::public.xdoc WHERE id = 1" \
	"c2 UPDATE shard_0006.c2 SET q = ROW(ROW(1, '<a/>'), '{<b/>}', '<doc/>')::public.xouter WHERE id = 1"; do
	read -r t plain <<<"$tp"
	"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/$t.move" 2>&1
	move_differs "an xml declaration in a composite of table $t" "$a" "$b" "$SHARDID_TMP/$t.move" $? 6 "$t" 2
	on "$a" -c "$plain" >/dev/null || fail "the value made plain in $t"
done
"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/plain.move" 2>&1 ||
	fail "the move of plain xml values: $(cat "$SHARDID_TMP/plain.move")"
expect "$(on "$b" -c "SELECT string_agg(((q).\"Q x\")::text, ',' ORDER BY id) FROM shard_0006.c2")" = "<doc/>,<c/>" "the xml values moved"
finish
