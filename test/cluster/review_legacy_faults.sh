#!/usr/bin/env bash
# test/cluster/review_legacy_faults.sh: the legacy boundary of a converted
# table through interrupted moves.
#
# Shard 4 holds shard_0004.orders, converted by shardid.convert_table() (its
# ids below 3001 are legacy ids), and shard_0004.plain, never converted;
# each server keeps the boundary of a converted table of its own shard 0.
# A seeded random walk (SEED in the environment repeats one; the seed is
# printed) moves shard 4 back and forth: each step picks offline or
# --online, a pause point of that method, SIGKILL (then --abort or
# --resume) or SIGTERM (the move undoes itself, or past the point of no
# return asks for --resume), and ends with --drop-source when the shard
# changed servers.  After each step:
#   - the server holding the shard keeps exactly one boundary of orders
#     (shard 4, below 3001, trusted), none of plain, id 5 is legacy;
#   - the other server keeps the boundary of orders exactly as long as it
#     keeps the schema (until --drop-source), then no row of it;
#   - each server keeps its own shard 0 boundary, and no row of
#     shardid.legacy_ids names a relation that does not exist.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 394 2 "${LOGICAL[@]}" "wal_retrieve_retry_interval = 200ms" || exit 1
export TMPDIR="$SHARDID_TMP/tmp"
mkdir -p "$TMPDIR"
shard0_servers "$a" "$b" 2>/dev/null || exit 1
for p in $a $b; do
	on "$p" >/dev/null 2>&1 <<'SQL' || exit 1
CREATE TABLE shard_0000.keep (id serial PRIMARY KEY);
INSERT INTO shard_0000.keep DEFAULT VALUES;
SELECT shardid.convert_table('shard_0000.keep', 0);
SQL
done
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0004;
CREATE TABLE shard_0004.orders (id bigserial PRIMARY KEY, n int NOT NULL);
CREATE TABLE shard_0004.plain (id bigint PRIMARY KEY, n int NOT NULL);
INSERT INTO shard_0004.orders (n) SELECT g FROM generate_series(1, 3000) g;
INSERT INTO shard_0004.plain VALUES (1, 1);
SELECT shardid.register_shard(4, 'shard_0004');
SELECT shardid.convert_table('shard_0004.orders', 4);
INSERT INTO shard_0004.orders (n) SELECT g FROM generate_series(1, 10) g;
SQL

seed=${SEED:-$RANDOM}
echo "SEED=$seed"
RANDOM=$seed
src=$a
dst=$b
name_of() { [ "$1" = "$a" ] && echo a || echo b; }
tool() { out=$("$move" --shard 4 --from "$(conn "$src")" --to "$(conn "$dst")" "$@" 2>&1); }

check() {	# check LABEL: the boundaries on both servers
	local label=$1 here there p
	if [ "$(on "$a" -c "SELECT shardid.shard_schema(4)")" = shard_0004 ]; then here=$a; there=$b; else here=$b; there=$a; fi
	expect "$(on "$here" -c "SELECT shardid.shard_schema(4)")" = shard_0004 "$label: shard 4 registered on $(name_of "$here")"
	expect "$(on "$there" -c "SELECT shardid.shard_schema(4)")" = "" "$label: shard 4 also registered on $(name_of "$there")"
	expect "$(on "$here" -c "SELECT string_agg(format('%s/%s/%s/%s', l.tab, l.shard, l.legacy_below, l.trusted), ' ' ORDER BY l.tab::text) FROM shardid.legacy_ids l")" \
		= "shard_0000.keep/0/2/t shard_0004.orders/4/3001/t" "$label: boundaries on $(name_of "$here"), which holds the shard"
	expect "$(on "$here" -c "SELECT shardid.id_is_legacy(5), shardid.id_schema(5) IS NULL")" = "t|t" "$label: id 5 on $(name_of "$here")"
	if [ "$(on "$there" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_0004'")" = 1 ]; then
		expect "$(on "$there" -c "SELECT string_agg(format('%s/%s/%s/%s', l.tab, l.shard, l.legacy_below, l.trusted), ' ' ORDER BY l.tab::text) FROM shardid.legacy_ids l")" \
			= "shard_0000.keep/0/2/t shard_0004.orders/4/3001/t" "$label: boundaries on $(name_of "$there"), which keeps the old copy"
	else
		expect "$(on "$there" -c "SELECT string_agg(l.tab::text, ' ') FROM shardid.legacy_ids l")" = "shard_0000.keep" \
			"$label: boundaries on $(name_of "$there"), without the schema"
	fi
	for p in $a $b; do
		expect "$(on "$p" -c "SELECT count(*) FROM shardid.legacy_ids l WHERE NOT EXISTS (SELECT FROM pg_class c WHERE c.oid = l.tab)")" = 0 \
			"$label: rows of dropped relations on $(name_of "$p")"
		expect "$(on "$p" -c "SELECT count(*) FROM shardid.move_journal WHERE phase NOT IN ('done', 'moved-away', 'dropped', 'aborted')")" = 0 \
			"$label: unfinished journal rows on $(name_of "$p")"
	done
	expect "$(on "$here" -c "SELECT count(*) FROM shard_0004.orders")" = 3010 "$label: rows of orders"
	[ "$here" = "$dst" ] && moved=1 || moved=0
}

offline=(freeze restore copy verify handover cutover)
online=(subscribe copy freeze catch-up verify handover cutover)
steps=${LEGACY_FAULT_STEPS:-12}
for ((i = 1; i <= steps; i++)); do
	if ((RANDOM % 2)); then method=offline; opt=""; phase=${offline[RANDOM % ${#offline[@]}]}
	else method=online; opt=--online; phase=${online[RANDOM % ${#online[@]}]}; fi
	sig=KILL; ((RANDOM % 3 == 0)) && sig=TERM
	follow=resume; ((RANDOM % 2)) && follow=abort
	[ "$sig" = TERM ] && follow=""
	label="$i $(name_of "$src")->$(name_of "$dst") $method/$phase/$sig${follow:+/$follow}"
	rm -f "$marker"
	SHARDID_MOVE_PAUSE_AT=$phase SHARDID_MOVE_PAUSE_FILE=$marker \
		"$move" --shard 4 --from "$(conn "$src")" --to "$(conn "$dst")" $opt >"$SHARDID_TMP/move.log" 2>&1 &
	pid=$!
	wait_until "$label: the move paused or ended" paused_or_gone
	[ -e "$marker" ] || { fail "$label: the move did not pause: $(cat "$SHARDID_TMP/move.log")"; break; }
	move_stop "$sig"
	status=$?
	if [ "$sig" = TERM ]; then
		if [ "$status" = 3 ]; then tool --resume || fail "$label: --resume: $out"; fi
	elif [ "$follow" = abort ]; then
		if ! tool --abort; then
			[ "$phase" = cutover ] || fail "$label: --abort: $out"
			tool --resume || fail "$label: --resume after the refused --abort: $out"
		fi
	else
		tool --resume || fail "$label: --resume: $out"
	fi
	check "$label"
	if [ "$moved" = 1 ]; then
		tool --drop-source --yes || fail "$label: --drop-source: $out"
		t=$src; src=$dst; dst=$t
		check "$label, --drop-source"
	fi
	echo "ok $label"
	[ "$script_failed" = 0 ] || break
done
finish
