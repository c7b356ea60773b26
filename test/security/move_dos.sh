#!/usr/bin/env bash
# test/security/move_dos.sh: what other roles can set or take does not stop
# a move, or a refusal names what did.
#
# mallory owns database app on both servers (no superuser), and owns tables
# of shard 5.  shardid-move 1.3:
#   - with her ALTER DATABASE app SET default_transaction_read_only = on,
#     refused every move with "another shardid-move is working on shard 5
#     ... (its session there: a session holding the 1.2 advisory lock)":
#     its move lock could not be written;
#   - with idle_session_timeout (and, from PostgreSQL 17, transaction_timeout)
#     as the database's default, lost its sessions in the middle of a step;
#   - with her ALTER DATABASE app SET role = mallory, ran every session of
#     the move as mallory, and failed (refused on 15230ef: "permission
#     denied for table move_journal" or the like);
#   - when her partial index's predicate took the name of the next helper
#     function of the counts (pg_temp.shardid_move_as_owner_N, made in the
#     move's own session), failed with "function ... already exists" (so did
#     the hashes of the verification by content, pg_temp.shardid_move_hash_N,
#     before they went to a schema of their own too).
# Now the move sets what it needs on every session of its own, of pg_dump
# and pg_restore and of the subscription (read-only off, timeouts off), and
# makes its helpers in a schema of its own with a random name.
#   1. both databases read-only by default, with short idle and
#      transaction timeouts, exit_on_error and role mallory: the offline
#      move a -> b runs,
#      and the online move back;
#   2. her predicate takes the helper names of 1.3 (and of the hashes in
#      pg_temp): the offline move runs;
#   3. a refusal of the move lock that is no other run's names its cause;
#   4. an online move whose initial copy never ends because a CHECK fails
#      on the --to server names the table and its owner (a superuser's
#      table: online into PostgreSQL 15 hers would be refused up front).
. "$(dirname "$0")/../lib.sh" cluster
move_servers 430 2 "${LOGICAL[@]}" || exit 1
# the test's own sessions are writable and never time out; the moves' are not told
version=$(on "$a" -c "SHOW server_version_num")
PGOPTIONS="-c default_transaction_read_only=off -c idle_session_timeout=0 -c exit_on_error=off -c statement_timeout=0"
PGOPTIONS+=" -c lock_timeout=0 -c idle_in_transaction_session_timeout=0 -c role=none"
[ "$version" -ge 170000 ] && PGOPTIONS+=" -c transaction_timeout=0"
export PGOPTIONS
for p in $a $b; do
	on "$p" -c "CREATE EXTENSION shardid" >/dev/null && mallory_role "$p" || exit 1
	on "$p" -c "ALTER DATABASE app OWNER TO mallory" >/dev/null || exit 1
done
events_shard "$a" 2000 mallory >/dev/null 2>&1 || exit 1
as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE TABLE shard_0005.a_hers (id bigint PRIMARY KEY, n integer);
INSERT INTO shard_0005.a_hers SELECT g, g FROM generate_series(1, 100) g;
SQL

# her database defaults on both servers, as the database's owner
hostile() {	# hostile SET|RESET
	local p s
	for p in $a $b; do
		for s in "default_transaction_read_only = on" "idle_session_timeout = 20" "exit_on_error = on" \
			"statement_timeout = 20" "lock_timeout = 20" "idle_in_transaction_session_timeout = 20" "role = mallory"; do
			[ "$1" = RESET ] && s=${s%% =*}
			as_mallory "$p" -c "ALTER DATABASE app $1 $s" >/dev/null || exit 1
		done
		[ "$version" -ge 170000 ] && { as_mallory "$p" -c "ALTER DATABASE app $1 transaction_timeout$([ "$1" = SET ] && echo " = 100")" >/dev/null || exit 1; }
	done
}
hostile SET
expect "$(env -u PGOPTIONS "$PG_BIN/psql" -X -At -d "$(conn "$b")" -c "SHOW default_transaction_read_only")" = on \
	"a new session on b is read-only (test of the test)"
expect "$(env -u PGOPTIONS "$PG_BIN/psql" -X -At -d "$(conn "$b")" -c "SELECT current_user")" = mallory \
	"a superuser's new session on b runs as mallory (test of the test)"

# 1. offline and online, with her defaults
moved() {	# moved WHAT FROM TO [options...]: the move of shard 5, then --drop-source
	local what=$1 from=$2 to=$3
	shift 3
	out=$(env -u PGOPTIONS "$move" --shard 5 --from "$(conn "$from")" --to "$(conn "$to")" "$@" 2>&1)
	expect "$?" = 0 "$what: exit status"
	echo "$out" | grep "error\|warning" | sed 's/^/  | /'
	out=$(env -u PGOPTIONS "$move" --shard 5 --from "$(conn "$from")" --to "$(conn "$to")" --drop-source --yes 2>&1)
	expect "$?" = 0 "$what, --drop-source: exit status"
	echo "$out" | grep "error\|warning" | sed 's/^/  | /'
}
moved "offline move with her defaults" "$a" "$b"
expect "$(on "$b" -c "SELECT shardid.shard_schema(5), (SELECT count(*) FROM shard_0005.events)")" = "shard_0005|2000" "offline: shard 5 on b"
moved "online move with her defaults" "$b" "$a" --online
expect "$(on "$a" -c "SELECT shardid.shard_schema(5), (SELECT count(*) FROM shard_0005.events)")" = "shard_0005|2000" "online: shard 5 on a"
expect "$(on "$b" -c "SELECT count(*) FROM pg_subscription") $(on "$a" -c "SELECT count(*) FROM pg_replication_slots")" = "0 0" \
	"online: replication left"
