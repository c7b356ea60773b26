#!/usr/bin/env bash
# test/cluster/review_legacy_hostile.sh: a table owner on the --from server
# and the legacy boundaries a move carries.
#
# mallory owns two tables of shard 4 (CREATE on its schema, no superuser),
# which she converted, and whose boundaries (below 3001 and 201) a
# superuser checked and made count (trusted, as convert_table()'s hint
# says).  A
# move to b is killed once its hand-over is recorded; on a, the --from
# server, where the shard refuses writes but not her DDL, she then
#   - drops m_orders: at 397c869 the --resume read the boundaries of the
#     tables still there, cut over without the boundary of the copy of
#     m_orders, whose old ids 201 to 3000 then routed to shard 0's schema
#     on b (id_schema(1000) = shard_0000);
#   - renames m_two: at 397c869 the --resume failed on the missing
#     relation in the cutover, a message that does not say why.
# Now the --resume compares the tables of the copy with those of the --from
# server in the statement that reads the boundaries, names those gone and
# new, and the move is undone: the shard stays on a, nothing is recorded
# on b.
# Her code never runs as a superuser (her payload is in her default
# expressions and triggers of her tables).
. "$(dirname "$0")/../lib.sh" cluster
move_servers 398 2 || exit 1
export TMPDIR="$SHARDID_TMP/tmp"
mkdir -p "$TMPDIR"
shard0_servers "$a" "$b" || exit 1
for p in $a $b; do
	mallory_role "$p" || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0004;
GRANT USAGE, CREATE ON SCHEMA shard_0004 TO mallory;
SELECT shardid.register_shard(4, 'shard_0004');
SET ROLE mallory;
CREATE TABLE shard_0004.m_orders (id bigserial PRIMARY KEY, n int NOT NULL);
CREATE TABLE shard_0004.m_two (id bigserial PRIMARY KEY, n int NOT NULL);
INSERT INTO shard_0004.m_orders (n) SELECT g FROM generate_series(1, 3000) g;
INSERT INTO shard_0004.m_two (n) SELECT g FROM generate_series(1, 200) g;
SELECT shardid.convert_table('shard_0004.m_orders', 4);
SELECT shardid.convert_table('shard_0004.m_two', 4);
RESET ROLE;
UPDATE shardid.legacy_ids SET trusted = true;
SQL
mallory_mark "$a" "$b"

at_handover() {	# at_handover LABEL: a move a -> b, paused once the hand-over is recorded
	rm -f "$marker"
	SHARDID_MOVE_PAUSE_AT=handover SHARDID_MOVE_PAUSE_FILE=$marker \
		"$move" --shard 4 --from "$(conn "$a")" --to "$(conn "$b")" >"$SHARDID_TMP/move.log" 2>&1 &
	pid=$!
	wait_until "$1: the move paused" paused_or_gone
	[ -e "$marker" ] || fail "$1: the move did not pause: $(cat "$SHARDID_TMP/move.log")"
}
killed_at_handover() {	# killed_at_handover LABEL: a move a -> b, killed once the hand-over is recorded
	at_handover "$1"
	move_stop KILL
}
undone() {	# undone LABEL: the shard on a only, no boundary of shard 4 on b
	expect "$(on "$a" -c "SELECT shardid.shard_schema(4)")" = shard_0004 "$1: shard 4 on a"
	expect "$(on "$b" -c "SELECT shardid.shard_schema(4)")" = "" "$1: shard 4 on b"
	expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0004'")" = 0 "$1: the copy on b"
	expect "$(on "$b" -c "SELECT count(*) FROM shardid.legacy_ids")" = 0 "$1: boundaries on b"
	expect "$(on "$b" -c "SELECT shardid.id_schema(1000)")" = shard_0000 "$1: id 1000 on b (no boundary there, as before the move)"
	for p in $a $b; do
		expect "$(on "$p" -c "SELECT count(*) FROM shardid.move_journal WHERE phase NOT IN ('done', 'moved-away', 'dropped', 'aborted')")" = 0 \
			"$1: unfinished journal rows on $p"
	done
}

# she drops m_orders on a while the move lies killed after its hand-over
killed_at_handover "drop"
as_mallory "$a" -c "DROP TABLE shard_0004.m_orders" >/dev/null || exit 1
out=$("$move" --shard 4 --from "$(conn "$a")" --to "$(conn "$b")" --resume 2>&1)
expect "$?" = 1 "drop: exit status of the --resume"
echo "$out" | grep -qF 'shardid-move: error: the tables of schema "shard_0004" on the --from server are no longer those of the copy on the --to server (gone: m_orders): a table, a column or a partition was added, dropped or renamed after the copy began, whose rows, columns or legacy boundary (shardid.legacy_ids) the move would not carry; move the shard again' ||
	fail "drop: the refusal: $out"
echo "$out" | grep -q "the move was undone" || fail "drop: no word of the undo: $out"
undone "drop"

# she renames m_two on a while the move lies killed after its hand-over
killed_at_handover "rename"
as_mallory "$a" -c "ALTER TABLE shard_0004.m_two RENAME TO m_three" >/dev/null || exit 1
out=$("$move" --shard 4 --from "$(conn "$a")" --to "$(conn "$b")" --resume 2>&1)
expect "$?" = 1 "rename: exit status of the --resume"
echo "$out" | grep -qF 'shardid-move: error: the tables of schema "shard_0004" on the --from server are no longer those of the copy on the --to server (gone: m_two; new: m_three): a table, a column or a partition was added, dropped or renamed after the copy began, whose rows, columns or legacy boundary (shardid.legacy_ids) the move would not carry; move the shard again' ||
	fail "rename: the refusal: $out"
echo "$out" | grep -q "the move was undone" || fail "rename: no word of the undo: $out"
undone "rename"

# the name back; then, while the move pauses after its hand-over (the
# tables compared and the boundaries read), on b, the --to server, she
# renames the copy of m_two to m_gone and makes a new m_two of her own.
# The boundary goes with the copy, by the OID read with the names (at
# 99bd6b4 it went to her new table, by its name, and the copy of m_two,
# with its 200 old ids, had none).
as_mallory "$a" -c "ALTER TABLE shard_0004.m_three RENAME TO m_two" >/dev/null || exit 1
at_handover "swap on b"
as_mallory "$b" >/dev/null <<'SQL' || exit 1
ALTER TABLE shard_0004.m_two RENAME TO m_gone;
CREATE TABLE shard_0004.m_two (id bigint PRIMARY KEY);
SQL
move_go
expect "$?" = 0 "swap on b: the move ($(cat "$SHARDID_TMP/move.log"))"
expect "$(on "$b" -c "SELECT string_agg(format('%s/%s/%s', tab, legacy_below, trusted), ' ') FROM shardid.legacy_ids")" = "shard_0004.m_gone/201/t" \
	"swap on b: the boundaries on b after the move"
no_superuser_code "the moves" "$a" "$b"
finish
