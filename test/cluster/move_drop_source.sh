#!/usr/bin/env bash
# test/cluster/move_drop_source.sh: --drop-source drops only the copy a
# finished move left; moving and dropping in one run takes
# --move-and-drop-source.
#
# shardid-move 1.3 took `--shard 5 ... --drop-source --yes` for a shard
# that had not moved (a mistyped cleanup) as a move: it moved the shard
# offline and dropped the source at once, and the application, still
# routing shard 5 to a, met a missing schema instead of the refusal
# "shard 5 has moved".
#   1. --drop-source of a shard that has not moved: refused, nothing
#      changes, the hint names --move-and-drop-source;
#   2. --drop-source with an option of a move (--online, --resume, ...) or
#      with --move-and-drop-source: a malformed command line (exit 2);
#   3. --move-and-drop-source: moves a -> b and drops a's copy;
#   4. a finished move b -> a, then --drop-source alone: drops b's copy;
#      once more: nothing left to drop.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 200 2 "${LOGICAL[@]}" || exit 1
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null || exit 1
done
events_shard "$a" 30 >/dev/null 2>&1 || exit 1

# 1. a mistyped cleanup: refused
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes 2>&1)
expect "$?" = 1 "--drop-source of a shard that has not moved: exit status"
expect "$out" = 'shardid-move: error: shard 5 has not moved away: it lives on the --from server (schema "shard_0005"), and --drop-source drops only the copy that a finished move left there
shardid-move: hint: To move the shard and then drop its copy on the --from server, use --move-and-drop-source.' \
	"--drop-source of a shard that has not moved: the refusal"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still registered on a"
expect "$(on "$a" -c "INSERT INTO shard_0005.events (n) VALUES (31) RETURNING shardid.id_shard(id)")" = 5 "a takes writes to shard 5"
expect "$(on "$b" -c "SELECT count(*) FROM shardid.move_journal") $(on "$a" -c "SELECT count(*) FROM shardid.move_journal")" = "0 0" \
	"journal rows after the refusal"
expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "schema on b after the refusal"

# 2. malformed: nothing contacted
usage() {	# usage WHAT WANT options...: exit status 2 and the message
	local what=$1 want=$2
	shift 2
	out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" "$@" 2>&1)
	expect "$?" = 2 "$what: exit status"
	expect "$(echo "$out" | head -1)" = "shardid-move: error: $want" "$what: the message"
}
for opt in --online --resume --max-lag=1MB --max-lag-seconds=1 --to-free=1GB; do
	usage "--drop-source $opt" "--drop-source only drops the copy a finished move left, so ${opt%%=*} does not apply; to move the shard and then drop its copy, use --move-and-drop-source" \
		--drop-source "$opt" --yes
done
usage "both drop options" "--drop-source and --move-and-drop-source cannot be used together" --drop-source --move-and-drop-source
usage "--move-and-drop-source --abort" "--abort drops nothing: it cannot be used with --move-and-drop-source" --move-and-drop-source --abort
"$move" --help | grep -q -- "--move-and-drop-source" || fail "--help does not name --move-and-drop-source"

# 3. moved and dropped in one run
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --move-and-drop-source --yes 2>&1) ||
	fail "--move-and-drop-source: $out"
echo "$out" | grep -qxF 'shardid-move: dropped schema "shard_0005" on the --from server' || fail "--move-and-drop-source: no drop: $out"
expect "$(on "$b" -c "SELECT shardid.shard_schema(5), count(*) FROM shard_0005.events GROUP BY 1")" = "shard_0005|31" "shard 5 on b"
expect "$(on "$a" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "a's copy dropped"

# 4. a finished move, its copy dropped later by --drop-source alone
"$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --online >/dev/null 2>&1 || fail "the move back"
expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 1 "b's copy kept after the move back"
out=$("$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --drop-source --yes 2>&1) || fail "--drop-source after the move back: $out"
expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0005'")" = 0 "b's copy dropped"
out=$("$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --drop-source --yes 2>&1)
expect "$?" = 1 "--drop-source once more: exit status"
expect "$out" = "shardid-move: error: the --from server records no finished move of shard 5 away from it: nothing to drop" \
	"--drop-source once more: the refusal"
expect "$(on "$a" -c "SELECT shardid.shard_schema(5), count(*) FROM shard_0005.events GROUP BY 1")" = "shard_0005|31" "shard 5 on a"
finish
