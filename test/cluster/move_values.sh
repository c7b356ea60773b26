#!/usr/bin/env bash
# test/cluster/move_values.sh: shardid-move carries every value exactly and
# verifies the copy by content.
#
# Server a's database app takes lc_monetary es_AR.UTF-8 from its defaults
# (a locale made here with localedef, found by the server through LOCPATH),
# b's the C locale of initdb; the owner of both databases, no superuser,
# sets array_nulls = off for them.  Shard 5 holds a table of text arrays with
# NULL elements and money amounts below 1,000, with such values in its
# DEFAULTs too.  shardid-move 1.3 moved it with exit status 0, the NULL
# elements turned into the string 'NULL' and every amount multiplied by 100
# (es_AR writes $ 12,34 and C reads 1234), offline (its own sessions,
# pg_dump, pg_restore) and online (the walsender, the subscription's apply),
# and verified row counts only.
#   1. offline a -> b: the rows and DEFAULTs as on a;
#   2. online b -> a: the rows as on b;
#   3. a row changed on the copy (offline, in the pause before the
#      verification): the move fails naming the table, undone;
#   4. online, a row changed on the copy after the hashes before the freeze,
#      then one changed before them: the same;
#   5. online, a transaction keeping a row locked (FOR UPDATE) across the
#      freeze: the freeze's part of the hashes cannot hold the tables, every
#      row is hashed in the freeze (a warning; into PostgreSQL 15, which
#      takes no hashes before the freeze, none), and the move succeeds.
. "$(dirname "$0")/../lib.sh" cluster

# the locale, built where the servers find it (no root needed: a directory
# of this script's, which the servers read through LOCPATH); skipped only
# where it cannot be made: no localedef, or no definition of es_AR or of
# UTF-8 to make it from (Debian's package locales, which tools/deps.sh
# installs; glibc's localedef warns, and exits 1, on some definitions it
# still makes)
locales="$SHARDID_TMP/locales"
mkdir -p "$locales"
if ! localedef -i es_AR -f UTF-8 "$locales/es_AR.UTF-8" >"$SHARDID_TMP/localedef.log" 2>&1 &&
	[ ! -e "$locales/es_AR.UTF-8/LC_MONETARY" ]; then
	i18n=${I18NPATH:-/usr/share/i18n}
	if ! command -v localedef >/dev/null || [ ! -e "$i18n/locales/es_AR" ] ||
		! ls "$i18n/charmaps/UTF-8" "$i18n/charmaps/UTF-8.gz" 2>/dev/null | grep -q .; then
		echo "skipped: the locale es_AR.UTF-8 cannot be made here: it needs localedef and $i18n/locales/es_AR and $i18n/charmaps/UTF-8 (Debian package locales: tools/deps.sh)"
		exit 77
	fi
	fail "localedef could not make es_AR.UTF-8: $(tail -3 "$SHARDID_TMP/localedef.log")"
	finish
fi
chmod -R a+rX "$locales"

move_servers 486 2 "${LOGICAL[@]}" || exit 1
cluster_stop s0 && cluster_start s0 "LOCPATH=$locales" || exit 1
for p in $a $b; do
	on "$p" >/dev/null <<'SQL' || exit 1
CREATE EXTENSION shardid;
CREATE ROLE app_owner LOGIN;
ALTER DATABASE app OWNER TO app_owner;
SQL
	q -d "$(conn "$p") user=app_owner" -c "ALTER DATABASE app SET array_nulls = off" || exit 1
done
on "$a" -c "ALTER DATABASE app SET lc_monetary = 'es_AR.UTF-8'" || exit 1
expect "$(on "$a" -c "SELECT 12.34::money")" = '$ 12,34' "money on a, in es_AR (test of the test)"
expect "$(on "$b" -c "SELECT 12.34::money")" = '$12.34' "money on b, in C (test of the test)"
expect "$(on "$b" -c "SELECT ('{x,NULL}'::text[])[2] IS NULL")" = f "array_nulls off on b (test of the test)"

on "$a" >/dev/null <<'SQL' || exit 1
SET array_nulls = on;
SET lc_monetary = 'C';
CREATE SCHEMA app_template;
CREATE TABLE app_template.vals (id bigint PRIMARY KEY, tags text[] DEFAULT '{d,NULL}',
    amount money DEFAULT '5.25'::money, note text);
SELECT count(*) FROM shardid.create_shards('app_template', ARRAY[5]);
INSERT INTO shard_0005.vals (tags, amount, note)
VALUES ('{a,NULL,b}', 12.34, 'one'), ('{NULL}', 999.5, 'two'), (DEFAULT, DEFAULT, 'three'), ('{c}', 0.07, 'four');
SQL

# what a server holds, read alike on both: ids in order of note
content() {
	PGOPTIONS="-c lc_monetary=C -c array_nulls=on" on "$1" -c "
	    SELECT string_agg(pg_catalog.format('%s %s %s %s', note, tags, tags[2] IS NULL, amount), '; ' ORDER BY note)
	    FROM shard_0005.vals"
}
defaults() {
	PGOPTIONS="-c lc_monetary=C -c array_nulls=on" on "$1" -c "
	    SELECT string_agg(pg_catalog.pg_get_expr(d.adbin, d.adrelid), ', ' ORDER BY d.adnum)
	    FROM pg_catalog.pg_attrdef d WHERE d.adrelid = 'shard_0005.vals'::regclass AND d.adnum > 1"
}
want="four {c} t \$0.07; one {a,NULL,b} t \$12.34; three {d,NULL} t \$5.25; two {NULL} t \$999.50"
expect "$(content "$a")" = "$want" "the rows on a before the moves"
want_defaults="'{d,NULL}'::text[], '\$5.25'::money"
expect "$(defaults "$a")" = "$want_defaults" "the DEFAULTs on a before the moves"

