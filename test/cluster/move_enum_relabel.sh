#!/usr/bin/env bash
# test/cluster/move_enum_relabel.sh: an online move verifies the text of the
# rows it hashed before the freeze even when an enum's labels change after
# those hashes.
#
# An enum's text is its label, which the enum's owner (mallory, no
# superuser, on either server) may rename at any time without touching a
# row: the rows hashed before the freeze then read otherwise in it, and no
# row version tells, so the freeze's part of the hashes (the rows written or
# deleted since) left them out.  Shard 6 holds a table of postgres's with a
# column of her enum mallory.mood; each move pauses once the rows are hashed
# before the freeze ("hashed"), and she renames a label:
#   1. on the --to server ('good' to 'evil'): the move ended verified, the
#      rows reading 'good' on the --from server and 'evil' on the --to
#      server (shardid-move at fa44c71, also into PostgreSQL 15, which
#      fa44c71 began to hash before the freeze);
#   2. on the --from server, swapping 'good' and 'bad': the same.
# Now the move hashes in the freeze every row of a table whose enums' labels
# changed since the hashes before it, on either server: each move fails
# naming the table, and is undone.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 640 2 "${LOGICAL[@]}" || exit 1
marker=$SHARDID_TMP/paused
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	as_mallory "$p" -c "CREATE TYPE mallory.mood AS ENUM ('good', 'bad')" \
		-c "GRANT USAGE ON SCHEMA mallory TO PUBLIC" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
SELECT shardid.register_shard(6, 'shard_0006');
CREATE TABLE shard_0006.s (id bigint PRIMARY KEY, e mallory.mood);
INSERT INTO shard_0006.s SELECT g, (CASE WHEN g % 3 = 0 THEN 'bad' ELSE 'good' END)::mallory.mood FROM generate_series(1, 30) g;
SQL
relabeled() {	# relabeled LABEL PORT SQL: the move, her SQL on server PORT once the rows are hashed
	local label=$1 port=$2 sql=$3 log=$SHARDID_TMP/$2.move status
	move_paused "$label" hashed "$log" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" --online --yes &&
		as_mallory "$port" -c "$sql" >/dev/null
	move_go
	status=$?
	move_differs "$label" "$a" "$b" "$log" "$status" 6 s 30
}
relabeled "a label renamed on the --to server" "$b" "ALTER TYPE mallory.mood RENAME VALUE 'good' TO 'evil'"
as_mallory "$b" -c "ALTER TYPE mallory.mood RENAME VALUE 'evil' TO 'good'" >/dev/null || fail "her label back on the --to server"
relabeled "labels swapped on the --from server" "$a" "ALTER TYPE mallory.mood RENAME VALUE 'good' TO 'x';
ALTER TYPE mallory.mood RENAME VALUE 'bad' TO 'good'; ALTER TYPE mallory.mood RENAME VALUE 'x' TO 'bad'"
expect "$(on "$a" -c "SELECT string_agg(e::text, ',' ORDER BY id) FROM shard_0006.s WHERE id <= 3")" = "bad,bad,good" \
	"the rows on the --from server (test of the test: the labels swapped)"
no_superuser_code "the moves" "$a" "$b"
finish
