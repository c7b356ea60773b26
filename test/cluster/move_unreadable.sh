#!/usr/bin/env bash
# test/cluster/move_unreadable.sh: a shard whose id column lost the index
# the floor reads it through (its primary key dropped after the
# registration) is refused before anything changes: the --to server's
# registration, at the cutover, would refuse it after the whole copy.
# Exit 0: the move fails naming the table, where the fix is and that nothing
# changed; the shard stays on the --from server, and after the fix it moves.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 600 2 || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null || exit 1
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0009;
CREATE TABLE shard_0009.t (id bigint PRIMARY KEY DEFAULT shardid.next_id(9, 1), n int);
SELECT shardid.register_shard(9, 'shard_0009');
INSERT INTO shard_0009.t (n) SELECT g FROM generate_series(1, 10) g;
ALTER TABLE shard_0009.t DROP CONSTRAINT t_pkey;
SQL
out=$("$move" --shard 9 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1)
status=$?
echo "$out" | sed 's/^/    /'
expect "$status" = 1 "the move of a shard with an id column the floor cannot read"
case "$out" in *'the --to server would refuse to register shard 9: the ids of column "id" of table shard_0009.t cannot be read: it is in no index'*'shardid.doctor(scan_rows => false)'*) ;;
*) fail "the refusal does not name the table and the fix" ;; esac
case "$out" in *"nothing was changed"*) ;; *) fail "the refusal does not say that nothing changed" ;; esac
expect "$(on "$a" -At -c "SELECT schema_name FROM shardid.shard_registry WHERE shard = 9")" = shard_0009 \
	"shard 9 still on the --from server"
expect "$(on "$b" -At -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0009'")" = 0 "no copy on the --to server"
expect "$(on "$a" -At -c "SELECT fix FROM shardid.doctor(scan_rows => false) WHERE object = 'shard_0009.t.id'")" = \
	"ALTER TABLE shard_0009.t ADD PRIMARY KEY (id);" "the doctor's fix"
on "$a" -c "ALTER TABLE shard_0009.t ADD PRIMARY KEY (id)" >/dev/null
"$move" --shard 9 --from "$(conn "$a")" --to "$(conn "$b")" >/dev/null 2>&1 || fail "the move after the fix"
expect "$(on "$b" -At -c "SELECT count(*) FROM shard_0009.t")" = 10 "rows on the --to server after the fix"
finish