hostile RESET

# 2. her predicate takes the names of 1.3's helper functions in the counting session
as_mallory "$a" >/dev/null <<'SQL' || exit 1
CREATE FUNCTION shard_0005.squat() RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 0..20 LOOP
        BEGIN
            EXECUTE pg_catalog.format('CREATE FUNCTION pg_temp.shardid_move_as_owner_%s(pg_catalog.text) '
                'RETURNS pg_catalog.text LANGUAGE sql AS %L', i, 'SELECT NULL::pg_catalog.text');
        EXCEPTION WHEN OTHERS THEN NULL;
        END;
        BEGIN
            EXECUTE pg_catalog.format('CREATE FUNCTION pg_temp.shardid_move_hash_%s(pg_catalog.text) '
                'RETURNS pg_catalog.text LANGUAGE sql AS %L', i, 'SELECT NULL::pg_catalog.text');
        EXCEPTION WHEN OTHERS THEN NULL;
        END;
    END LOOP;
    RETURN true;
END $$;
CREATE FUNCTION shard_0005.squatting(integer) RETURNS boolean IMMUTABLE LANGUAGE plpgsql AS $$
BEGIN RETURN shard_0005.squat(); END $$;
CREATE INDEX ON shard_0005.a_hers (n) WHERE shard_0005.squatting(1);
SQL
out=$(env -u PGOPTIONS "$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" 2>&1)
expect "$?" = 0 "offline move with the helpers' names of 1.3 taken: exit status"
echo "$out" | grep "error" | sed "s/^/  | /"
expect "$(on "$b" -c "SELECT count(*) FROM shard_0005.a_hers")" = 100 "rows of a_hers on b"
for p in $a $b; do
	expect "$(on "$p" -c "SELECT count(*) FROM pg_namespace WHERE nspname LIKE 'shardid\_move\_%'")" = 0 "the move's schemas left on $p"
done

# 3. the move lock of shard 5 cannot be written on b: the refusal says why
on "$b" -c "ALTER TABLE shardid.move_locks ADD CONSTRAINT no_shard_5 CHECK (shard <> 5) NOT VALID" >/dev/null || exit 1
out=$(env -u PGOPTIONS "$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" 2>&1)
expect "$?" = 1 "move lock not writable: exit status"
expect "$out" = 'shardid-move: error: could not take the move lock of shard 5 on the --from server: new row for relation "move_locks" violates check constraint "no_shard_5"; nothing was changed' \
	"move lock not writable: the refusal"
on "$b" -c "ALTER TABLE shardid.move_locks DROP CONSTRAINT no_shard_5" >/dev/null || exit 1

# 4. a CHECK fails on a, the --to server: the initial copy never ends
out=$(env -u PGOPTIONS "$move" --shard 5 --from "$(conn "$a")" --to "$(conn "$b")" --drop-source --yes 2>&1) ||
	fail "--drop-source of a's copy: $out"
on "$b" -c "DROP INDEX shard_0005.a_hers_n_idx" >/dev/null || exit 1
on "$b" >/dev/null <<SQL || exit 1
CREATE FUNCTION shard_0005.picky(integer) RETURNS boolean LANGUAGE plpgsql AS \$\$
BEGIN
    IF pg_catalog.current_setting('port') OPERATOR(pg_catalog.=) '$a' THEN RAISE EXCEPTION 'not here'; END IF;
    RETURN true;
END \$\$;
CREATE TABLE shard_0005.a_picky (id bigint PRIMARY KEY, n integer CHECK (shard_0005.picky(n)));
INSERT INTO shard_0005.a_picky VALUES (1, 1);
SQL
out=$(env -u PGOPTIONS "$move" --shard 5 --from "$(conn "$b")" --to "$(conn "$a")" --online --timeout=5 2>&1)
expect "$?" = 1 "online move whose initial copy fails: exit status"
echo "$out" | grep "error" | sed "s/^/  | /"
echo "$out" | grep -q "^shardid-move: error: the initial copy did not finish within 5 s (.*): .*; not synchronized yet: shard_0005.a_picky (of role postgres)$" ||
	fail "online move whose initial copy fails: the table and its owner not named"
expect "$(on "$b" -c "SELECT shardid.shard_schema(5)")" = shard_0005 "shard 5 still on b"
no_superuser_code "the moves" "$a" "$b"
finish