# 1. offline a -> b
out=$("$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 0 "offline move a -> b: exit status"
expect "$(content "$b")" = "$want" "offline move a -> b: the rows on b"
expect "$(defaults "$b")" = "$want_defaults" "offline move a -> b: the DEFAULTs on b"
echo "$out" | grep -q "^shardid-move: verified: the rows of 1 table (4 rows, by the hashes of their contents)" ||
	fail "offline move a -> b: the verification by content not reported"
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes >/dev/null ||
	fail "--drop-source on a"

# 2. online b -> a
out=$("$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --online 2>&1)
status=$?
echo "$out" | sed 's/^/  | /'
expect "$status" = 0 "online move b -> a: exit status"
expect "$(content "$a")" = "$want" "online move b -> a: the rows on a"
expect "$(on "$a" -c "SELECT count(*) FROM pg_catalog.pg_roles WHERE rolname LIKE 'shardid_move_%'")" = 0 \
	"online move b -> a: the role of its subscription left on a"
"$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --drop-source --yes >/dev/null ||
	fail "--drop-source on b"

# a move that fails on the verification: its message, nothing left but the
# shard writable on the --from server
mismatch() {	# mismatch LABEL FROM TO LOG STATUS
	local label=$1 from=$2
	move_differs "$@" 5 vals 4
	on "$from" -c "INSERT INTO shard_0005.vals (note) VALUES ('$label'); DELETE FROM shard_0005.vals WHERE note = '$label'" >/dev/null ||
		fail "$label: shard 5 refuses writes on the --from server"
}
# one row of the copy changed, bypassing its freeze
change_copy() {
	on "$1" -c "SET session_replication_role = replica; UPDATE shard_0005.vals SET note = 'changed' WHERE note = '$2'" >/dev/null
}

# 3. offline a -> b, a row changed on b before the verification
move_paused "offline, changed" verify "$SHARDID_TMP/changed.move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" &&
	change_copy "$b" one
move_go
mismatch "offline move with a row changed on the copy" "$a" "$b" "$SHARDID_TMP/changed.move" $?

# 4. online a -> b, a row changed on b in the freeze, after the hashes taken
# before it; then one changed before them, once the initial copy is done
move_paused "online, changed in the freeze" freeze "$SHARDID_TMP/changed-freeze.move" \
	--shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online &&
	change_copy "$b" two
move_go
mismatch "online move with a row changed on the copy in the freeze" "$a" "$b" "$SHARDID_TMP/changed-freeze.move" $?
synced() { [ "$(on "$b" -c "SELECT count(*) FROM pg_subscription_rel WHERE srsubstate <> 'r'")" = 0 ] &&
	[ "$(on "$b" -c "SELECT count(*) FROM shard_0005.vals")" = 4 ]; }
move_paused "online, changed before" copy "$SHARDID_TMP/changed-before.move" \
	--shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online &&
	wait_until "the initial copy on b" synced && change_copy "$b" three
move_go
mismatch "online move with a row changed on the copy before the freeze" "$a" "$b" "$SHARDID_TMP/changed-before.move" $?
expect "$(on "$b" -c "SELECT count(*) FROM pg_catalog.pg_roles WHERE rolname LIKE 'shardid_move_%'")" = 0 \
	"failed online moves: the role of their subscription left on b"
expect "$(content "$a")" = "$want" "the rows on a after the failed moves"

# 5. online a -> b, a row kept locked on a from after the initial copy on
mkfifo "$SHARDID_TMP/locker"
"$PG_BIN/psql" -X -q -At -d "$(conn "$a")" <"$SHARDID_TMP/locker" >"$SHARDID_TMP/locker.out" 2>&1 &
move_paused "online, a row locked" copy "$SHARDID_TMP/locked.move" \
	--shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online &&
	wait_until "the initial copy on b" synced
exec 7>"$SHARDID_TMP/locker"
echo "BEGIN; SELECT note FROM shard_0005.vals WHERE note = 'one' FOR UPDATE;" >&7
wait_until "the row locked" eval '[ "$(on "$a" -c "SELECT count(*) FROM pg_locks WHERE relation = '"'"'shard_0005.vals'"'"'::regclass AND mode = '"'"'RowShareLock'"'"'")" = 1 ]'
move_go
status=$?
echo "COMMIT;" >&7
exec 7>&-
sed 's/^/  | /' "$SHARDID_TMP/locked.move"
expect "$status" = 0 "online move with a row locked across the freeze: exit status"
locked_warning="shardid-move: warning: a transaction on the --from server holds rows of shard 5 locked, or a table of it in a mode that conflicts with EXCLUSIVE: hashing every row in the freeze, as no hash taken before it can be used"
# into PostgreSQL 15 too, whose copy the move's superuser holds while the
# subscription applies: its rows are hashed before the freeze as that role
grep -qxF "$locked_warning" "$SHARDID_TMP/locked.move" ||
	fail "online move with a row locked across the freeze: the warning"
expect "$(content "$b")" = "$want" "online move with a row locked across the freeze: the rows on b"
wait
finish
