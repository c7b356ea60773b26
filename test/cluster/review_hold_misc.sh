#!/usr/bin/env bash
# test/cluster/review_hold_misc.sh: what the hold of an online move into
# PostgreSQL 15 (cfeee6a) withstood; this passes on cfeee6a too.  Since the
# owner of the schema keeps USAGE on it while it is held, her refused DDL
# fails on the table's ownership rather than on the schema, and a schema
# whose privileges were the default comes back with them written out
# ({owner=UC/owner}: the same privileges, and the same pg_dump).
#   1. names with quotes and capitals (role, schema, table, column), a
#      table of another role (bob) in the schema, privileges of the table,
#      of a column, with grant option and granted on by bob, of the schema:
#      killed (SIGKILL) at "verify", between the hold and the give-back,
#      --resume gives every owner and privilege back as on the --from
#      server;
#   2. killed at "copy" or at "catch-up" (the subscription applies, the
#      tables held): --resume gives them back, --abort drops the copy;
#   3. her CREATE TRIGGER and DROP TABLE, queued behind the hold's lock
#      while its transaction waits (for the move journal, which the test
#      locks): refused once it commits (her rights are checked again after
#      the lock); a CREATE TABLE of hers in the schema, which needs no lock
#      of the hold's, gets in before it commits, and the cutover, which
#      finds a table in the copy that the --from server has not, undoes the
#      move; the next move succeeds.
# On PostgreSQL 16+ nothing is held: skipped.
. "$(dirname "$0")/../lib.sh" cluster
move_servers 354 2 "${LOGICAL[@]}" || exit 1
version=$(on "$a" -c "SHOW server_version_num") || exit 1
if [ "$version" -ge 160000 ]; then
	echo "skipped: PostgreSQL $version applies a subscription's changes as the table's owner"
	exit 77
fi
as_mal() { local p=$1; shift; "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -v VERBOSITY=terse -d "$(conn "$p") user=Mal\"lory" "$@"; }
marker=$SHARDID_TMP/paused
count_on_b() { "$PG_BIN/psql" -X -At -d "$(conn "$b")" -c "SELECT count(*) FROM pg_locks WHERE $1"; }
for p in $a $b; do
	on "$p" >/dev/null <<'SQL' || exit 1
CREATE EXTENSION shardid;
CREATE ROLE "Mal""lory" LOGIN;
CREATE ROLE bob;
CREATE SCHEMA mal AUTHORIZATION "Mal""lory";
SET ROLE "Mal""lory";
CREATE FUNCTION mal.trg() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$;
SQL
done
owners() {	# owners PORT SCHEMA: owners and privileges of the schema, its tables and their columns
	on "$1" -c "SELECT n.nspowner::regrole || ' ' || coalesce(n.nspacl::text, '-') || ' ' ||
	              string_agg(c.relname || ':' || c.relowner::regrole || ':' || coalesce(c.relacl::text, '-') || ':' ||
	                coalesce((SELECT string_agg(a.attname || '=' || a.attacl::text, ',') FROM pg_attribute a
	                          WHERE a.attrelid = c.oid AND a.attacl IS NOT NULL), ''), ' ' ORDER BY c.relname)
	            FROM pg_namespace n JOIN pg_class c ON c.relnamespace = n.oid
	            WHERE n.nspname = '$2' AND c.relkind = 'r' GROUP BY n.nspowner, n.nspacl::text"
}
paused_move() {	# paused_move SHARD POINT LOG
	rm -f "$marker"
	SHARDID_MOVE_PAUSE_AT=$2 SHARDID_MOVE_PAUSE_FILE=$marker \
		"$move" --shard "$1" --from "$(conn "$a")" --to "$(conn "$b")" --online --yes >"$3" 2>&1 &
	pid=$!
	wait_until "shard $1 paused at $2" test -e "$marker" || { kill "$pid"; cat "$3"; finish; }
}
killed() {	# killed: the paused move, by SIGKILL
	move_stop 9
}

# 1. names, privileges, killed at "verify", --resume
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA "Shard ""5" AUTHORIZATION "Mal""lory";
SELECT shardid.register_shard(5, 'Shard "5');
SET ROLE "Mal""lory";
CREATE TABLE "Shard ""5"."M ""x" (id bigint PRIMARY KEY, "V" text);
CREATE TABLE "Shard ""5"."lower" (id bigint PRIMARY KEY);
GRANT SELECT ON "Shard ""5"."M ""x" TO PUBLIC;
GRANT UPDATE ("V") ON "Shard ""5"."M ""x" TO bob;
GRANT INSERT ON "Shard ""5"."M ""x" TO bob WITH GRANT OPTION;
GRANT USAGE ON SCHEMA "Shard ""5" TO bob;
INSERT INTO "Shard ""5"."M ""x" SELECT g, 'v' || g FROM generate_series(1, 100) g;
RESET ROLE;
ALTER TABLE "Shard ""5"."lower" OWNER TO bob;
SET ROLE bob;
GRANT INSERT ON "Shard ""5"."M ""x" TO PUBLIC;
SQL
src=$(owners "$a" 'Shard "5')
paused_move 5 verify "$SHARDID_TMP/move5.log"
expect "$(owners "$b" 'Shard "5')" = 'postgres {postgres=UC/postgres,bob=U/postgres,"\"Mal\"\"lory\"=U/postgres"} M "x:postgres:{postgres=arwdDxt/postgres,=r/postgres,bob=a*/postgres,=a/bob}:V={bob=w/postgres} lower:postgres:-:' \
	"held at verify (test of the test)"
