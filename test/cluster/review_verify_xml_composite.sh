#!/usr/bin/env bash
# test/cluster/review_verify_xml_composite.sh: KNOWN DEFECT, skipped: an xml
# attribute of a composite type loses its XML declaration in a move, and
# the verification does not see it.
#
# xml keeps its input as given (x::text reads it so), but its output drops
# a declaration that says only the version 1.0 and an encoding, with the
# newline after it; COPY and logical replication carry the output.  The
# hash reads a column of xml, of a domain over it or an array of either as
# text (review_verify_xml.sh), but a composite's attributes only through
# record_out(), which calls xml_out(): nothing casts an attribute.  So the
# offline move of table c (id, p public.xdoc), xdoc a composite type
# (id int, x xml), holding '<?xml version="1.0" encoding="UTF-8"?>\n<doc/>',
# ends verified, exit status 0, and ((p).x)::text reads '<doc/>' on the
# --to server (shardid-move at 6629de7 and after the fix of xml columns).
# Wanted: the move fails naming the table, and is undone.  A fix would
# hash each xml attribute reachable from a column as text (through
# composites, arrays of them, domains), or refuse such columns up front.
# SHARDID_KNOWN_DEFECTS=1 runs it.
if [ -z "${SHARDID_KNOWN_DEFECTS:-}" ]; then
	echo "skipped: known defect: an XML declaration in an xml attribute of a composite type is lost by the copy and not seen by the verification (test/cluster/review_verify_xml_composite.sh tells)"
	exit 77
fi
. "$(dirname "$0")/../lib.sh" cluster
move_servers 676 2 || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" -c "CREATE TYPE public.xdoc AS (id int, x xml)" >/dev/null || exit 1
done
if ! on "$a" -c "SELECT '<a/>'::xml" >/dev/null 2>&1; then
	echo "skipped: the server was built without libxml (no xml values)"
	exit 77
fi
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
SELECT shardid.register_shard(6, 'shard_0006');
CREATE TABLE shard_0006.c (id bigint PRIMARY KEY, p public.xdoc);
INSERT INTO shard_0006.c VALUES (1, ROW(1, E'<?xml version="1.0" encoding="UTF-8"?>\n<doc/>')::public.xdoc), (2, ROW(2, '<b/>')::public.xdoc);
SQL
"$move" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/move.log" 2>&1
move_differs "an xml declaration in a composite" "$a" "$b" "$SHARDID_TMP/move.log" $? 6 c 2
finish
