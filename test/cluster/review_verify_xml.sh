#!/usr/bin/env bash
# test/cluster/review_verify_xml.sh: the verification reads an xml value as
# it is stored, not as its output function writes it.
#
# xml keeps its input as given, XML declaration included, and x::text reads
# it back so; its output function (COPY, logical replication, ROW(...)::text)
# drops a declaration that says nothing but the version 1.0 and an encoding,
# with the newline after it.  So a move stores on the --to server
# '<doc/>' for '<?xml version="1.0" encoding="UTF-8"?>\n<doc/>', and
# shardid-move at 6629de7, whose hash read the output, ended such a move
# verified, exit status 0, x::text differing between the servers.  Now the
# hash reads xml (a domain over it, an array of either) as text: each
# offline move fails naming the table, and is undone.  Tables xa (xml),
# xb (xml[]), xc (a domain over xml) each hold one such value; after each
# failure the value is made plain on the --from server, and the next move
# names the next table.  Skipped on a server built without libxml.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 664 2 || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" -c "CREATE DOMAIN public.dx AS xml" >/dev/null || exit 1
done
if ! on "$a" -c "SELECT '<a/>'::xml" >/dev/null 2>&1; then
	echo "skipped: the server was built without libxml (no xml values)"
	exit 77
fi
decl='E'"'"'<?xml version="1.0" encoding="UTF-8"?>\n<doc/>'"'"
on "$a" >/dev/null <<SQL || exit 1
CREATE SCHEMA shard_0006;
SELECT shardid.register_shard(6, 'shard_0006');
CREATE TABLE shard_0006.xa (id bigint PRIMARY KEY, x xml);
INSERT INTO shard_0006.xa VALUES (1, $decl), (2, '<b/>');
CREATE TABLE shard_0006.xb (id bigint PRIMARY KEY, x xml[]);
INSERT INTO shard_0006.xb VALUES (1, ARRAY[$decl::xml]), (2, '{<b/>}');
CREATE TABLE shard_0006.xc (id bigint PRIMARY KEY, x public.dx);
INSERT INTO shard_0006.xc VALUES (1, $decl), (2, '<b/>');
SQL
expect "$(on "$a" -c "SELECT x FROM shard_0006.xa WHERE id = 1")" = "<doc/>" "the output drops the declaration (test of the test)"
for t in xa xb xc; do
	"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/$t.move" 2>&1
	move_differs "an xml declaration in table $t" "$a" "$b" "$SHARDID_TMP/$t.move" $? 6 $t 2
	plain="'<doc/>'"
	[ $t = xb ] && plain="'{<doc/>}'"
	on "$a" -c "UPDATE shard_0006.$t SET x = $plain WHERE id = 1" >/dev/null || fail "the value made plain in $t"
done
"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/plain.move" 2>&1 ||
	fail "the move of plain xml values: $(cat "$SHARDID_TMP/plain.move")"
expect "$(on "$b" -c "SELECT string_agg(x::text, ',' ORDER BY id) FROM shard_0006.xa")" = "<doc/>,<b/>" "the xml values moved"
finish