killed
"$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --online --resume >>"$SHARDID_TMP/move5.log" 2>&1
status=$?
expect "$status" = 0 "--resume after a SIGKILL at verify: exit status"
[ "$status" = 0 ] || cat "$SHARDID_TMP/move5.log"
expect "$(owners "$b" 'Shard "5')" = "$src" "owners and privileges after --resume"

# 2. killed while the subscription applies
shard=5
for what in resume abort; do
	for point in copy catch-up; do
		shard=$((shard + 1))
		on "$a" >/dev/null <<SQL || exit 1
CREATE SCHEMA shard_000$shard AUTHORIZATION "Mal""lory";
SELECT shardid.register_shard($shard, 'shard_000$shard');
SET ROLE "Mal""lory";
CREATE TABLE shard_000$shard.m (id bigint PRIMARY KEY, v text);
INSERT INTO shard_000$shard.m SELECT g, 'v' || g FROM generate_series(1, 100) g;
SQL
		paused_move $shard $point "$SHARDID_TMP/move$shard.log"
		expect "$(owners "$b" shard_000$shard)" = 'postgres {postgres=UC/postgres,"\"Mal\"\"lory\"=U/postgres"} m:postgres:-:' "shard $shard held at $point (test of the test)"
		killed
		"$move" --shard $shard --from "$(conn "$a")" --to "$(conn "$b")" --online --$what >>"$SHARDID_TMP/move$shard.log" 2>&1
		status=$?
		expect "$status" = 0 "--$what after a SIGKILL at $point: exit status"
		[ "$status" = 0 ] || cat "$SHARDID_TMP/move$shard.log"
		if [ $what = resume ]; then
			expect "$(owners "$b" shard_000$shard)" = '"Mal""lory" {"\"Mal\"\"lory\"=UC/\"Mal\"\"lory\""} m:"Mal""lory":-:' "owners after --resume from $point"
		else
			expect "$(on "$b" -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'shard_000$shard'")" = 0 \
				"the copy after --abort from $point"
		fi
	done
done

# 3. her DDL queued behind the hold
on "$a" >/dev/null <<'SQL' || exit 1
CREATE SCHEMA shard_0010 AUTHORIZATION "Mal""lory";
SELECT shardid.register_shard(10, 'shard_0010');
SET ROLE "Mal""lory";
CREATE TABLE shard_0010.m (id bigint PRIMARY KEY, v text);
INSERT INTO shard_0010.m SELECT g, 'v' || g FROM generate_series(1, 100) g;
SQL
rm -f "$SHARDID_TMP/release"
paused_move 10 subscribe "$SHARDID_TMP/move10.log"
on "$b" -c "DO \$\$ BEGIN LOCK TABLE shardid.move_journal IN EXCLUSIVE MODE;
	WHILE pg_stat_file('$SHARDID_TMP/release', true) IS NULL LOOP PERFORM pg_sleep(0.05); END LOOP; END \$\$" &
locker=$!
wait_until "the journal locked" eval '[ "$(count_on_b "granted AND relation = '"'shardid.move_journal'::regclass AND mode = 'ExclusiveLock'"'")" = 1 ]'
rm -f "$marker"
wait_until "the hold waits for the journal" eval '[ "$(count_on_b "NOT granted AND relation = '"'shardid.move_journal'::regclass"'")" -ge 1 ]'
as_mal "$b" -c "CREATE TRIGGER t BEFORE INSERT ON shard_0010.m FOR EACH ROW EXECUTE FUNCTION mal.trg()" >"$SHARDID_TMP/her1.log" 2>&1 &
her1=$!
as_mal "$b" -c "DROP TABLE shard_0010.m" >"$SHARDID_TMP/her2.log" 2>&1 &
her2=$!
as_mal "$b" -c "CREATE TABLE shard_0010.x (id bigint)" || fail "her CREATE TABLE while the hold waits"
wait_until "her DDL waits for the hold" eval '[ "$(count_on_b "NOT granted AND relation = '"'shard_0010.m'::regclass"'")" = 2 ]'
touch "$SHARDID_TMP/release"
wait "$locker"
wait "$her1"
expect "$?:$(cat "$SHARDID_TMP/her1.log")" = "1:ERROR:  permission denied for table m" "her CREATE TRIGGER queued behind the hold"
wait "$her2"
expect "$?:$(cat "$SHARDID_TMP/her2.log")" = "1:ERROR:  must be owner of table m" "her DROP TABLE queued behind the hold"
wait "$pid"
status=$?
pid=""
# her table x, made in the copy, is not on the --from server: the cutover
# finds the copy's tables changed and the move is undone (from b7aab64;
# the move used to cut over with x in the shard on b)
expect "$status" = 1 "the move with her DDL queued: exit status"
grep -qF 'are no longer those of the copy on the --to server (gone: x)' "$SHARDID_TMP/move10.log" ||
	fail "the move with her DDL queued: no refusal naming x: $(cat "$SHARDID_TMP/move10.log")"
grep -q "the move was undone" "$SHARDID_TMP/move10.log" || fail "the move with her DDL queued: not undone"
"$move" --shard 10 --from "$(conn "$a")" --to "$(conn "$b")" --online >>"$SHARDID_TMP/move10.log" 2>&1
status=$?
expect "$status" = 0 "the move again: exit status"
[ "$status" = 0 ] || cat "$SHARDID_TMP/move10.log"
expect "$(owners "$b" shard_0010)" = '"Mal""lory" {"\"Mal\"\"lory\"=UC/\"Mal\"\"lory\""} m:"Mal""lory":-:' "owners after the move"
expect "$(on "$b" -c "SELECT count(*) FROM pg_trigger WHERE tgrelid = 'shard_0010.m'::regclass AND NOT tgisinternal")" = 0 "triggers of m"
finish
