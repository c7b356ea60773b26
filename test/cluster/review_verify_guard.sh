#!/usr/bin/env bash
# test/cluster/review_verify_guard.sh: KNOWN DEFECT, skipped: the owner of a
# table of the shard writes to it on the --from server after the
# verification, and the move ends verified without her row.
#
# The freeze is a statement trigger (shardid_moving) on each table, and
# PostgreSQL lets a table's owner ALTER TABLE ... DISABLE TRIGGER any
# trigger of her table that is not internal.  mallory (no superuser) owns
# shard_0006.t; the offline move pauses at the hand-over ("handover": the
# rows verified, the --from server recording that the --to server may take
# the shard over), she disables the guard on the --from server and inserts
# a row, and the move goes on: shardid-move at 6629de7 (and after this
# branch's fixes) exits 0, the shard moved, her row on the --from server
# only.  Before the verification the same write is seen (the rows differ);
# after the cutover it goes to a copy the shard has left.  Wanted: the
# hand-over refuses a table whose guard is disabled or whose rows changed
# since the verification (the move ends undone), or the guard is one its
# owner cannot disable.  SHARDID_KNOWN_DEFECTS=1 runs it.
if [ -z "${SHARDID_KNOWN_DEFECTS:-}" ]; then
	echo "skipped: known defect: a table's owner may disable the freeze's trigger on the --from server and write after the verification (test/cluster/review_verify_guard.sh tells)"
	exit 77
fi
. "$(dirname "$0")/../lib.sh" cluster
move_servers 680 2 || exit 1
marker=$SHARDID_TMP/paused
for p in $a $b; do on "$p" -c "CREATE EXTENSION shardid" -c "CREATE ROLE mallory LOGIN" >/dev/null || exit 1; done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0006;
GRANT USAGE ON SCHEMA shard_0006 TO mallory;
SELECT shardid.register_shard(6, 'shard_0006');
CREATE TABLE shard_0006.t (id bigint PRIMARY KEY, v text);
ALTER TABLE shard_0006.t OWNER TO mallory;
INSERT INTO shard_0006.t VALUES (1, 'one');
SQL
move_paused "guard disabled" handover "$SHARDID_TMP/move.log" --shard 6 --from "$(conn "$a")" --to "$(conn "$b")" &&
	{ as_mallory "$a" -c "ALTER TABLE shard_0006.t DISABLE TRIGGER shardid_moving" \
		-c "INSERT INTO shard_0006.t VALUES (2, 'two')" >/dev/null || fail "her write on the --from server (test of the test)"; }
move_go
status=$?
sed 's/^/  | /' "$SHARDID_TMP/move.log"
expect "$status" = 1 "the move whose --from server took her write after the verification: exit status"
expect "$(on "$a" -c "SELECT count(*) FROM shard_0006.t")" = "$(on "$b" -c "SELECT count(*) FROM shard_0006.t" 2>/dev/null || echo 0)" \
	"the rows on the --from server and on the --to server"
finish
